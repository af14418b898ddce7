"""Partial answers at fan-out stages (thesis §3.2.3, §5.3.2): stop waiting for the last responders.

A fan-out stage sends each query to n responders and aggregates their answers. Terminating a query
at time tau returns the answers in by then; if the best answer is equally likely at any responder,
the query's expected utility loss is the fraction of responders still out, and a stage's utility loss
is the mean over queries (§3.2.3). Kwiken's policy stops a query at min(T_c, t_p + T_d), t_p the time
its first p fraction of responders answered (§5.3.2). For a loss budget r it sweeps (p, T_d), sets
T_c so the training loss meets r, and keeps the triple of smallest latency variance: V(r).

The published baselines (§5.4.3): wait-for-fraction (stop when a fraction b answered), fixed-timeout
(stop at T_cutoff) and time-then-fraction (stop once T' passed and a fraction alpha answered), each
with its parameters fitted to the same loss budget on the same training queries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.kwiken.curves import VarianceCurve

FRACTIONS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)  # the sweep of p and alpha
WAITS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, np.inf)  # T_d and T' as multiples of the median stage latency
LOSSES = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03)
POLICIES = ("kwiken", "wait-for-fraction", "fixed-timeout", "time-then-fraction")


@dataclass(frozen=True)
class Responders:
    """A fan-out stage's queries: each row the sorted latencies of its n responders; ``flat`` the rows laid
    end to end, each shifted past the one before, so one search counts the answers of every query."""

    ordered: NDArray[np.float64]
    flat: NDArray[np.float64]
    offsets: NDArray[np.float64]

    @classmethod
    def of(cls, latency: NDArray[np.floating]) -> Responders:
        ordered = np.sort(np.asarray(latency, dtype=np.float64), axis=1)
        offsets = np.arange(ordered.shape[0]) * (float(ordered[:, -1].max()) + 1.0)
        return cls(ordered, (ordered + offsets[:, None]).ravel(), offsets)

    @property
    def n(self) -> int:
        return self.ordered.shape[1]

    @property
    def full(self) -> NDArray[np.float64]:
        """The stage's latency without partial answers: its slowest responder."""
        return self.ordered[:, -1]

    def at_fraction(self, p: float) -> NDArray[np.float64]:
        """t_p per query: when the first ceil(p n) responders have answered."""
        return self.ordered[:, max(0, int(np.ceil(p * self.n - 1e-9)) - 1)]

    def outcome(self, stop: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        """(latency per query, utility loss) when each query stops at ``stop``."""
        stop = np.minimum(stop, self.full)
        q, n = self.ordered.shape
        answered = np.searchsorted(self.flat, stop + self.offsets, side="right") - np.arange(q) * n
        return stop, float(np.mean(1.0 - answered / n))


Rule = Callable[[Responders, float], NDArray[np.float64]]  # (queries, its last parameter) -> stop times


def _fit_last(queries: Responders, rule: Rule, budget: float) -> tuple[float, NDArray[np.float64]] | None:
    """The smallest last parameter (a time) whose loss is within ``budget``, by bisection over the stage
    latencies, and the latencies it gives; None if even the largest misses the budget."""
    candidates = np.unique(queries.full)

    def run(k: int) -> tuple[NDArray[np.float64], float]:
        return queries.outcome(rule(queries, float(candidates[k])))

    if run(candidates.size - 1)[1] > budget:
        return None
    low, high = -1, candidates.size - 1  # loss(low) > budget >= loss(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if run(mid)[1] <= budget else (mid, high)
    return float(candidates[high]), run(high)[0]


@dataclass(frozen=True)
class Termination:
    """One fitted policy: its name and parameters, and when it stops a query."""

    policy: str
    params: tuple[float, ...]

    def stop(self, queries: Responders) -> NDArray[np.float64]:
        if self.policy == "none":
            return queries.full
        if self.policy == "kwiken":
            p, wait, cutoff = self.params
            return np.minimum(cutoff, queries.at_fraction(p) + wait)
        if self.policy == "wait-for-fraction":
            return queries.at_fraction(self.params[0])
        if self.policy == "fixed-timeout":
            return np.full(queries.ordered.shape[0], self.params[0])
        alpha, wait = self.params  # time-then-fraction
        return np.maximum(wait, queries.at_fraction(alpha))


NONE = Termination("none", ())


def _best(fits: list[tuple[Termination, NDArray[np.float64]]]) -> Termination:
    return min(fits, key=lambda f: float(f[1].var()))[0] if fits else NONE


def fit(queries: Responders, policy: str, budget: float) -> Termination:
    """``policy``'s parameters meeting utility loss ``budget`` on these (training) queries, of least variance."""
    scale = float(np.median(queries.full))
    if policy == "kwiken":  # sweep (p, T_d); T_c by bisection (§5.3.2)
        fits = []
        for p in FRACTIONS:
            for wait in WAITS:
                found = _fit_last(queries, lambda q, c, p=p, w=wait * scale: np.minimum(c, q.at_fraction(p) + w), budget)
                if found:
                    fits.append((Termination("kwiken", (p, wait * scale, found[0])), found[1]))
        return _best(fits)
    if policy == "wait-for-fraction":  # the fewest responders whose loss meets the budget
        k = queries.n - int(np.floor(budget * queries.n + 1e-9))
        return Termination("wait-for-fraction", (k / queries.n,))
    if policy == "fixed-timeout":
        found = _fit_last(queries, lambda q, t: np.full(q.ordered.shape[0], t), budget)
        return Termination("fixed-timeout", (found[0],)) if found else NONE
    if policy == "time-then-fraction":  # sweep alpha; T' by bisection
        fits = []
        for alpha in FRACTIONS:
            found = _fit_last(queries, lambda q, t, a=alpha: np.maximum(t, q.at_fraction(a)), budget)
            if found:
                fits.append((Termination("time-then-fraction", (alpha, found[0])), found[1]))
        return _best(fits)
    raise ValueError(f"unknown partial-answer policy {policy!r}; one of {POLICIES}")


def partial_curve(queries: Responders, losses: tuple[float, ...] = LOSSES) -> tuple[VarianceCurve, dict[float, Termination]]:
    """V(r) of Kwiken's policy on these queries at r = 0 and each loss budget, and the policy at each (§5.3.2)."""
    fitted = {r: fit(queries, "kwiken", r) for r in losses}
    v = [float(queries.full.var())] + [float(queries.outcome(fitted[r].stop(queries))[0].var()) for r in losses]
    return VarianceCurve.of(np.array([0.0, *losses]), np.array(v)), fitted
