"""Apportioning a budget B across stages (thesis §5.2, §5.3.1, §5.4.2): SumVar and the baselines.

Every function returns r, the fraction of requests each stage may reissue (or answer partially),
with sum_s c_s r_s <= B for costs c normalised to sum 1 (eq. 5.3) and 0 <= r_s <= 1.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from corral_yarn.kwiken.curves import VarianceCurve

GAMMA = 4  # the budget is cut into gamma N chunks, gamma in [2, 4] (§5.3.1)

Fractions = NDArray[np.float64]


def normalised(costs: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    c = np.asarray(costs, dtype=np.float64)
    return c / c.sum()


def _step(r: float, cost: float, delta: float, top: float = 1.0) -> tuple[float, float]:
    """(new r, cost spent) for spending up to ``delta`` on a stage at ``r`` (r never passes ``top``, at most 1)."""
    new = min(top, r + delta / cost)
    return new, (new - r) * cost


def sumvar(curves: Sequence[VarianceCurve], costs: Sequence[float], budget: float, gamma: int = GAMMA,
           weights: Sequence[float] | None = None) -> Fractions:
    """SumVar (§5.3.1): from r = 0, give each chunk delta = B / (gamma N) to the stage whose weighted
    V̄_s drops most per unit of cost, argmax_s w_s (V̄_s(r_s) - V̄_s(r_s + delta / c_s)); a heap keeps the
    gains, so the whole run is O(N log N). It stops early when no stage gains any more. A stage's r never passes the
    end of its curve's hull (V̄_s is flat there: a chunk beyond it buys nothing, and a curve learned up to some r
    says nothing past it)."""
    c = normalised(costs)
    w = np.ones(len(c)) if weights is None else np.asarray(weights, dtype=np.float64)
    top = [min(1.0, float(curve.hull_r[-1])) for curve in curves]
    r = np.zeros(len(c))
    if budget <= 0:
        return r
    delta = budget / (gamma * len(c))

    def gain(s: int) -> float:  # drop of w_s V̄_s per unit cost of the next chunk
        new, spent = _step(r[s], c[s], delta, top[s])
        return w[s] * float(curves[s](r[s]) - curves[s](new)) / spent if spent > 0 else 0.0

    heap = [(-gain(s), s) for s in range(len(c))]
    heapq.heapify(heap)
    left = budget
    while heap and left > budget * 1e-9:
        negative_gain, s = heapq.heappop(heap)
        if negative_gain >= 0:
            break
        r[s], spent = _step(r[s], c[s], min(delta, left), top[s])
        if spent <= 0:  # the chunk is below float resolution
            break
        left -= spent
        if r[s] < top[s]:
            heapq.heappush(heap, (-gain(s), s))
    return r


def same_fraction(costs: Sequence[float], budget: float) -> Fractions:
    """Baseline (§5.4.2): every stage reissues the same fraction r_s = r, so sum c_s r = B."""
    return np.full(len(costs), min(1.0, budget))


def water_fill(costs: Sequence[float], budget: float, shares: Sequence[float]) -> Fractions:
    """The budget split in proportion to ``shares``; what a stage cannot use (r_s = 1) goes to the others."""
    c, p = normalised(costs), np.asarray(shares, dtype=np.float64)
    r, left, open_ = np.zeros(len(c)), budget, p > 0
    while left > budget * 1e-12 and open_.any():
        give = np.where(open_, left * p / p[open_].sum(), 0.0)
        grown = np.minimum(1.0, r + give / c)
        if np.array_equal(grown, r):  # what is left is below float resolution
            break
        r = grown
        left = budget - float(c @ r)
        open_ &= r < 1.0
    return r


def equal_budget(costs: Sequence[float], budget: float) -> Fractions:
    """Baseline (§5.4.2): each stage gets the same share B / N of the budget."""
    return water_fill(costs, budget, np.ones(len(costs)))


def variance_proportional(costs: Sequence[float], budget: float, curves: Sequence[VarianceCurve]) -> Fractions:
    """Baseline after §5.4.5 ("not simply based on their variance"): budget in proportion to Var(L_s)."""
    return water_fill(costs, budget, [float(curve(0.0)) for curve in curves])


def random_budgets(costs: Sequence[float], budget: float, count: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``count`` random allocations (rows): the budget split uniformly at random over the simplex (§5.4.2)."""
    c = normalised(costs)
    split = rng.dirichlet(np.ones(len(c)), size=count) * budget
    return np.minimum(1.0, split / c)


def descent(objective: Callable[[Fractions], float], costs: Sequence[float], budget: float, gamma: int = GAMMA) -> Fractions:
    """Direct descent on a simulated objective (§5.4.2's second brute force): each chunk delta goes to the
    stage whose step gives the lowest ``objective`` (e.g. the training p99), even when no step lowers it
    (a percentile is flat in most directions); the best allocation met on the way is returned."""
    c = normalised(costs)
    r = np.zeros(len(c))
    delta, left = budget / (gamma * len(c)), budget
    best = (objective(r), r)
    while left > budget * 1e-9 and (r < 1.0).any():
        trials = []
        for s in np.flatnonzero(r < 1.0):
            trial = r.copy()
            trial[s], cost = _step(r[s], c[s], min(delta, left))
            trials.append((objective(trial), cost, trial))
        value, cost, r = min(trials, key=lambda t: t[0])
        left -= cost
        best = min(best, (value, r), key=lambda t: t[0])
    return best[1]


def spent(costs: Sequence[float], r: Fractions) -> float:
    """sum_s c_s r_s with normalised costs: the budget an allocation uses (eq. 5.3)."""
    return float(normalised(costs) @ np.asarray(r, dtype=np.float64))
