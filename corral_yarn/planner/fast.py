"""The planning heuristic of thesis §4.3.4 (Fig. 4.2), fast: the same Schedule as ``reference.plan``.

Exact shortcuts (docs/planner.md):
1. The provisioning sequence comes from one sort (``provisioning.provisioning``).
2. The objective of a candidate depends only on the multiset of rack free times F, so candidates
   are prioritized on sorted (F, number of racks) groups, without rack identities.
3. Consecutive candidates differ in one job: each candidate resumes from the last checkpointed
   prefix of the prioritization order that its change did not touch.
4. A candidate is skipped when it provably cannot beat the best so far: a safe lower bound
   (``provisioning.lower_bounds``), or a prefix of its prioritization that already dooms it.
Only the winner is prioritized with rack identities, by the reference's own code (with slot-aware sharing,
every candidate is prioritized with rack identities by ``slots.RackSlots``, and the winner's placements are kept).
"""

from __future__ import annotations

import copy
import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from operator import mul

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import PlanningError
from corral_yarn.planner.network import RackChoice
from corral_yarn.planner.provisioning import SAFETY, CandidateBounds, lower_bounds, provisioning
from corral_yarn.planner import reference
from corral_yarn.planner.reference import prioritize
from corral_yarn.planner.schedule import Key, Order, Scenario, Schedule, SlotDemand, effective_arrival, key_parts, objective, sort_key
from corral_yarn.planner.slots import RackSlots, schedule

FULL_WIDTH_JOBS = 64  # at most this many later full-width jobs in an online give-up test
BLOCKING_FULL_WIDTH_JOBS = 4  # with sharing, at most this many of them counted per position (jobs they block)


@dataclass(frozen=True)
class Prefix:
    """What the prioritization knows after the first ``jobs`` jobs of the order."""

    jobs: int
    last_key: Key | None  # the sort key of its last job; a change sorting after it leaves it intact
    max_finish: float  # max T_j + L_j(r_j) so far
    completion_sum: float  # sum of T_j + L_j(r_j) - A_j so far
    duration_sum: float  # sum of L_j(r_j) so far
    area: float  # sum of r_j L_j(r_j) so far

    def changed_by(self, lowest_new_key: Key) -> bool:
        """Whether widening jobs, the lowest of whose old and new sort keys is given, changes this prefix:
        a widened job moves into, out of or within the prefix iff one of its keys sorts up to its last key."""
        return self.last_key is not None and lowest_new_key <= self.last_key


# a saved prefix state: the Prefix and the free-time groups as (-F ascending, racks)
Checkpoint = tuple[Prefix, list[float], list[int]]


@dataclass(frozen=True)
class Steps:
    """A run of provisioning steps as arrays: the widened job, its sort key before and after (A, x, y, j)."""

    job: NDArray[np.int64]
    count: NDArray[np.int64]  # r_j after the step
    duration: NDArray[np.float64]  # L_j(r_j) after the step
    arrival: NDArray[np.float64]
    old: tuple[NDArray[np.float64], NDArray[np.float64]]
    new: tuple[NDArray[np.float64], NDArray[np.float64]]

    @classmethod
    def of(cls, order: Order, latency: NDArray[np.float64], arrival: NDArray[np.float64], job: NDArray[np.int64], count: NDArray[np.int64]) -> Steps:
        duration = latency[job, count - 1]
        return cls(job, count, duration, arrival[job], key_parts(order, count - 1, latency[job, count - 2]), key_parts(order, count, duration))

    def touches(self, lo: int, hi: int, key: Key) -> NDArray[np.bool_]:
        """Per step in lo..hi-1: whether its old or new sort key is at most ``key`` (it changes a prefix ending there)."""
        return _at_most(self.arrival[lo:hi], *(p[lo:hi] for p in self.old), self.job[lo:hi], key) | _at_most(
            self.arrival[lo:hi], *(p[lo:hi] for p in self.new), self.job[lo:hi], key)

    def lowest(self, lo: int, hi: int) -> Key:
        """The least old or new sort key of steps lo..hi-1."""
        parts = [np.concatenate([self.arrival[lo:hi]] * 2), np.concatenate([self.old[0][lo:hi], self.new[0][lo:hi]]),
                 np.concatenate([self.old[1][lo:hi], self.new[1][lo:hi]]), np.concatenate([self.job[lo:hi]] * 2)]
        keep = np.arange(parts[0].size)
        for part in parts:  # lexicographic minimum: narrow to the least value of each part in turn
            values = part[keep]
            keep = keep[values == values.min()]
        i = int(keep[0])
        return (float(parts[0][i]), float(parts[1][i]), float(parts[2][i]), int(parts[3][i]))


def _at_most(a: NDArray[np.float64], x: NDArray[np.float64], y: NDArray[np.float64], j: NDArray[np.int64], key: Key) -> NDArray[np.bool_]:
    """Elementwise (a, x, y, j) <= key, lexicographically."""
    a0, x0, y0, j0 = key
    return (a < a0) | ((a == a0) & ((x < x0) | ((x == x0) & ((y < y0) | ((y == y0) & (j <= j0))))))


