"""Performance-latency functions p(latency) (NoMora §"Functions of application performance").

A function is 1 (the baseline, normalised) up to a threshold and a polynomial in the latency above it
(cubic for Memcached, STRADS and TensorFlow; linear for Spark). Latencies are in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
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

    @classmethod
    def from_published(cls, name: str, threshold_us: float, coefficients: tuple[float, ...]) -> PerfLatencyFunction:
        """The paper's form: a polynomial in the latency l itself (lowest order first), shifted to l - threshold."""
        shifted = np.polynomial.Polynomial(coefficients)(np.polynomial.Polynomial([threshold_us, 1.0]))
        return cls(name, float(threshold_us), tuple(float(c) for c in shifted.coef))

    def __call__(self, latency_us: float) -> float:
        """Expected normalised application performance at ``latency_us``, in [PERF_FLOOR, 1]."""
        return float(self.values(np.array([latency_us]))[0])

    def values(self, latency_us: np.ndarray) -> np.ndarray:
        """p(l) for an array of latencies (µs), each in [PERF_FLOOR, 1]."""
        excess = np.asarray(latency_us, dtype=float) - self.threshold_us
        value = np.clip(np.polynomial.polynomial.polyval(excess, self.coefficients), PERF_FLOOR, 1.0)
        return np.where(excess <= 0, 1.0, value)


def arc_cost(perf: float) -> int:
    """Integer arc cost: 1/p rounded to two significant digits, times 100 (NoMora eq. 1-2)."""
    if not perf > 0:
        raise InputError(f"performance must be > 0, got {perf}", field="perf")
    return int(arc_costs(np.array([perf]))[0])


def arc_costs(perf: np.ndarray) -> np.ndarray:
    """arc_cost of an array of performances in (0, 1] (1/p to two significant digits, x100; eq. 1-2)."""
    inverse = 1.0 / np.asarray(perf, dtype=float)
    digits = 1 - np.floor(np.log10(inverse)).astype(np.int64)  # 1/p = d.d x 10^(1 - digits)
    return (np.round(inverse * 10.0 ** digits) * 10.0 ** (2 - digits)).round().astype(np.int64)


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


# The preprint's fits (001, eqs. 2-5): polynomials in the latency x (µs) above the published thresholds.
PUBLISHED = {
    "memcached": PerfLatencyFunction.from_published("memcached", 40.0, (1.067, -3.093e-3, 4.084e-6, -1.898e-9)),
    "strads": PerfLatencyFunction.from_published("strads", 20.0, (1.009, -2.095e-3, 2.571e-6, -1.232e-9)),
    "tensorflow": PerfLatencyFunction.from_published("tensorflow", 40.0, (1.005, -5.146e-4, 5.837e-7, -3.46e-10)),
    "spark": PerfLatencyFunction.from_published("spark", 200.0, (1.0199, -1.161e-4)),
}
