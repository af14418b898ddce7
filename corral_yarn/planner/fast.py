"""The planning heuristic of thesis §4.3.4 (Fig. 4.2), fast: the same Schedule as ``reference.plan``.

Exact shortcuts (docs/planner.md):
1. The provisioning sequence comes from one sort (``provisioning.provisioning``).
2. The objective of a candidate depends only on the multiset of rack free times F, so candidates
   are prioritized on sorted (F, number of racks) groups, without rack identities.
3. Consecutive candidates differ in one job: each candidate resumes from the last checkpointed
   prefix of the prioritization order that its change did not touch.
4. A candidate is skipped when it provably cannot beat the best so far: a safe lower bound
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

# (A_j, -r_j, -L_j(r_j), j): sorting these gives the prioritization order, with A_j = 0 in batch
Key = tuple[float, int, float, int]


@dataclass(frozen=True)
class Prefix:
    """What the prioritization knows after the first ``jobs`` jobs of the order."""

    jobs: int
    last_key: Key | None  # the sort key of its last job; a change sorting after it leaves it intact
    max_finish: float  # max T_j + L_j(r_j) so far
    completion_sum: float  # sum of T_j + L_j(r_j) - A_j so far
    duration_sum: float  # sum of L_j(r_j) so far
    area: float  # sum of r_j L_j(r_j) so far

    def changed_by(self, old: Key, new: Key) -> bool:
        """Whether moving one job from sort key ``old`` to ``new`` changes this prefix."""
        return self.last_key is not None and (old <= self.last_key or new < self.last_key)


# a saved prefix state: the Prefix and the free-time groups as (-F ascending, racks)
Checkpoint = tuple[Prefix, list[float], list[int]]


class IncrementalPrioritization:
    """Prioritization (Fig. 4.2) of a run of candidates that each widen one job by one rack.

    The order is the sorted list of the jobs' sort keys; widening only records the move, and the
    list is brought up to date when a candidate is actually prioritized."""

    def __init__(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], checkpoint_every: int) -> None:
        n_jobs, self.n_racks = latency.shape
        self.online = scenario == "online"
        self.checkpoint_every = checkpoint_every  # jobs between saved prefix states and give-up tests
        effective = effective_arrival(scenario, arrival).tolist()
        # batch: widest first, then longest; online: earliest arrival first, then as batch (§4.3.4)
        self.key: list[Key] = [(a, -1, -d, j) for j, (a, d) in enumerate(zip(effective, latency[:, 0].tolist()))]
        self.order = sorted(self.key)  # the prioritization order
        self.moved: dict[int, Key] = {}  # jobs whose key changed since ``order`` was sorted: old key
        self.arrival_by_position = sorted(effective)  # the online order starts with A_j
        self.arrival_before = [0.0, *accumulate(self.arrival_by_position)]
        self.arrival_total = math.fsum(abs(a) for a in effective)
        self.completion = [0.0] * n_jobs  # finish - A_j, by position in the order
        self.checkpoints: list[Checkpoint] = [(Prefix(0, None, -math.inf, 0.0, 0.0, 0.0), [-0.0], [self.n_racks])]
        self.given_up: Prefix | None = None  # a prefix that proved the candidates sharing it cannot win
        self.doomed_from = math.inf  # ... when their total work is at least this

    def widen(self, j: int, duration: float) -> None:
        """r_j += 1, now lasting ``duration``: forget the prefix states the move changes."""
        old = self.key[j]
        self.moved.setdefault(j, old)
        new = self.key[j] = (old[0], old[1] - 1, -duration, j)
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
            margin = SAFETY * (best * self.n_racks + abs(free_sum) + abs(prefix.area))
            return best * self.n_racks - free_sum + prefix.area + margin
        n_jobs, m, x = len(self.order), prefix.jobs, -neg_free[-1]
        waits = bisect_left(self.arrival_by_position, x, m)  # later jobs that arrive before x
        waiting = x * (waits - m) - (self.arrival_before[waits] - self.arrival_before[m])
        margin = SAFETY * (best * n_jobs + prefix.completion_sum + n_jobs * abs(x) + 2.0 * self.arrival_total + abs(prefix.duration_sum))
        limit = best * n_jobs + margin
        return -math.inf if prefix.completion_sum > limit else limit - prefix.completion_sum - waiting + prefix.duration_sum

    def objective(self, best: float, work_total: float) -> float | None:
        """The current candidate's objective, or None once it provably cannot beat ``best``."""
        self._sort()
        n_jobs, every = len(self.order), self.checkpoint_every
        max_finish_limit = math.inf if self.online else best  # checked on every job, cheaply
        completion_limit = best * n_jobs if self.online else math.inf
        prefix, neg_free, racks = self.checkpoints[-1]
        neg_free, racks = neg_free.copy(), racks.copy()
        max_finish, total, durations, area = prefix.max_finish, prefix.completion_sum, prefix.duration_sum, prefix.area
        order, completion = self.order, self.completion
        for position in range(prefix.jobs, n_jobs):
            arrival, neg_count, neg_duration, _ = order[position]
            need = -neg_count
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
            duration = -neg_duration
            start = top if top >= arrival else arrival  # T_j = max{max F_i, A_j}
            finish = start + duration  # F_i := T_j + L_j(r_j)
            completion[position] = done = finish - arrival
            total += done
            durations += duration
            area -= neg_count * duration
            if finish > max_finish:
                max_finish = finish
            slot = bisect_left(neg_free, -finish)
            if slot < len(neg_free) and neg_free[slot] == -finish:
                racks[slot] -= neg_count
            else:
                neg_free.insert(slot, -finish)
                racks.insert(slot, -neg_count)
            jobs = position + 1
            if max_finish >= max_finish_limit or total > completion_limit or jobs % every == 0:
                prefix = Prefix(jobs, order[position], max_finish, total, durations, area)
                doomed_from = self.doomed_work(best, prefix, neg_free, racks)
                if work_total >= doomed_from:
                    self.given_up, self.doomed_from = prefix, doomed_from
                    return None
                if jobs % every == 0:
                    self.checkpoints.append((prefix, neg_free.copy(), racks.copy()))
        return math.fsum(completion) / n_jobs if self.online else max_finish


def _check(latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> None:
    if latency.ndim != 2 or latency.shape[0] != arrival.size or latency.shape[1] < 1:
        raise PlanningError(f"latency must be J x R with R >= 1 and J = {arrival.size} arrivals, got {latency.shape}")
    if not (np.all(np.isfinite(latency)) and np.all(latency >= 0) and np.all(np.isfinite(arrival))):
        raise PlanningError("latencies must be finite and >= 0, arrivals finite")


# jobs between checkpoints, tuned on W1-like workloads: online candidates often resume mid-order;
# a batch candidate usually moves its job to the front, and a batch give-up test costs O(R)
CHECKPOINT_EVERY: dict[Scenario, int] = {"batch": 32, "online": 8}


def plan(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], checkpoint_every: int | None = None, steps_per_chunk: int = 1 << 16) -> Schedule:
    """Same contract and answer as ``reference.plan``: the first candidate with the best objective.

    ``checkpoint_every`` and ``steps_per_chunk`` tune speed and memory only (tests make them small)."""
    _check(latency, arrival)
    prov = provisioning(latency)
    bounds = lower_bounds(scenario, latency, arrival, prov)
    work_totals = duration_sums(latency, prov) if scenario == "online" else area_sums(latency, prov)
    run = IncrementalPrioritization(scenario, latency, arrival, checkpoint_every or CHECKPOINT_EVERY[scenario])
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
