"""Variance-response curves V_s(r) (thesis §3.2.2, §5.3.1): a stage's latency variance when a fraction
r of its requests is reissued, learned offline from its latency samples, and their convex hulls.

A reissue policy with timeout T starts a second copy of a request still running at T and keeps the
faster answer [65]: latency X if X <= T, else min(X, T + X') with X' an independent sample of the
same stage (§5.4.1). Reissuing a fraction r sets T to the (1 - r) quantile of the stage's latencies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

CURVE_POINTS = 64
RESAMPLES = 2  # independent reissue draws averaged per point; they smooth V(r) without changing it


@dataclass(frozen=True)
class VarianceCurve:
    """V(r) measured at fractions ``r`` (0 first), and its lower convex hull, non-increasing (§3.2.2)."""

    r: NDArray[np.float64]
    v: NDArray[np.float64]
    hull_r: NDArray[np.float64]
    hull_v: NDArray[np.float64]

    @classmethod
    def of(cls, r: NDArray[np.float64], v: NDArray[np.float64]) -> VarianceCurve:
        hull_r, hull_v = lower_hull(r, v)
        return cls(np.asarray(r, np.float64), np.asarray(v, np.float64), hull_r, hull_v)

    def __call__(self, r: float | NDArray[np.float64]) -> NDArray[np.float64]:
        """V̄(r): the hull interpolated linearly, flat past its last point."""
        return np.interp(r, self.hull_r, self.hull_v)


def lower_hull(r: NDArray[np.float64], v: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The lower convex hull of the points (r, v), cut at its minimum so that it never rises (§3.2.2)."""
    lowest_at: dict[float, float] = {}
    for x, y in zip(map(float, r), map(float, v)):
        lowest_at[x] = min(y, lowest_at.get(x, y))
    hull: list[tuple[float, float]] = []
    for point in sorted(lowest_at.items()):
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], point) <= 0:
            hull.pop()
        hull.append(point)
    lowest = min(range(len(hull)), key=lambda k: (hull[k][1], hull[k][0]))
    kept = np.array(hull[:lowest + 1])
    return kept[:, 0], kept[:, 1]


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def timeout(ordered: NDArray[np.float64], r: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """T = the (1 - r) quantile of a stage's latencies, sorted ascending in ``ordered``, so that a fraction
    r of requests is reissued (§3.2.2); inf (never) at r = 0, 0 (at once) at r = 1."""
    r = np.asarray(r, dtype=np.float64)
    index = np.clip(np.ceil((1.0 - r) * ordered.size).astype(int) - 1, 0, ordered.size - 1)
    return np.where(r <= 0, np.inf, np.where(r >= 1, 0.0, ordered[index]))


def reissued(latency: NDArray[np.float64], reissue: NDArray[np.float64], timeout_: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """Latency with a reissue of the requests past ``timeout_``: X if X <= T else min(X, T + X') ([65], §5.3.1)."""
    return np.where(latency > timeout_, np.minimum(latency, timeout_ + reissue), latency)


def reissue_curve(samples: NDArray[np.float64], rng: np.random.Generator, points: int = CURVE_POINTS,
                  resamples: int = RESAMPLES) -> VarianceCurve:
    """V_s(r) by offline simulation on one stage's past latencies, at r = 0 and ``points`` fractions up to 1 (§3.2.2)."""
    x = np.asarray(samples, dtype=np.float64)
    ordered = np.sort(x)
    counts = np.unique(np.round(np.geomspace(1, x.size, points)).astype(int))
    thresholds = np.concatenate([[np.inf], ordered[x.size - counts[:-1] - 1], [0.0]])  # reissue the k slowest; all at r = 1
    draws = [rng.permutation(x) for _ in range(resamples)]
    r = np.array([np.mean(x > t) for t in thresholds])
    v = np.array([np.mean([reissued(x, d, t).var() for d in draws]) for t in thresholds])
    r[-1] = 1.0
    return VarianceCurve.of(r, v)
