"""The planning heuristic of thesis §4.3.4 (Fig. 4.2), fast: the same Schedule as ``reference.plan``.

Three exact shortcuts (docs/planner.md):
1. The objective of a candidate depends only on the multiset of rack free times F, so candidates
   are prioritized on sorted (F, number of racks) groups, without rack identities.
2. Consecutive candidates differ in one job: the prioritization order is kept sorted incrementally
   and each candidate resumes from the last checkpointed prefix that its change did not touch.
3. A candidate is skipped when it provably cannot beat the best so far: a safe lower bound
   (``provisioning.lower_bounds``), or a prefix of its prioritization that already dooms it.
Only the winner is prioritized with rack identities, by the reference's own code.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass
from itertools import accumulate
from operator import mul

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import PlanningError
from corral_yarn.planner.provisioning import SAFETY, area_sums, duration_sums, lower_bounds, provisioning
from corral_yarn.planner.reference import prioritize
from corral_yarn.planner.schedule import Scenario, Schedule, effective_arrival

Key = tuple[float | int, ...]


@dataclass(frozen=True)
class Prefix:
    """What the prioritization knows after the first ``jobs`` jobs of the order."""

    jobs: int
    last_key: Key | None  # the sort key of its last job; a change sorting after it leaves it intact
    max_finish: float  # max T_j + L_j(r_j) so far
    completion_sum: float  # sum of T_j + L_j(r_j) - A_j so far
    work: float  # sum of L_j(r_j) (online) or r_j L_j(r_j) (batch) so far

    def changed_by(self, old: Key, new: Key) -> bool:
        """Whether moving one job from sort key ``old`` to ``new`` changes this prefix."""
        return self.last_key is not None and (old <= self.last_key or new < self.last_key)


# a saved prefix state: the Prefix and the free-time groups as (-F ascending, racks)
Checkpoint = tuple[Prefix, list[float], list[int]]


class IncrementalPrioritization:
    """Prioritization (Fig. 4.2) of a run of candidates that each widen one job by one rack.

    The order is the sorted list of the jobs' sort keys; widening only records the move, and the
    list is brought up to date when a candidate is actually prioritized."""

    def __init__(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], checkpoint_every: int = 32) -> None:
        n_jobs, self.n_racks = latency.shape
        self.online = scenario == "online"
        self.checkpoint_every = checkpoint_every  # jobs between saved prefix states
        self.count = [1] * n_jobs  # r_j
        self.duration: list[float] = latency[:, 0].tolist()  # L_j(r_j)
        self.arrival: list[float] = effective_arrival(scenario, arrival).tolist()  # A_j
        self.work_weight = [1] * n_jobs if self.online else self.count  # work = sum of weight x L_j(r_j)
        self.key = [self._order_key(j) for j in range(n_jobs)]
        self.order = sorted(self.key)  # the prioritization order, as sort keys ending in j
        self.moved: dict[int, Key] = {}  # jobs whose key changed since ``order`` was sorted: old key
        self.arrival_by_position = sorted(self.arrival)  # the online order starts with A_j
        self.arrival_before = [0.0, *accumulate(self.arrival_by_position)]
        self.arrival_total = math.fsum(abs(a) for a in self.arrival)
        self.completion = [0.0] * n_jobs  # finish - A_j, by position in the order
        self.checkpoints: list[Checkpoint] = [(Prefix(0, None, -math.inf, 0.0, 0.0), [-0.0], [self.n_racks])]
        self.given_up: Prefix | None = None  # a prefix that proved the candidates sharing it cannot win
        self.doomed_from = math.inf  # ... when their total work is at least this

    def _order_key(self, j: int) -> Key:
        # batch: widest first, then longest; online: earliest arrival first, then as batch (§4.3.4)
        if self.online:
            return (self.arrival[j], -self.count[j], -self.duration[j], j)
        return (-self.count[j], -self.duration[j], j)

    def widen(self, j: int, duration: float) -> None:
        """r_j += 1, now lasting ``duration``: forget the prefix states the move changes."""
        old = self.key[j]
        self.moved.setdefault(j, old)
        self.count[j] += 1
        self.duration[j] = duration
        new = self.key[j] = self._order_key(j)
        while self.checkpoints[-1][0].changed_by(old, new):
            self.checkpoints.pop()
        if self.given_up is not None and self.given_up.changed_by(old, new):
            self.given_up, self.doomed_from = None, math.inf

    def _sort(self) -> None:
        """Bring ``order`` up to date with the recorded moves."""
        if len(self.moved) > len(self.order) // 8:
            self.order = sorted(self.key)
        else:
            for j, old in self.moved.items():
                del self.order[bisect_left(self.order, old)]
                insort(self.order, self.key[j])
        self.moved.clear()

    def doomed_work(self, best: float, prefix: Prefix, neg_free: list[float], racks: list[int]) -> float:
        """The total work from which every candidate sharing ``prefix`` has an objective >= ``best``.

        F values only grow, so every later job starts at or after min_i F_i: its completion is at
        least max(min F, A_j) - A_j + L_j(r_j) (online), and it adds at least r_j L_j(r_j) to
        sum_i F_i, whose mean bounds the makespan (batch). SAFETY terms cover float rounding."""
        if not self.online:
            if prefix.max_finish >= best:
                return -math.inf
            free_sum = -sum(map(mul, neg_free, racks))
            margin = SAFETY * (best * self.n_racks + abs(free_sum) + abs(prefix.work))
            return best * self.n_racks - free_sum + prefix.work + margin
        n_jobs, m, x = len(self.order), prefix.jobs, -neg_free[-1]
        waits = bisect_left(self.arrival_by_position, x, m)  # later jobs that arrive before x
        waiting = x * (waits - m) - (self.arrival_before[waits] - self.arrival_before[m])
        margin = SAFETY * (best * n_jobs + prefix.completion_sum + n_jobs * abs(x) + 2.0 * self.arrival_total + abs(prefix.work))
        limit = best * n_jobs + margin
        return -math.inf if prefix.completion_sum > limit else limit - prefix.completion_sum - waiting + prefix.work

    def objective(self, best: float, work_total: float) -> float | None:
        """The current candidate's objective, or None once it provably cannot beat ``best``."""
        self._sort()
        n_jobs, every = len(self.order), self.checkpoint_every
        max_finish_limit = math.inf if self.online else best  # checked on every job, cheaply
        completion_limit = best * n_jobs if self.online else math.inf
        prefix, neg_free, racks = self.checkpoints[-1]
        neg_free, racks = neg_free.copy(), racks.copy()
        position, max_finish, total, work = prefix.jobs, prefix.max_finish, prefix.completion_sum, prefix.work
        order, count, duration, arrival, weight, completion = self.order, self.count, self.duration, self.arrival, self.work_weight, self.completion
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
            work += duration[j] * weight[j]
            if finish > max_finish:
                max_finish = finish
            slot = bisect_left(neg_free, -finish)
            if slot < len(neg_free) and neg_free[slot] == -finish:
                racks[slot] += count[j]
            else:
                neg_free.insert(slot, -finish)
                racks.insert(slot, count[j])
            position += 1
            if max_finish >= max_finish_limit or total > completion_limit or position % every == 0:
                prefix = Prefix(position, order[position - 1], max_finish, total, work)
                doomed_from = self.doomed_work(best, prefix, neg_free, racks)
                if work_total >= doomed_from:
                    self.given_up, self.doomed_from = prefix, doomed_from
                    return None
                if position % every == 0:
                    self.checkpoints.append((prefix, neg_free.copy(), racks.copy()))
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
    work_totals = duration_sums(latency, prov) if scenario == "online" else area_sums(latency, prov)
    run = IncrementalPrioritization(scenario, latency, arrival, checkpoint_every)
    first_value = run.objective(math.inf, work_totals[0])  # nothing gives up against an infinite best
    best, winner = math.inf if first_value is None else first_value, 0
    for first in range(1, prov.candidates, steps_per_chunk):  # chunks bound the memory of Python lists
        steps = slice(first - 1, min(first - 1 + steps_per_chunk, prov.candidates - 1))
        jobs, counts = prov.widened[steps], prov.new_count[steps]
        durations = latency[jobs, counts - 1].tolist()
        here = slice(first, first + jobs.size)
        for k, j, duration, bound, work_total in zip(range(here.start, here.stop), jobs.tolist(), durations, bounds[here].tolist(), work_totals[here].tolist()):
            run.widen(j, duration)
            if bound >= best or work_total >= run.doomed_from:
                continue
            value = run.objective(best, work_total)
            if value is not None and value < best:
                best, winner = value, k
    return prioritize(scenario, latency, arrival, prov.counts(winner, latency.shape[0]))