class IncrementalPrioritization:
    """Prioritization (Fig. 4.2) of a run of candidates that each widen one job by one rack.

    The order is the sorted list of the jobs' sort keys; widening only records the move, and the
    list is brought up to date when a candidate is actually prioritized."""

    def __init__(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], checkpoint_every: int, order: Order = "thesis") -> None:
        n_jobs, self.n_racks = latency.shape
        self.online = scenario == "online"
        self.order_by = order
        self.checkpoint_every = checkpoint_every  # jobs between saved prefix states and give-up tests
        effective = effective_arrival(scenario, arrival).tolist()
        self.count: list[int] = counts.tolist()  # r_j
        self.duration: list[float] = latency[np.arange(n_jobs), counts - 1].tolist()  # L_j(r_j)
        self.key: list[Key] = [sort_key(order, a, c, d, j) for j, (a, c, d) in enumerate(zip(effective, self.count, self.duration))]
        self.order = sorted(self.key)  # the prioritization order
        self.moved: dict[int, Key] = {}  # jobs whose key changed since ``order`` was sorted: old key
        self.full_width = sorted(self.key[j] for j in range(n_jobs) if self.count[j] == self.n_racks)  # jobs on all R racks
        self.arrival_by_position = sorted(effective)  # the online order starts with A_j
        self.arrival_before = [0.0, *accumulate(self.arrival_by_position)]
        self.arrival_total = math.fsum(abs(a) for a in effective)
        self.completion = [0.0] * n_jobs  # finish - A_j, by position in the order
        self.checkpoints: list[Checkpoint] = [(Prefix(0, None, -math.inf, 0.0, 0.0, 0.0), [-0.0], [self.n_racks])]
        self.given_up: Prefix | None = None  # a prefix that proved the candidates sharing it cannot win
        self.doomed_from = math.inf  # ... when their total work is at least this
        self.witness: int | None = None  # ... or a later job that dooms them while it is not widened

    def copy(self) -> IncrementalPrioritization:
        """An independent copy, to walk to another candidate from this one's prefix states."""
        other = copy.copy(self)
        for name in ("key", "order", "count", "duration", "full_width", "completion", "checkpoints"):
            setattr(other, name, getattr(self, name).copy())
        other.moved = dict(self.moved)
        return other

    def widen(self, steps: Steps, lo: int, hi: int) -> None:
        """Apply steps lo..hi-1 (r_j += 1 each): forget the prefix states they change."""
        if hi <= lo:
            return
        key, moved, count = self.key, self.moved, self.count
        jobs = steps.job[lo:hi]
        if hi - lo == 1:  # one step, the common case online: its old key is the job's current one
            last: NDArray[np.int64] | list[int] = [0]
            lowest = key[int(jobs[0])]
        else:
            last = jobs.size - 1 - np.unique(jobs[::-1], return_index=True)[1]  # each job's last step
            lowest = steps.lowest(lo, hi)
        for j, c, duration in zip(jobs[last].tolist(), steps.count[lo:hi][last].tolist(), steps.duration[lo:hi][last].tolist()):
            if j not in moved:
                moved[j] = key[j]
            full_before = count[j] == self.n_racks
            count[j], self.duration[j] = c, duration
            key[j] = sort_key(self.order_by, key[j][0], c, duration, j)
            lowest = min(lowest, key[j])
            if c == self.n_racks and not full_before:
                insort(self.full_width, key[j])
        while self.checkpoints[-1][0].changed_by(lowest):
            self.checkpoints.pop()
        if self.given_up is not None and (self.given_up.changed_by(lowest) or (self.witness is not None and bool(np.any(jobs == self.witness)))):
            self.given_up, self.doomed_from, self.witness = None, math.inf, None

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

        Online, every later job completes at least L_j(r_j) after it could start (``_waiting_after``).
        Batch: F values only grow, so every later job adds at least r_j L_j(r_j) to sum_i F_i,
        whose mean bounds the makespan. SAFETY terms cover float rounding."""
        if not self.online:
            if prefix.max_finish >= best:
                return -math.inf
            free_sum = -sum(map(mul, neg_free, racks))
            margin = SAFETY * (best * self.n_racks + abs(free_sum) + abs(prefix.area))
            return best * self.n_racks - free_sum + prefix.area + margin
        n_jobs = len(self.order)
        waiting, level = self._waiting_after(prefix, -neg_free[-1], -neg_free[0])
        margin = SAFETY * (best * n_jobs + prefix.completion_sum + n_jobs * abs(level) + 2.0 * self.arrival_total + abs(prefix.duration_sum))
        limit = best * n_jobs + margin
        return -math.inf if prefix.completion_sum > limit else limit - prefix.completion_sum - waiting + prefix.duration_sum

    def _waiting_after(self, prefix: Prefix, earliest_free: float, latest_free: float, uplink_free: float = -math.inf) -> tuple[float, float]:
        """A lower bound on sum(T_j - A_j) over the jobs after ``prefix`` (online), and its last level.

        Every later job starts at or after min_i F_i. A later job on all R racks (full width) starts
        at or after max_i F_i, its arrival and what the earlier full-width jobs hold (``_full_width``),
        and every job arriving after it starts after the level it sets; up to FULL_WIDTH_JOBS of them are counted."""
        first = 0 if prefix.last_key is None else bisect_right(self.full_width, prefix.last_key)
        position, level, ready, waiting = prefix.jobs, earliest_free, latest_free, 0.0
        for arrival, _, _, j in self.full_width[first : first + FULL_WIDTH_JOBS]:
            end = bisect_right(self.arrival_by_position, arrival, position)  # may come before it
            waiting += self._waiting(level, position, end)
            position = end
            ready, uplink_free = self._full_width(j, arrival, ready, uplink_free)
            level = ready if ready > level else level
        return waiting + self._waiting(level, position, len(self.order)), level

    def _full_width(self, j: int, arrival: float, ready: float, uplink_free: float) -> tuple[float, float]:
        """Full-width job j, given the time ``ready`` from which the later jobs may start: it starts then or at
        its arrival and holds every rack for L_j(r_j), so the later jobs start after it finishes."""
        return (ready if ready >= arrival else arrival) + self.duration[j], uplink_free

    def _waiting(self, level: float, start: int, stop: int) -> float:
        """sum of max(level - A, 0) over the positions start .. stop-1 (arrivals sorted by position)."""
        waits = bisect_left(self.arrival_by_position, level, start, stop)
        return level * (waits - start) - (self.arrival_before[waits] - self.arrival_before[start])

    def objective(self, best: float, work_total: float) -> float | None:
        """The current candidate's objective, or None once it provably cannot beat ``best``."""
        self._sort()
        n_jobs, every = len(self.order), self.checkpoint_every
        max_finish_limit = math.inf if self.online else best  # checked on every job, cheaply
        completion_limit = best * n_jobs if self.online else math.inf
        prefix, neg_free, racks = self.checkpoints[-1]
        neg_free, racks = neg_free.copy(), racks.copy()
        max_finish, total, durations, area = prefix.max_finish, prefix.completion_sum, prefix.duration_sum, prefix.area
        order, completion, count, duration_of = self.order, self.completion, self.count, self.duration
        for position in range(prefix.jobs, n_jobs):
            arrival, _, _, j = order[position]
            need = width = count[j]
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
            duration = duration_of[j]
            start = top if top >= arrival else arrival  # T_j = max{max F_i, A_j}
            finish = start + duration  # F_i := T_j + L_j(r_j)
            completion[position] = done = finish - arrival
            total += done
            durations += duration
            area += width * duration
            if finish > max_finish:
                max_finish = finish
            slot = bisect_left(neg_free, -finish)
            if slot < len(neg_free) and neg_free[slot] == -finish:
                racks[slot] += width
            else:
                neg_free.insert(slot, -finish)
                racks.insert(slot, width)
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


