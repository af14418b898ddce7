"""The planning heuristic of thesis §4.3.4 (Fig. 4.2), fast: the same Schedule as ``reference.plan``.

Three exact shortcuts (docs/planner.md):
1. The objective of a candidate depends only on the multiset of rack free times F, so candidates
   are prioritized on sorted (F, number of racks) groups, without rack identities.
2. Consecutive candidates differ in one job: the prioritization order is kept sorted incrementally
   and each candidate resumes from the last checkpointed prefix that its change did not touch.
3. A candidate is skipped when it provably cannot beat the best so far: a safe lower bound
   (``provisioning.lower_bounds``), or a prefix of its prioritization already as bad as the best.
Only the winner is prioritized with rack identities, by the reference's own code.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import PlanningError
from corral_yarn.planner.provisioning import SAFETY, lower_bounds, provisioning
from corral_yarn.planner.reference import prioritize
from corral_yarn.planner.schedule import Scenario, Schedule, effective_arrival

Key = tuple[float | int, ...]
# (jobs prioritized, free-time groups as (-F ascending, racks), max finish, sum of completions)
Checkpoint = tuple[int, list[float], list[int], float, float]


class IncrementalPrioritization:
    """Prioritization (Fig. 4.2) of a run of candidates that each widen one job by one rack."""

    def __init__(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], checkpoint_every: int = 32) -> None:
        n_jobs, n_racks = latency.shape
        self.checkpoint_every = checkpoint_every  # jobs between saved prefix states
        self.online = scenario == "online"
        self.count = [1] * n_jobs  # r_j
        self.duration: list[float] = latency[:, 0].tolist()  # L_j(r_j)
        self.arrival: list[float] = effective_arrival(scenario, arrival).tolist()  # A_j
        self.key = [self._order_key(j) for j in range(n_jobs)]
        self.order = sorted(self.key)  # the prioritization order, as sort keys ending in j
        self.completion = [0.0] * n_jobs  # finish - A_j, by position in the order
        self.checkpoints: list[Checkpoint] = [(0, [-0.0], [n_racks], -math.inf, 0.0)]
        self.aborted_at: int | None = None  # prefix length after which the last run gave up

    def _order_key(self, j: int) -> Key:
        # batch: widest first, then longest; online: earliest arrival first, then as batch (§4.3.4)
        if self.online:
            return (self.arrival[j], -self.count[j], -self.duration[j], j)
        return (-self.count[j], -self.duration[j], j)

    def widen(self, j: int, duration: float) -> None:
        """r_j += 1, now lasting ``duration``: move j in the order, forget prefix states it changes."""
        old = bisect_left(self.order, self.key[j])
        del self.order[old]
        self.count[j] += 1
        self.duration[j] = duration
        self.key[j] = self._order_key(j)
        new = bisect_left(self.order, self.key[j])
        self.order.insert(new, self.key[j])
        changed = min(old, new)
        while self.checkpoints[-1][0] > changed:
            self.checkpoints.pop()
        if self.aborted_at is not None and changed < self.aborted_at:
            self.aborted_at = None

    @property
    def hopeless(self) -> bool:
        """True when the current candidate shares a prefix already proven no better than the best."""
        return self.aborted_at is not None

    def objective(self, best: float) -> float | None:
        """The current candidate's objective, or None once it provably cannot beat ``best``.

        Makespan is at least the largest finish so far; with completions >= 0, n times the mean
        completion is at least the sum so far (compared with a margin for its rounding)."""
        n_jobs = len(self.order)
        max_finish_limit = math.inf if self.online else best
        completion_limit = best * n_jobs * (1.0 + SAFETY) if self.online else math.inf
        position, neg_free, racks, max_finish, total = self.checkpoints[-1]
        neg_free, racks = neg_free.copy(), racks.copy()
        order, count, duration, arrival, completion = self.order, self.count, self.duration, self.arrival, self.completion
        while position < n_jobs:
            j = order[position][-1]
            need = count[j]
            while True:  # take the r_j racks that free up first; ``top`` is the latest of their F_i
                free = racks[-1]
                if free > need:
                    racks[-1] = free - need
                    top = -neg_free[-1]
                    break
                top = -neg_free.pop()
                racks.pop()
                need -= free
                if not need:
                    break
            start = top if top >= arrival[j] else arrival[j]  # T_j = max{max F_i, A_j}
            finish = start + duration[j]  # F_i := T_j + L_j(r_j)
            completion[position] = finish - arrival[j]
            total += completion[position]
            if finish > max_finish:
                max_finish = finish
            slot = bisect_left(neg_free, -finish)
            if slot < len(neg_free) and neg_free[slot] == -finish:
                racks[slot] += count[j]
            else:
                neg_free.insert(slot, -finish)
                racks.insert(slot, count[j])
            position += 1
            if max_finish >= max_finish_limit or total > completion_limit:
                self.aborted_at = position
                return None
            if position % self.checkpoint_every == 0:
                self.checkpoints.append((position, neg_free.copy(), racks.copy(), max_finish, total))
        return math.fsum(completion) / n_jobs if self.online else max_finish


def _check(latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> None:
    if latency.ndim != 2 or latency.shape[0] != arrival.size or latency.shape[1] < 1:
        raise PlanningError(f"latency must be J x R with R >= 1 and J = {arrival.size} arrivals, got {latency.shape}")
    if not (np.all(np.isfinite(latency)) and np.all(latency >= 0) and np.all(np.isfinite(arrival))):
        raise PlanningError("latencies must be finite and >= 0, arrivals finite")


def plan(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], checkpoint_every: int = 32, steps_per_chunk: int = 1 << 16) -> Schedule:
    """Same contract and answer as ``reference.plan``: the first candidate with the best objective.

    ``checkpoint_every`` and ``steps_per_chunk`` tune speed and memory only (tests make them small)."""
    _check(latency, arrival)
    prov = provisioning(latency)
    bounds = lower_bounds(scenario, latency, arrival, prov)
    run = IncrementalPrioritization(scenario, latency, arrival, checkpoint_every)
    first_value = run.objective(math.inf)  # nothing gives up against an infinite best
    best, winner = math.inf if first_value is None else first_value, 0
    for first in range(1, prov.candidates, steps_per_chunk):  # chunks bound the memory of Python lists
        steps = slice(first - 1, min(first - 1 + steps_per_chunk, prov.candidates - 1))
        jobs, counts = prov.widened[steps], prov.new_count[steps]
        chunk = zip(range(first, first + jobs.size), jobs.tolist(), latency[jobs, counts - 1].tolist(), bounds[first : first + jobs.size].tolist())
        for k, j, duration, bound in chunk:
            run.widen(j, duration)
            if bound >= best or run.hopeless:
                continue
            value = run.objective(best)
            if value is not None and value < best:
                best, winner = value, k
    return prioritize(scenario, latency, arrival, prov.counts(winner, latency.shape[0]))
