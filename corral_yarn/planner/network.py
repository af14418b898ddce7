"""Network latency in Corral's rack choice (issue 18 item 5a, after NoMora; docs/planner.md "Network latency").

A latency-sensitive job j on the rack set R runs L_j(r) / p_j(d(R)): d(R) is the largest rack-pair
latency within R (a rack with itself included), p_j its performance-latency function (NoMora
§"Functions of application performance", normalised performance), so a job at half speed takes twice
as long. p_j is taken non-increasing (its running minimum over the matrix's latencies): a fitted
curve that rises again never rewards a farther rack set. Latency-insensitive jobs run L_j(r) as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import PlanningError

Perf = Callable[[float], float]  # normalised performance at a latency in µs, in (0, 1]


@dataclass(frozen=True)
class RackChoice:
    """Per job, how its duration depends on its rack set, and the rule that picks the set (``racks``)."""

    base: NDArray[np.float64]  # J x R: L_j(r)
    floor: NDArray[np.float64]  # J x R: L_j(r) / p_j(d_low(r)), at most any duration of j on r racks
    rack_us: NDArray[np.float64]  # R x R, symmetric: the larger of the two directions
    values: NDArray[np.float64]  # the matrix's distinct latencies, ascending
    perf: NDArray[np.float64]  # J x U: p_j at each of ``values``, non-increasing (1 for insensitive jobs)
    sensitive: NDArray[np.bool_]  # J

    def spread(self, racks: Sequence[int] | NDArray[np.int64]) -> float:
        """d(R): the largest latency between two racks of R, a rack with itself included (µs)."""
        index = np.asarray(racks)
        return float(self.rack_us[np.ix_(index, index)].max())

    def performance(self, job: int, racks: Sequence[int] | NDArray[np.int64]) -> float:
        """p_j(d(R)), the job's expected normalised performance on the rack set R."""
        return float(self.perf[job, np.searchsorted(self.values, self.spread(racks))])

    def duration(self, job: int, racks: Sequence[int] | NDArray[np.int64]) -> float:
        """L_j(r) / p_j(d(R)); exactly L_j(r) for a latency-insensitive job."""
        base = float(self.base[job, len(racks) - 1])
        return base / self.performance(job, racks) if self.sensitive[job] else base

    def racks(self, job: int, count: int, free_at: NDArray[np.float64], arrival: float) -> tuple[NDArray[np.int64], float]:
        """The r_j racks job j takes, and its duration there (docs/planner.md "Network latency").

        The thesis's set is the r_j racks that free up first, (F_i, i) (Fig. 4.2); a latency-insensitive
        job takes it. A sensitive job also considers, for every free-time level t and every rack a free by
        t, the set of a and the r_j - 1 racks free by t nearest to a (by latency, then F_i, then i), and
        takes the set that finishes first: max(max_{i in R} F_i, A_j) + L_j(r_j) / p_j(d(R)); ties go to
        the thesis's set, then the smaller d(R), then the lexicographically first sorted set."""
        thesis = np.argsort(free_at, kind="stable")[:count]
        if not self.sensitive[job]:
            return thesis, float(self.base[job, count - 1])
        sets = self._seeded_sets(count, free_at)
        spread = self.rack_us[sets[:, :, None], sets[:, None, :]].max(axis=(1, 2))
        base = float(self.base[job, count - 1])
        finish = np.maximum(free_at[sets].max(axis=1), arrival) + base / self.perf[job, np.searchsorted(self.values, spread)]
        first = float(finish.min())
        if max(float(free_at[thesis].max()), arrival) + self.duration(job, thesis) <= first:
            return thesis, self.duration(job, thesis)
        tied = np.flatnonzero(finish == first)
        tied = tied[spread[tied] == spread[tied].min()]
        best = sets[min(tied.tolist(), key=lambda k: sorted(sets[k].tolist()))]
        return best, self.duration(job, best)

    def _seeded_sets(self, count: int, free_at: NDArray[np.float64]) -> NDArray[np.int64]:
        """For every free-time level t and rack a free by t: a and the count - 1 racks free by t nearest to a
        (by latency, then F_i, then i), one set per row."""
        sets = []
        for level in np.unique(free_at):
            eligible = np.flatnonzero(free_at <= level)
            if eligible.size < count:
                continue
            near = self.rack_us[np.ix_(eligible, eligible)].copy()
            np.fill_diagonal(near, -np.inf)  # the seed first
            shape = near.shape
            ranked = np.lexsort((np.broadcast_to(eligible, shape), np.broadcast_to(free_at[eligible], shape), near))
            sets.append(eligible[ranked[:, :count]])
        return np.concatenate(sets)


def rack_choice(latency: NDArray[np.float64], rack_us: NDArray[np.float64], perf: Sequence[Perf | None]) -> RackChoice:
    """RackChoice for the J x R table L_j(r), an R x R rack-pair latency matrix (µs; the diagonal is
    the latency inside a rack) and each job's performance-latency function (None: insensitive)."""
    n_jobs, n_racks = latency.shape
    if rack_us.shape != (n_racks, n_racks) or len(perf) != n_jobs:
        raise PlanningError(f"need a {n_racks} x {n_racks} rack latency matrix and {n_jobs} functions, got {rack_us.shape} and {len(perf)}")
    symmetric = np.maximum(rack_us, rack_us.T)  # NoMora uses the maximum latency between two machines (eq. 1)
    values = np.unique(symmetric)
    table = np.ones((n_jobs, values.size))
    for j, function in enumerate(perf):
        if function is not None:
            table[j] = np.minimum.accumulate([function(float(v)) for v in values])
    if not (np.all(table > 0) and np.all(table <= 1)):
        raise PlanningError("performance-latency functions must return values in (0, 1]")
    sensitive = np.array([function is not None for function in perf], dtype=bool)
    least = np.searchsorted(values, least_spread(symmetric))
    floor = np.where(sensitive[:, None], latency / table[:, least], latency)
    return RackChoice(latency, floor, symmetric, values, table, sensitive)


def least_spread(rack_us: NDArray[np.float64]) -> NDArray[np.float64]:
    """d_low(r), r = 1..R: at most d(R) of every r-rack set R. A set holding rack a spreads at least
    a's own latency and its (r-1)-th smallest latency to another rack; the least over a bounds them all."""
    n_racks = rack_us.shape[0]
    others = rack_us.copy()
    np.fill_diagonal(others, np.inf)
    nearest = np.sort(others, axis=1)[:, : n_racks - 1]  # a's latencies to the other racks, ascending
    own = np.diagonal(rack_us)[:, None]
    per_seed = np.hstack([own, np.maximum(own, nearest)])  # column r-1: the bound of sets of r racks holding a
    return per_seed.min(axis=0)
