"""The provisioning phase (thesis §4.3.4) as data: the whole sequence of candidate allocations at once,
with a lower bound on each candidate's objective that is safe under floating-point rounding.

Candidate 0 gives every job one rack; candidate k widens job ``widened[k-1]`` by one rack, the job
with the longest L_j(r_j) among those with r_j < R (ties: lowest index), exactly as the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Scenario, SlotDemand

# Relative slack on every bound: far above the float error of the schedule's sums (about J x 2^-53)
# and of the bound arithmetic, so a pruned candidate can never be the reference's winner.
SAFETY = 1e-9


@dataclass(frozen=True)
class Provisioning:
    """The J(R-1)+1 candidate allocations of the provisioning phase, one per step."""

    widened: NDArray[np.int64]  # job widened at step k = 1..J(R-1) (index k-1)
    new_count: NDArray[np.int64]  # its r_j after that step
    longest: NDArray[np.float64]  # max_j L_j(r_j) of candidate k = 0..J(R-1)

    @property
    def candidates(self) -> int:
        return self.widened.size + 1

    def counts(self, candidate: int, n_jobs: int) -> NDArray[np.int64]:
        """r_j of candidate ``candidate``."""
        return 1 + np.bincount(self.widened[:candidate], minlength=n_jobs).astype(np.int64)


def provisioning(latency: NDArray[np.float64]) -> Provisioning:
    """Widen the longest growable job one rack at a time until every job has R racks (§4.3.4).

    Read as a merge: job j at r_j = c offers L_j(c); the longest offer goes next, ties to the lowest j.
    An offer above an earlier offer of the same job is taken right after it (it beats every other
    offer that one beat), so each offer is ranked by the running minimum of its job's offers, and a
    stable sort by that rank (job-major, then c) gives the reference's sequence without a heap.
    """
    n_jobs, n_racks = latency.shape
    offers = latency[:, :-1]  # L_j(c) for c = 1..R-1
    rank = np.minimum.accumulate(offers, axis=1).ravel()
    taken = np.argsort(-rank, kind="stable")
    widened = taken // max(n_racks - 1, 1)
    new_count = taken % max(n_racks - 1, 1) + 2
    next_offer = np.append(offers.ravel()[taken], -np.inf)  # the longest growable job before each step
    at_full = np.full(taken.size + 1, -np.inf)  # L_j(R) of the jobs that reached R racks so far
    at_full[1:] = np.where(new_count == n_racks, latency[widened, n_racks - 1], -np.inf)
    if n_racks == 1 and n_jobs:
        at_full[0] = latency[:, 0].max()
    longest = np.maximum(next_offer, np.maximum.accumulate(at_full))
    return Provisioning(widened.astype(np.int64), new_count.astype(np.int64), longest)


def _running_sums(first: NDArray[np.float64], plus: NDArray[np.longdouble], minus: NDArray[np.longdouble]) -> NDArray[np.float64]:
    """A lower bound on sum(first) + cumsum(plus - minus) for every prefix, allowing for the rounding
    of each difference and of the summation (recursive summation: error <= n eps sum |terms|)."""
    ld = np.longdouble
    terms = np.concatenate([[first.astype(ld).sum()], plus - minus])
    magnitude = np.cumsum(np.concatenate([[np.abs(first).astype(ld).sum()], np.abs(plus) + np.abs(minus)]))
    error = 2.0 * (np.arange(terms.size) + first.size + 2) * np.finfo(ld).eps * magnitude
    low = np.cumsum(terms) - error
    rounded = low.astype(np.float64)
    return np.where(rounded > low, np.nextafter(rounded, -np.inf), rounded)  # round down


def _shrink(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x - SAFETY * np.abs(x)


def _step_durations(latency: NDArray[np.float64], prov: Provisioning) -> tuple[NDArray[np.longdouble], NDArray[np.longdouble]]:
    """L_j(r_j) before and after each step, in extended precision."""
    ld = np.longdouble
    return latency[prov.widened, prov.new_count - 2].astype(ld), latency[prov.widened, prov.new_count - 1].astype(ld)


def duration_sums(latency: NDArray[np.float64], prov: Provisioning) -> NDArray[np.float64]:
    """Per candidate, a lower bound on sum_j L_j(r_j)."""
    previous, current = _step_durations(latency, prov)
    return _running_sums(latency[:, 0], current, previous)


def area_sums(latency: NDArray[np.float64], prov: Provisioning, demand: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    """Per candidate, a lower bound on the rack-time sum_j r_j L_j(r_j), or with ``demand`` (slot-aware
    sharing) on the slot-time sum_j r_j d_j(r_j) L_j(r_j)."""
    previous, current = _step_durations(latency, prov)
    if demand is None:
        return _running_sums(latency[:, 0], prov.new_count * current, (prov.new_count - 1) * previous)
    d_before, d_after = demand[prov.widened, prov.new_count - 2], demand[prov.widened, prov.new_count - 1]
    return _running_sums(latency[:, 0].astype(np.longdouble) * demand[:, 0], prov.new_count * d_after * current, (prov.new_count - 1) * d_before * previous)


@dataclass(frozen=True)
class CandidateBounds:
    """Per candidate: a lower bound on its objective, and one on its total work."""

    objective: NDArray[np.float64]  # never above the prioritized objective, even in float arithmetic
    work: NDArray[np.float64]  # batch: sum_j r_j L_j(r_j); online: sum_j L_j(r_j)


def lower_bounds(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], prov: Provisioning,
                 slots: SlotDemand | None = None) -> CandidateBounds:
    """Batch: makespan >= max_j L_j(r_j) (exact) and >= sum_j r_j L_j(r_j) / R (rack-time area), with
    slot-aware sharing >= sum_j r_j d_j(r_j) L_j(r_j) / (R S) (slot-time area over R racks of S slots).
    Online: each completion is at least L_j(r_j), so the mean completion >= mean_j L_j(r_j).
    """
    n_jobs, n_racks = latency.shape
    if scenario == "batch":
        area = area_sums(latency, prov, None if slots is None else slots.demand)
        capacity = n_racks if slots is None else n_racks * slots.capacity
        return CandidateBounds(np.maximum(prov.longest, _shrink(area / capacity)), area)
    durations = duration_sums(latency, prov)
    # completion = fl(fl(T + L) - A) >= L - 2^-52 (A + L): allow for it on every job
    slack = 4.0 * np.finfo(np.float64).eps * float(np.abs(arrival).sum())
    return CandidateBounds(_shrink(_shrink(durations - slack) / n_jobs), durations)
