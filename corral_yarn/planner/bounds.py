"""Lower bounds on the planning objective: the LP relaxations of thesis §4.3.5, solved with HiGHS.

LP-Batch is (4.1)-(4.5) as published. For LP-Online (4.6)-(4.10) we take d_jr = 0: the thesis asks
for d_jr > 0 "the delay in scheduling job j on r racks" but gives no value, and any positive d_jr not
proven to be a lower bound on every schedule's delay could make the "bound" exceed the optimum.
With d_jr = 0 constraint (4.9) is implied by (4.8) (r <= R), so LP-Online equals the mean of
min_r L_j(r). We strengthen it soundly with a fluid bound: the racks are one resource of capacity R,
job j needs at least a_j = min_r r L_j(r) rack-seconds after A_j, and SRPT on a single machine of
speed R gives the least total completion time of any such (preemptive, shared) schedule; and a
mean-busy-time bound (Goemans) adds half of each job's shortest latency to that machine's least mean
busy times. The online bound is the largest of the three. See docs/planner.md.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import linprog

from corral_yarn.errors import PlanningError
from corral_yarn.planner.schedule import Scenario


def lp_batch(latency: NDArray[np.float64]) -> float:
    """min T s.t. sum_r x_jr = 1, T >= sum_r x_jr L_j(r), T R >= sum_jr x_jr L_j(r) r (4.1-4.5).

    Solved in units of the longest latency, so HiGHS's absolute tolerances mean the same at every scale."""
    scale = float(latency.max()) or 1.0
    latency = latency / scale
    n_jobs, n_racks = latency.shape
    n_x = n_jobs * n_racks
    r = np.arange(1, n_racks + 1, dtype=np.float64)
    rows = np.repeat(np.arange(n_jobs), n_racks)
    cols = np.arange(n_x)
    assign = sp.csr_matrix((np.ones(n_x), (rows, cols)), shape=(n_jobs, n_x + 1))  # (4.2)
    per_job = sp.hstack([sp.csr_matrix((latency.ravel(), (rows, cols)), shape=(n_jobs, n_x)), -np.ones((n_jobs, 1))])  # (4.3)
    capacity = sp.csr_matrix(np.append((latency * r).ravel(), -float(n_racks))[None, :])  # (4.4)
    cost = np.zeros(n_x + 1)
    cost[-1] = 1.0
    res = linprog(
        cost,
        A_ub=sp.vstack([per_job, capacity]).tocsr(),
        b_ub=np.zeros(n_jobs + 1),
        A_eq=assign,
        b_eq=np.ones(n_jobs),
        bounds=[(0.0, 1.0)] * n_x + [(0.0, None)],
        method="highs",
    )
    if res.status != 0:
        raise PlanningError(f"LP-Batch failed: {res.message}")
    return float(res.fun) * scale


def lp_online(latency: NDArray[np.float64]) -> float:
    """LP-Online (4.6)-(4.10) with d_jr = 0: its optimum is the mean of min_r L_j(r)."""
    return float(latency.min(axis=1).mean())


def fluid_srpt(latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> float:
    """Mean completion time of SRPT on one machine of speed R, job j of size min_r r L_j(r)."""
    n_jobs, n_racks = latency.shape
    size = (latency * np.arange(1, n_racks + 1)).min(axis=1) / n_racks
    order = np.argsort(arrival, kind="stable")
    now, total, k = 0.0, 0.0, 0
    remaining: list[tuple[float, int]] = []
    while k < n_jobs or remaining:
        if not remaining:
            now = max(now, float(arrival[order[k]]))
        while k < n_jobs and arrival[order[k]] <= now:
            heapq.heappush(remaining, (float(size[order[k]]), int(order[k])))
            k += 1
        left, j = heapq.heappop(remaining)
        next_arrival = float(arrival[order[k]]) if k < n_jobs else np.inf
        if now + left <= next_arrival:
            now += left
            total += now - float(arrival[j])
        else:
            heapq.heappush(remaining, (left - (next_arrival - now), j))
            now = next_arrival
    return total / n_jobs


def mean_busy_time(latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> float:
    """A mean-busy-time bound on the mean completion time (Goemans 1997, with release dates).

    A job on r racks from S_j to C_j = S_j + L_j(r) has mean busy time M_j = C_j - L_j(r)/2. Seen as
    one machine of speed R, it does r L_j(r) / R of work at rate r / R <= 1, after A_j; over every such
    (preemptive, shared) schedule, sum_j M_j is least for preemptive shortest-work-first by that work
    (Goemans), and can only grow with the work. So the sum of C_j - A_j is at least that least sum
    with work p_j = min_r r L_j(r) / R, plus sum_j min_r L_j(r) / 2, minus sum_j A_j."""
    n_jobs, n_racks = latency.shape
    work = (latency * np.arange(1, n_racks + 1)).min(axis=1) / n_racks
    busy = _least_mean_busy_times(work, arrival)
    return float((busy + latency.min(axis=1).sum() / 2.0 - arrival.sum()) / n_jobs)


def _least_mean_busy_times(work: NDArray[np.float64], arrival: NDArray[np.float64]) -> float:
    """sum_j M_j of preemptive shortest-work-first (by whole work) on one unit-speed machine; a job
    with no work counts M_j = A_j."""
    order = np.argsort(arrival, kind="stable").tolist()
    work_of, arrival_of = work.tolist(), arrival.tolist()
    now, total, k, n_jobs = 0.0, 0.0, 0, len(order)
    waiting: list[tuple[float, int, float]] = []  # (work, job, work left)
    while k < n_jobs or waiting:
        if not waiting:
            now = max(now, arrival_of[order[k]])
        while k < n_jobs and arrival_of[order[k]] <= now:
            j = order[k]
            if work_of[j] > 0.0:
                heapq.heappush(waiting, (work_of[j], j, work_of[j]))
            else:
                total += arrival_of[j]
            k += 1
        if not waiting:
            continue
        size, j, left = heapq.heappop(waiting)
        run = min(left, (arrival_of[order[k]] if k < n_jobs else math.inf) - now)
        total += (now + run / 2.0) * (run / size)  # this piece's share of M_j (fraction first: no subnormal rounding)
        now += run
        if left - run > 0.0:
            heapq.heappush(waiting, (size, j, left - run))
    return total


def lower_bound(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> float:
    """The bound the plan reports: LP-Batch, or for online the largest of LP-Online, fluid SRPT and
    the mean-busy-time bound."""
    if scenario == "batch":
        return lp_batch(latency)
    return max(lp_online(latency), fluid_srpt(latency, arrival), mean_busy_time(latency, arrival))