class SlotPrioritization(IncrementalPrioritization):
    """``IncrementalPrioritization`` with slot-aware sharing (docs/planner.md): a prefix state is every
    rack's reservations (``slots.RackSlots``), and a batch candidate's work is its slot-time
    sum_j r_j d_j(r_j) L_j(r_j)."""

    def __init__(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], checkpoint_every: int,
                 order: Order, slots: SlotDemand) -> None:
        super().__init__(scenario, latency, arrival, counts, checkpoint_every, order)
        self.demand, self.capacity, self.slots = slots.demand, slots.capacity, slots
        self.checkpoints = [(self.checkpoints[0][0], RackSlots(self.n_racks, slots.capacity).snapshot())]  # type: ignore[list-item]
        self.need = slots.demand[np.arange(len(self.count)), counts - 1]  # d_j(r_j)
        self.rack_time = counts * latency[np.arange(len(self.count)), counts - 1]  # r_j L_j(r_j)
        self.per_need = self._per_need(np.arange(len(self.count)))  # every job's, kept up to date by ``widen``
        self.per_need_updates = 0  # since it was last summed afresh (its rounding grows with them)
        self.arrival_at = np.array(self.arrival_by_position)
        self.by_position: tuple[NDArray[np.int64], NDArray[np.bool_]] | None = None  # ``_by_position``, for the order as sorted
        self.booked: list[tuple[float, NDArray[np.int64]]] = [(0.0, NO_RACKS)] * len(self.count)  # (T_j, R_j) by position

    def copy(self) -> SlotPrioritization:
        other = super().copy()
        assert isinstance(other, SlotPrioritization)
        other.need, other.rack_time, other.per_need = self.need.copy(), self.rack_time.copy(), (self.per_need[0].copy(), self.per_need[1].copy())
        other.booked = self.booked.copy()
        return other

    def widen(self, steps: Steps, lo: int, hi: int) -> None:
        super().widen(steps, lo, hi)
        if hi <= lo:
            return
        rack_time, slot_time = self.per_need
        self.per_need_updates += hi - lo
        widened = steps.job[lo:hi]
        jobs, from_end = np.unique(widened[::-1], return_index=True)
        last = widened.size - 1 - from_end  # each job's last step
        for need, time, sign in ((self.need[jobs], self.rack_time[jobs], -1.0),
                                 (self.demand[jobs, steps.count[lo:hi][last] - 1], steps.count[lo:hi][last] * steps.duration[lo:hi][last], 1.0)):
            np.add.at(rack_time, need, sign * time)
            np.add.at(slot_time, need, sign * time * need)
        self.need[jobs], self.rack_time[jobs] = need, time

    def _per_need(self, jobs: NDArray[np.int64] | list[int]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The rack-time and slot-time of ``jobs`` per demand d = 0..S."""
        need, rack_time = self.need[jobs], self.rack_time[jobs]
        size = self.capacity + 1
        return np.bincount(need, weights=rack_time, minlength=size), np.bincount(need, weights=rack_time * need, minlength=size)

    def _later(self, position: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The rack-time and slot-time of the jobs from ``position`` on in the order, per demand d = 0..S."""
        if self.per_need_updates > PER_NEED_UPDATES:
            self.per_need, self.per_need_updates = self._per_need(np.arange(len(self.count))), 0
        if position > len(self.order) // 2:
            return self._per_need([key[3] for key in self.order[position:]])
        before = self._per_need([key[3] for key in self.order[:position]])
        return self.per_need[0] - before[0], self.per_need[1] - before[1]

    def crowded(self, limit: float, racks: RackSlots, later_rack: NDArray[np.float64], later_slot: NDArray[np.float64]) -> bool:
        """Batch: whether the later jobs (their rack-time and slot-time per demand) cannot all finish before
        ``limit``. A job of d > theta slots runs on a rack only while it has more than theta slots free of the
        reservations booked so far, from its L_i on (``RackSlots.room_by_free``): so for every theta the
        later slot-time of such jobs must fit in that room; and if 2 d > S no two of them share a rack at
        a time, so their rack-time must fit in the rack-seconds of that room too."""
        if limit == math.inf:
            return False
        seconds = racks.room_by_free(limit)
        levels = np.arange(self.capacity + 1)
        room_slot, room_rack = _at_least(seconds * levels), _at_least(seconds)  # [x]: the room with at least x slots free
        need_slot, need_rack = _at_least(later_slot), _at_least(later_rack)  # [x]: the jobs of at least x slots
        alone = self.capacity // 2 + 1  # 2 x > S
        slot_margin = SAFETY * (limit * self.n_racks * self.capacity + need_slot[1])
        rack_margin = SAFETY * (limit * self.n_racks + need_rack[1])
        return bool(np.any(need_slot[1:] > room_slot[1:] + slot_margin) or np.any(need_rack[alone:] > room_rack[alone:] + rack_margin))

    def _waiting_after(self, prefix: Prefix, earliest_free: float, latest_free: float, uplink_free: float = -math.inf) -> tuple[float, float]:
        """As ``IncrementalPrioritization._waiting_after``, and a later full-width job f also blocks, until it
        finishes, every job after it that cannot share a rack with it: one of d_j > S - d_f slots (f holds d_f
        of every rack), or, if f holds the uplinks, one that holds its racks' uplinks; so is a later
        full-width job of the two kinds. Counted per position for the first BLOCKING_FULL_WIDTH_JOBS of them; the
        larger of that and the inherited bound (both bounds) is returned."""
        waiting, level = super()._waiting_after(prefix, earliest_free, latest_free, uplink_free)
        first = 0 if prefix.last_key is None else bisect_right(self.full_width, prefix.last_key)
        later_full = self.full_width[first : first + BLOCKING_FULL_WIDTH_JOBS]
        if not later_full:
            return waiting, level
        need_at, uplink_at = self._by_position()
        start_at = np.full(len(self.order) - prefix.jobs, earliest_free)  # a lower bound on each later position's start
        position, ready, finished = prefix.jobs, latest_free, []
        for arrival, _, _, j in later_full:
            end = bisect_right(self.arrival_by_position, arrival, position)  # may come before it
            need, holds = int(self.need[j]), self.slots.uplink(j, self.n_racks)
            start, uplink_free = self._full_width(j, arrival, ready, uplink_free)
            start = max([start, *(finish for other, other_holds, finish in finished if need + other > self.capacity or (holds and other_holds))])
            finish = start + self.duration[j]
            uplink_free = finish if holds else uplink_free
            after = start_at[end - prefix.jobs :]
            blocked = (need_at[end:] > self.capacity - need) | (uplink_at[end:] & holds)
            after[:] = np.maximum(after, np.where(blocked, finish, start))
            finished.append((need, holds, finish))
            position, ready = end, start
        waits = start_at - self.arrival_at[prefix.jobs :]
        return max(waiting, float(waits[waits > 0].sum())), max(level, float(start_at.max()))

    def _by_position(self) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """d_j(r_j) and whether job j holds its racks' uplinks, by position in the current order."""
        if self.by_position is None:
            jobs = np.array([key[3] for key in self.order])
            counts = np.array(self.count)[jobs]
            core = np.ones(jobs.size, dtype=bool) if self.slots.core is None else self.slots.core[jobs]
            self.by_position = self.need[jobs], (counts > 1) & core
        return self.by_position

    def _full_width(self, j: int, arrival: float, ready: float, uplink_free: float) -> tuple[float, float]:
        """A full-width job is every rack's last start: later jobs start at or after its start, not its finish.
        If it holds the uplinks (``SlotDemand.uplink``) it starts at or after ``uplink_free``, the last end
        of an uplink held before it on any rack, and holds every rack's uplink until it finishes."""
        start = ready if ready >= arrival else arrival
        if not self.slots.uplink(j, self.n_racks):
            return start, uplink_free
        start = start if start >= uplink_free else uplink_free
        return start, start + self.duration[j]

    def doomed_work(self, best: float, prefix: Prefix, racks: RackSlots) -> float:  # type: ignore[override]
        """As ``IncrementalPrioritization.doomed_work``. Batch: no later job uses a slot before its rack's last
        start L_i, nor one a running reservation holds, so the makespan is at least (blocked slot-time + later
        slot-time) / (R S). Online: every later job starts at or after min_i L_i."""
        if not self.online:
            if prefix.max_finish >= best:
                return -math.inf
            blocked, capacity = racks.blocked(), self.n_racks * self.capacity
            margin = SAFETY * (best * capacity + abs(blocked) + abs(prefix.area))
            return best * capacity - blocked + prefix.area + margin
        n_jobs = len(self.order)
        last_starts = racks.last_starts()
        earliest = float(last_starts.min())
        earliest = earliest if earliest > -math.inf else self.arrival_by_position[0]  # a rack no job used yet: no wait
        waiting, level = self._waiting_after(prefix, earliest, float(last_starts.max()), racks.uplink_frees())
        margin = SAFETY * (best * n_jobs + prefix.completion_sum + n_jobs * abs(level) + 2.0 * self.arrival_total + abs(prefix.duration_sum))
        limit = best * n_jobs + margin
        return -math.inf if prefix.completion_sum > limit else limit - prefix.completion_sum - waiting + prefix.duration_sum

    def placed(self, scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64]) -> Callable[[], Schedule]:
        """The Schedule of the candidate last prioritized to the end, as ``slots.prioritize`` gives it, built on call:
        the positions before the prefix state it resumed from were booked by the candidate that saved it, the same jobs on the same racks
        (docs/planner.md "The winner as it was placed")."""
        return partial(schedule, scenario, latency, arrival, np.array(self.count), [key[3] for key in self.order], self.booked.copy())

    def shortest_dooming_prefix(self, limit: float, j: int) -> Prefix | None:
        """Batch: the shortest checkpointed prefix after which job j, placed later, finishes at or after
        ``limit`` whatever comes between (or None). Reservations only accumulate and L_i only grows, so j
        starts at or after the r_j-th smallest e_i of any earlier state: the bound grows with the prefix."""
        width, need, duration = self.count[j], int(self.demand[j, self.count[j] - 1]), self.duration[j]
        low, high = 0, len(self.checkpoints)  # checkpoints[high:] doom j (none known yet)
        while low < high:
            middle = (low + high) // 2
            prefix, snapshot = self.checkpoints[middle]
            earliest = RackSlots(self.n_racks, self.capacity, snapshot).earliest(0.0, need, self.slots.uplink(j, width))  # type: ignore[arg-type]
            start = float(np.partition(earliest, width - 1)[width - 1])
            if prefix.jobs and start + duration >= limit:
                high = middle
            else:
                low = middle + 1
        return self.checkpoints[high][0] if high < len(self.checkpoints) else None

    def objective(self, best: float, work_total: float) -> float | None:
        """The current candidate's objective, or None once it provably cannot beat ``best``."""
        self._sort()
        self.by_position = None
        n_jobs, every = len(self.order), self.checkpoint_every
        saved_every = every * (ONLINE_TESTS_PER_SNAPSHOT if self.online else 1)  # a snapshot costs more than a give-up test
        max_finish_limit = math.inf if self.online else best
        completion_limit = best * n_jobs if self.online else math.inf
        prefix, snapshot = self.checkpoints[-1]
        racks = RackSlots(self.n_racks, self.capacity, snapshot)  # type: ignore[arg-type]
        max_finish, total, durations, area = prefix.max_finish, prefix.completion_sum, prefix.duration_sum, prefix.area
        order, completion, count, duration_of, demand, uplink = self.order, self.completion, self.count, self.duration, self.demand, self.slots.uplink
        booked = self.booked
        later_rack, later_slot = self._later(prefix.jobs) if not self.online else (None, None)
        for position in range(prefix.jobs, n_jobs):
            arrival, _, _, j = order[position]
            width, duration = count[j], duration_of[j]
            need = int(demand[j, width - 1])
            booked[position] = placed = racks.place(arrival, need, width, duration, uplink(j, width))
            finish = placed[0] + duration
            completion[position] = done = finish - arrival
            total += done
            durations += duration
            area += width * need * duration
            if later_rack is not None:
                later_rack[need] -= width * duration
                later_slot[need] -= width * need * duration
            if finish > max_finish:
                max_finish = finish
            jobs = position + 1
            if max_finish >= max_finish_limit or total > completion_limit or (jobs % every == 0 and (self.online or jobs % _test_spacing(jobs, every) == 0)):
                if max_finish >= max_finish_limit and (shorter := self.shortest_dooming_prefix(best, j)) is not None:
                    self.given_up, self.doomed_from, self.witness = shorter, -math.inf, j  # j is late after a shorter prefix
                    return None
                prefix = Prefix(jobs, order[position], max_finish, total, durations, area)
                doomed_from = self.doomed_work(best, prefix, racks)
                crowded_test = later_rack is not None and jobs % (every if jobs < CROWDED_TESTS_DENSE else every * CROWDED_TESTS_SPARSE) == 0
                if work_total >= doomed_from or (crowded_test and self.crowded(best, racks, later_rack, later_slot)):
                    self.given_up, self.doomed_from = prefix, doomed_from  # crowded: this candidate only, doomed_from still holds
                    return None
                if jobs % saved_every == 0:
                    self.checkpoints.append((prefix, racks.snapshot()))  # type: ignore[arg-type]
        return math.fsum(completion) / n_jobs if self.online else max_finish


