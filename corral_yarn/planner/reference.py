"""The thesis's planning heuristic written literally (§4.3.4, Fig. 4.2): the oracle for the fast one.

It is O(J^2 R^2 log R); use it on small instances and in tests, and ``corral_yarn.planner.fast``
everywhere else.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Order, Scenario, Schedule, effective_arrival, objective, sort_key


def prioritization_order(order: Order, counts: NDArray[np.int64], duration: NDArray[np.float64], arrival: NDArray[np.float64]) -> list[int]:
    """The jobs sorted by ``sort_key``; the thesis's (§4.3.4) is widest, then longest, first in batch
    (where every A_j is 0) and earliest arrival first online."""
    keys = [sort_key(order, a, c, d, j) for j, (a, c, d) in enumerate(zip(arrival.tolist(), counts.tolist(), duration.tolist()))]
    return [key[-1] for key in sorted(keys)]


def prioritize(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order_by: Order = "thesis") -> Schedule:
    """Prioritization phase, Fig. 4.2: each job in order takes the r_j racks that free up first."""
    n_jobs, n_racks = latency.shape
    duration = latency[np.arange(n_jobs), counts - 1]
    arrival = effective_arrival(scenario, arrival)
    order = prioritization_order(order_by, counts, duration, arrival)
    free_at = np.zeros(n_racks)  # F_i
    start = np.zeros(n_jobs)
    rack_sets: list[tuple[int, ...]] = [()] * n_jobs
    for j in order:
        chosen = np.argsort(free_at, kind="stable")[: counts[j]]  # the r_j smallest (F_i, i)
        start[j] = max(free_at[chosen].max(), arrival[j])  # T_j = max{max F_i, A_j}
        free_at[chosen] = start[j] + duration[j]  # F_i := T_j + L_j(r_j)
        rack_sets[j] = tuple(sorted(chosen.tolist()))
    return Schedule(counts.copy(), tuple(rack_sets), start, tuple(order), objective(scenario, start + duration, arrival))


def plan(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], order: Order = "thesis") -> Schedule:
    """Provisioning phase (§4.3.4): from r_j = 1, widen the longest job one rack at a time until every
    job has R racks; prioritize every candidate allocation and keep the first with the best objective."""
    n_jobs, n_racks = latency.shape
    counts = np.ones(n_jobs, dtype=np.int64)
    best = prioritize(scenario, latency, arrival, counts, order)
    while True:
        growable = [j for j in range(n_jobs) if counts[j] < n_racks]
        if not growable:
            return best
        longest = max(growable, key=lambda j: (latency[j, counts[j] - 1], -j))
        counts[longest] += 1
        candidate = prioritize(scenario, latency, arrival, counts, order)
        if candidate.objective < best.objective:
            best = candidate
