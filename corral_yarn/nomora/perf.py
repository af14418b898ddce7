"""Performance-latency functions p(latency) (NoMora §"Functions of application performance").

A function is 1 (the baseline, normalised) up to a threshold and a polynomial in the latency above it
(cubic for Memcached, STRADS and TensorFlow; linear for Spark). Latencies are in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import floor, log10

import numpy as np

from corral_yarn.errors import InputError

# Lowest performance a function returns, so that the arc cost 1/p stays finite.
PERF_FLOOR = 0.01


@dataclass(frozen=True)
class PerfLatencyFunction:
    """p(l) = 1 for l <= threshold_us, else clip(sum_k coefficients[k] * (l - threshold_us)^k)."""

    name: str
    threshold_us: float
    coefficients: tuple[float, ...]  # lowest order first, in the shifted latency (l - threshold_us)

    def __call__(self, latency_us: float) -> float:
        """Expected normalised application performance at ``latency_us``, in [PERF_FLOOR, 1]."""
        excess = latency_us - self.threshold_us
        if excess <= 0:
            return 1.0
        value = float(np.polynomial.polynomial.polyval(excess, self.coefficients))
        return min(1.0, max(PERF_FLOOR, value))


def arc_cost(perf: float) -> int:
    """Integer arc cost: 1/p rounded to two significant digits, times 100 (NoMora eq. 1-2)."""
    if not perf > 0:
        raise InputError(f"performance must be > 0, got {perf}", field="perf")
    inverse = 1.0 / perf
    digits = 1 - floor(log10(inverse))
    return int(round(round(inverse, digits) * 100))


def fit(name: str, points: list[tuple[float, float]], threshold_us: float, degree: int = 3) -> PerfLatencyFunction:
    """Fit a user's measured (latency_us, normalised perf) points above ``threshold_us`` (least squares)."""
    if threshold_us < 0:
        raise InputError(f"must be >= 0, got {threshold_us}", field="threshold_us")
    for index, (latency, perf) in enumerate(points):
        if latency < 0:
            raise InputError(f"latency must be >= 0, got {latency}", field=f"points[{index}].latency_us")
        if not 0 < perf <= 1.5:
            raise InputError(f"normalised performance must be in (0, 1.5], got {perf}", field=f"points[{index}].perf")
    above = [(lat - threshold_us, perf) for lat, perf in points if lat > threshold_us]
    if len(above) < degree + 1:
        raise InputError(f"need at least {degree + 1} points above the threshold to fit degree {degree}, got {len(above)}",
                         field="points")
    # The fit is anchored at p(threshold) = 1 by fitting p - 1 without a constant term.
    x = np.array([a for a, _ in above])
    y = np.array([p - 1.0 for _, p in above])
    design = np.vstack([x ** k for k in range(1, degree + 1)]).T
    solution, *_ = np.linalg.lstsq(design, y, rcond=None)
    return PerfLatencyFunction(name, float(threshold_us), (1.0, *(float(c) for c in solution)))


# Thresholds as published (40 µs Memcached, 20 µs STRADS, 40 µs TensorFlow; Spark insensitive up to 1 ms).
# The paper publishes no coefficients: these are chosen (docs/nomora.md), decreasing monotonically.
PUBLISHED = {
    "memcached": PerfLatencyFunction("memcached", 40.0, (1.0, -2.0e-3, 1.0e-6, -2.0e-10)),
    "strads": PerfLatencyFunction("strads", 20.0, (1.0, -1.5e-3, 5.0e-7, -1.0e-10)),
    "tensorflow": PerfLatencyFunction("tensorflow", 40.0, (1.0, -1.0e-3, 3.0e-7, -5.0e-11)),
    "spark": PerfLatencyFunction("spark", 1000.0, (1.0, -1.0e-4)),
}