def _test_spacing(jobs: int, every: int) -> int:
    """Batch with sharing: the jobs between give-up tests (each saving the prefix state) around position ``jobs``:
    ``every`` over the first DENSE_TESTS tests, then doubling as ``jobs`` doubles (1/16 to 1/32 of the jobs placed
    with 16). A candidate prioritized to the end is tested O(DENSE_TESTS log J) times instead of J / every, and one
    that fails deep places at most 1/DENSE_TESTS more jobs than with a test every ``every``. Any subset of tests is
    exact (docs/planner.md "Sparser tests deep in the batch order")."""
    return every << max(0, (jobs // (every * DENSE_TESTS)).bit_length() - 1)


def _at_least(per_level: NDArray[np.float64]) -> NDArray[np.float64]:
    """[x] = the sum of ``per_level`` over levels x and up."""
    return np.cumsum(per_level[::-1])[::-1]


def _check(latency: NDArray[np.float64], arrival: NDArray[np.float64], slots: SlotDemand | None) -> None:
    if latency.ndim != 2 or latency.shape[0] != arrival.size or min(latency.shape) < 1:
        raise PlanningError(f"latency must be J x R with J, R >= 1 and J = {arrival.size} arrivals, got {latency.shape}")
    if not (np.all(np.isfinite(latency)) and np.all(latency >= 0) and np.all(np.isfinite(arrival))):
        raise PlanningError("latencies must be finite and >= 0, arrivals finite")
    if slots is not None and (slots.demand.shape != latency.shape or not np.all((slots.demand >= 1) & (slots.demand <= slots.capacity))):
        raise PlanningError(f"slot demand must be J x R = {latency.shape} with values in 1..{slots.capacity}")


# jobs between checkpoints, tuned on W1-like workloads: online candidates often resume mid-order;
# a batch candidate usually moves its job to the front, and a batch give-up test costs O(R)
CHECKPOINT_EVERY: dict[Scenario, int] = {"batch": 32, "online": 8}
# with slot-aware sharing a batch candidate's placements cost O(R) each and its give-up comes a few jobs after it
# resumes; online, most candidates resume at the start and give up at the first test (the later full-width jobs' waits)
SLOT_CHECKPOINT_EVERY: dict[Scenario, int] = {"batch": 4, "online": 4}
# batch with sharing: the room-by-free-slots test (``crowded``) at every give-up test over the first 64 jobs, where
# losing candidates fail, then at every 8th (it costs some 10 numpy calls; candidates that win pass all of them)
CROWDED_TESTS_DENSE, CROWDED_TESTS_SPARSE = 64, 8
DENSE_TESTS = 16  # batch with sharing: give-up tests every checkpoint_every jobs at first, then sparser (``_test_spacing``)
PER_NEED_UPDATES = 4096  # widenings between fresh sums of the later jobs' time per demand: rounding stays far below SAFETY
ONLINE_TESTS_PER_SNAPSHOT = 4  # online with sharing, the prefix state is saved at every 4th give-up test only


WALK_STEPS = 1024  # a gallop's probe starts from a copy of a prioritized candidate at most this many steps before it
PROBES = 4  # candidates with the lowest objective bounds evaluated first, for a good incumbent
NO_RACKS = np.zeros(0, dtype=np.int64)


def _lowest(bound: NDArray[np.float64], count: int) -> list[int]:
    """The ``count`` candidates of least (bound, k), in that order: one argmin each (a partition was slow on
    the hundreds of thousands of equal bounds of slots mode, 0.13 s at 2,000 x 400)."""
    rest, lowest = bound.copy(), []
    for _ in range(min(count, bound.size)):
        k = int(rest.argmin())  # the first of equal bounds: the lowest k
        lowest.append(k)
        rest[k] = math.inf
    return lowest


def _gallop(k: int, candidates: int) -> list[int]:
    """With sharing: candidates k + 1, k + 2, k + 4, ... probed after the incumbent k (in batch candidate 0 or
    a probe, before the sweep; in both scenarios each one the sweep finds). Long runs of candidates there each beat the one before (the longest job widened again), and
    each was evaluated in full; a later, better incumbent lets the bounds skip most of them (docs/planner.md)."""
    return [k + step for step in (1 << i for i in range(candidates.bit_length())) if k + step < candidates]


def _limit(best: float, winner: int, k: int) -> float:
    """Candidate k wins iff its objective is below this: ties go to the earlier candidate."""
    return math.nextafter(best, math.inf) if k < winner else best


def _consider(run: IncrementalPrioritization, k: int, bounds: CandidateBounds, best: float, winner: int) -> tuple[float, int]:
    """The best (objective, candidate) after looking at candidate k, the one ``run`` is at. What the look
    proves is kept as k's objective bound: its objective, or the limit it cannot beat (the limit only falls,
    so a candidate given up on once is not prioritized again)."""
    limit = _limit(best, winner, k)
    work = float(bounds.work[k])
    if k == winner or bounds.objective[k] >= limit or work >= run.doomed_from:
        return best, winner
    value = run.objective(limit, work)
    bounds.objective[k] = max(bounds.objective[k], limit if value is None else value)
    return (value, k) if value is not None and value < limit else (best, winner)


def _next_candidate(run: IncrementalPrioritization, steps: Steps, objective_bound: NDArray[np.float64], work: NDArray[np.float64], start: int,
                    first: int, best: float, winner: int) -> int:
    """The first candidate (offset in the chunk) from ``start`` on that ``_consider`` must see: one whose
    bound lets it win and that ``run``'s last give-up does not rule out, or one whose step undoes that
    give-up. The candidates before it are skipped in numpy, in windows that double."""
    size, window = objective_bound.size, 64
    if start < size:  # the next candidate itself, without numpy (online, most candidates looked at are next to each other)
        k, bound = first + start, float(objective_bound[start])
        if k != winner and (bound <= best if k < winner else bound < best) and (run.given_up is None or float(work[start]) < run.doomed_from):
            return start
    while start < size:
        stop = min(start + window, size)
        k = np.arange(first + start, first + stop)
        bound = objective_bound[start:stop]
        may_win = np.where(k < winner, bound <= best, bound < best) & (k != winner)  # ``_limit``: ties go to the earlier
        if run.given_up is not None:
            may_win = (may_win & (work[start:stop] < run.doomed_from)) | steps.touches(start, stop, run.given_up.last_key)
            if run.witness is not None:
                may_win |= steps.job[start:stop] == run.witness
        hit = np.flatnonzero(may_win)
        if hit.size:
            return start + int(hit[0])
        start, window = stop, window * 2
    return size


def plan(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], order: Order = "thesis", checkpoint_every: int | None = None, steps_per_chunk: int = 1 << 16,
         slots: SlotDemand | None = None, network: RackChoice | None = None) -> Schedule:
    """Same contract and answer as ``reference.plan``: the first candidate with the best objective.

    With ``slots`` (slot-aware sharing) the same sweep prioritizes candidates over every rack's
    reservations (``SlotPrioritization``), with rack identities: the winner's Schedule is the one its
    prioritization placed (``slots.prioritize`` step by step).

    A few candidates with the lowest bounds are prioritized first, for a good incumbent; then every
    candidate is visited in provisioning order, skipping those that provably cannot beat it.
    ``checkpoint_every`` and ``steps_per_chunk`` tune speed and memory only (tests make them small)."""
    _check(latency, arrival, slots)
    if network is not None:
        return plan_network(scenario, network, arrival, order, slots)
    if slots is not None and slots.apart:  # the interference rule (docs/paragon.md) has no fast version: the reference
        return reference.plan(scenario, latency, arrival, order, slots)
    n_jobs = latency.shape[0]
    every = checkpoint_every or (CHECKPOINT_EVERY if slots is None else SLOT_CHECKPOINT_EVERY)[scenario]
    prov = provisioning(latency)
    bounds = lower_bounds(scenario, latency, arrival, prov, slots)

    def prioritization(counts: NDArray[np.int64]) -> IncrementalPrioritization:
        if slots is None:
            return IncrementalPrioritization(scenario, latency, arrival, counts, every, order)
        return SlotPrioritization(scenario, latency, arrival, counts, every, order, slots)

    effective = effective_arrival(scenario, arrival)
    won: list[Callable[[], Schedule]] = []  # with sharing: the winner's Schedule as its prioritization placed it

    def consider(run: IncrementalPrioritization, k: int, best: float, winner: int) -> tuple[float, int]:
        """``_consider``; with sharing a new winner's placements are kept, so it is not prioritized again at the end."""
        new_best, new_winner = _consider(run, k, bounds, best, winner)
        if new_winner != winner and isinstance(run, SlotPrioritization):
            won[:] = [run.placed(scenario, latency, arrival)]
        return new_best, new_winner

    def probe(k: int, best: float, winner: int, states: dict[int, IncrementalPrioritization] | None = None) -> tuple[float, int]:
        """``_consider`` candidate k; with ``states`` (candidate -> its prioritization, never changed) k starts from
        a copy of the nearest one at most WALK_STEPS before it, keeping the prefix states its steps leave alone."""
        near = max((c for c in states or () if c < k <= c + WALK_STEPS), default=None)
        if near is None:
            run = prioritization(prov.counts(k, n_jobs))
        else:
            run = states[near].copy()  # type: ignore[index]
            run.widen(Steps.of(order, latency, effective, prov.widened[near:k], prov.new_count[near:k]), 0, k - near)
        best, winner = consider(run, k, best, winner)
        if states is not None and winner == k:
            states[k] = run
        return best, winner

    def gallop(best: float, winner: int, origin: int, source: IncrementalPrioritization | None = None, farthest_first: bool = False) -> tuple[float, int]:
        states = {} if source is None else {origin: source}
        ahead = _gallop(origin, prov.candidates)
        for k in reversed(ahead) if farthest_first else ahead:
            best, winner = probe(k, best, winner, states)
        low, high = winner, next((k for k in ahead if k > winner), prov.candidates)
        while high - low > 1:  # bisect towards the end of the improving run between the incumbent and the next probe
            middle = (low + high) // 2
            best, winner = probe(middle, best, winner, states)
            low, high = (middle, high) if winner == middle else (low, middle)
        return best, winner

    best, winner = math.inf, prov.candidates
    if slots is not None:  # candidate 0's gallop first: the lowest bounds are far off (docs/planner.md)
        # its probes need only beat candidate 0's bound (its objective is at least that); candidate 0 is looked at first only if none does
        # (a look against any limit is exact: docs/planner.md "Candidate 0's gallop against candidate 0's bound")
        best, winner = gallop(float(bounds.objective[0]), winner, 0, farthest_first=True)
        if winner == prov.candidates:
            best, winner = gallop(*probe(0, math.inf, winner), 0, farthest_first=True)
    for k in _lowest(bounds.objective, PROBES):
        best, winner = probe(k, best, winner)
    run = prioritization(prov.counts(0, n_jobs))
    best, winner = consider(run, 0, best, winner)
    for first in range(1, prov.candidates, steps_per_chunk):  # chunks bound the memory of the step arrays
        last = min(first + steps_per_chunk, prov.candidates)  # candidates first .. last-1, made by steps first-1 .. last-2
        steps = Steps.of(order, latency, effective, prov.widened[first - 1 : last - 1], prov.new_count[first - 1 : last - 1])
        objective_bound, work = bounds.objective[first:last], bounds.work[first:last]
        applied = 0  # steps 0 .. applied-1 of the chunk are applied to ``run``
        while (i := _next_candidate(run, steps, objective_bound, work, applied, first, best, winner)) < last - first:
            run.widen(steps, applied, i + 1)
            applied = i + 1
            best, winner = consider(run, first + i, best, winner)
            if slots is not None and winner == first + i:  # the sweep found a better candidate: gallop ahead of it too
                best, winner = gallop(best, winner, winner, run)
        run.widen(steps, applied, last - first)
    if slots is None:
        return prioritize(scenario, latency, arrival, prov.counts(winner, n_jobs), order)
    return won[-1]()


def plan_network(scenario: Scenario, network: RackChoice, arrival: NDArray[np.float64], order: Order, slots: SlotDemand | None = None) -> Schedule:
    """``reference.plan`` with a network latency matrix, pruned: racks are no longer interchangeable, so a
    candidate that may win is prioritized with rack identities (``reference.prioritize``); the others are
    skipped by the bounds of the floor table, which no actual duration undercuts (docs/planner.md)."""
    if slots is not None:
        raise PlanningError("slot-aware sharing does not take a network latency matrix")
    table, n_jobs = network.floor, network.floor.shape[0]
    prov = provisioning(table)
    bounds = lower_bounds(scenario, table, arrival, prov)
    best, winner = math.inf, prov.candidates

    def consider(k: int, counts: NDArray[np.int64]) -> None:
        nonlocal best, winner
        limit = _limit(best, winner, k)
        if k != winner and bounds.objective[k] < limit:
            value = _network_objective(scenario, network, arrival, counts, order, limit)
            if value is not None and value < limit:
                best, winner = value, k

    for k in _lowest(bounds.objective, PROBES):
        consider(k, prov.counts(k, n_jobs))
    counts = np.ones(n_jobs, dtype=np.int64)
    consider(0, counts)
    for k in range(1, prov.candidates):
        counts[prov.widened[k - 1]] += 1
        consider(k, counts)
    return prioritize(scenario, table, arrival, prov.counts(winner, n_jobs), order, network=network)


def _network_objective(scenario: Scenario, network: RackChoice, arrival: NDArray[np.float64], counts: NDArray[np.int64], order: Order,
                       limit: float) -> float | None:
    """``reference.prioritize(..., network=network).objective``, or None once a prefix shows it is not below
    ``limit``: in batch a finish at or past it; online the completions so far plus the later jobs' floors."""
    table = network.floor
    n_jobs, n_racks = table.shape
    floor = table[np.arange(n_jobs), counts - 1]
    effective = effective_arrival(scenario, arrival)
    jobs = reference.prioritization_order(order, counts, floor, effective)
    later = np.append(np.cumsum(floor[jobs][::-1])[::-1], 0.0).tolist()  # the floors of positions p.. on
    free_at, finish = np.zeros(n_racks), np.zeros(n_jobs)
    online, done, doomed = scenario == "online", 0.0, limit * n_jobs * (1 + SAFETY)
    # a completion fl(fl(T + L) - A) may fall short of L by 2^-52 (A + L): the later floors allow for it (as lower_bounds)
    slack = 4.0 * np.finfo(np.float64).eps * float(np.abs(effective).sum())
    for position, j in enumerate(jobs):
        chosen, took = network.racks(j, int(counts[j]), free_at, float(effective[j]))
        start = max(free_at[chosen].max(), effective[j])
        free_at[chosen] = finish[j] = start + took
        if not online and finish[j] >= limit:
            return None
        done += finish[j] - effective[j]
        if online and (done + later[position + 1] - slack) * (1 - SAFETY) >= doomed:
            return None
    return objective(scenario, finish, effective)
