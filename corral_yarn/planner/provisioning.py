"""The provisioning phase (thesis §4.3.4) as data: the whole sequence of candidate allocations at once,
with a lower bound on each candidate's objective that is safe under floating-point rounding.

Candidate 0 gives every job one rack; candidate k widens job ``widened[k-1]`` by one rack, the job
with the longest L_j(r_j) among those with r_j < R (ties: lowest index), exactly as the reference.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Scenario

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
    """Widen the longest growable job one rack at a time until every job has R racks (§4.3.4)."""
    n_jobs, n_racks = latency.shape
    rows = latency.tolist()
    steps = n_jobs * (n_racks - 1)
    widened = np.empty(steps, dtype=np.int64)
    new_count = np.empty(steps, dtype=np.int64)
    longest = np.empty(steps + 1)
    grown = max((row[-1] for row in rows), default=-np.inf) if n_racks == 1 else -np.inf  # jobs at r = R
    heap = [(-row[0], j) for j, row in enumerate(rows)] if n_racks > 1 else []
    heapq.heapify(heap)
    longest[0] = max(-heap[0][0], grown) if heap else grown
    counts = [1] * n_jobs
    for k in range(steps):
        _, j = heapq.heappop(heap)  # longest L_j(r_j), then lowest j
        r = counts[j] = counts[j] + 1
        widened[k], new_count[k] = j, r
        if r < n_racks:
            heapq.heappush(heap, (-rows[j][r - 1], j))
        elif rows[j][r - 1] > grown:
            grown = rows[j][r - 1]
        longest[k + 1] = max(-heap[0][0], grown) if heap else grown
    return Provisioning(widened, new_count, longest)


def _running_sums(first: NDArray[np.float64], step: NDArray[np.float64]) -> NDArray[np.float64]:
    """A lower bound on sum(first) + cumsum(step) for every prefix, allowing for summation error."""
    ld = np.longdouble
    terms = np.concatenate([[first.astype(ld).sum()], step.astype(ld)])
    total = np.cumsum(terms)
    magnitude = np.cumsum(np.abs(terms)) + np.abs(first).astype(ld).sum()
    error = 2.0 * (np.arange(terms.size) + first.size + 1) * np.finfo(ld).eps * magnitude
    return np.asarray(total - error, dtype=np.float64)


def _shrink(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x - SAFETY * np.abs(x)


def lower_bounds(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], prov: Provisioning) -> NDArray[np.float64]:
    """Per candidate, a number no larger than its prioritized objective (even in float arithmetic).

    Batch: makespan >= max_j L_j(r_j) (exact) and >= sum_j r_j L_j(r_j) / R (rack-time area).
    Online: each completion is at least L_j(r_j), so the mean completion >= mean_j L_j(r_j).
    """
    n_jobs, n_racks = latency.shape
    previous = latency[prov.widened, prov.new_count - 2]
    current = latency[prov.widened, prov.new_count - 1]
    if scenario == "batch":
        step = prov.new_count * current - (prov.new_count - 1) * previous
        return np.maximum(prov.longest, _shrink(_running_sums(latency[:, 0], step) / n_racks))
    total = _running_sums(latency[:, 0], current - previous)
    # completion = fl(fl(T + L) - A) >= L - 2^-52 (A + L): allow for it on every job
    slack = 4.0 * np.finfo(np.float64).eps * float(np.abs(arrival).sum())
    return _shrink(_shrink(total - slack) / n_jobs)
