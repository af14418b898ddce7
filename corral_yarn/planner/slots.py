"""Slot-aware prioritization, fast (docs/planner.md "Slot-aware sharing"): the same Schedule as
``reference.prioritize_slots``, with every rack's free slots over time held as arrays.

Rack i keeps L_i, the start of the last job placed on it (no job starts there earlier), F_i, the
last end of a reservation on it (the reference's choice key), and the reservations still running
after L_i as (end, slots) sorted by end. Its held slots only fall after L_i, so the earliest time
it takes a job of d slots arriving at A is e_i = max(A, L_i, the first end after which at most
S - d slots stay held), and for a job that holds its racks' uplinks (``SlotDemand.uplink``) also at or
after U_i, the last end of a reservation holding rack i's uplink; the reference's earliest T, at which r_j racks admit the job, is the r_j-th
smallest e_i, and the racks admitting it are those with e_i <= T. When the r_j racks of smallest F_i are
free by A, T = A on them without computing e_i (``RackSlots._idle``).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Scenario, Schedule, SlotDemand, effective_arrival, objective


@dataclass(frozen=True)
class Snapshot:
    """A copy of a ``RackSlots`` state, to resume from."""

    row_of: NDArray[np.int64]  # rack i's row
    last_start: NDArray[np.float64]  # per row
    free_at: NDArray[np.float64]
    ends: NDArray[np.float64]
    slots: NDArray[np.int64]
    uplink_free: NDArray[np.float64]  # per row: U_i


class RackSlots:
    """The reservations on R racks of ``capacity`` slots each, as the slot-aware planner books them.

    Racks in the same state share a row: all R start in one, a job taking every rack of a row
    updates it in place, and one taking some of them moves those to a copy (lowest indices first,
    by the (F_i, i) rule). Wide jobs, first in the batch order, split few rows, so a placement
    costs O(R + G K) for G rows in use, instead of O(R K)."""

    def __init__(self, n_racks: int, capacity: int, snapshot: Snapshot | None = None) -> None:
        self.capacity = capacity
        self.racks = np.arange(n_racks)
        if snapshot is None:
            snapshot = Snapshot(np.zeros(n_racks, dtype=np.int64), np.full(1, -np.inf), np.zeros(1), np.full((1, 1), np.inf), np.zeros((1, 1), dtype=np.int64), np.full(1, -np.inf))
        self.row_of = snapshot.row_of.copy()
        self.rows = snapshot.free_at.size  # rows in use; the arrays have room for R (at most R rows hold a rack)
        self.last_start = self._room(snapshot.last_start, -np.inf)  # L_i, -inf before any job
        self.free_at = self._room(snapshot.free_at, 0.0)  # F_i, 0 before any job (as the reference)
        self.ends = self._room(snapshot.ends, np.inf)  # running reservations' ends, ascending, padded with inf
        self.slots = self._room(snapshot.slots, 0)  # their slots, padded with 0
        self.uplink_free = self._room(snapshot.uplink_free, -np.inf)  # U_i, the last end of a job holding the uplink (-inf before any)
        self.held = self.slots.sum(axis=1)  # slots held at L_i
        self.held_after = self.held[:, None] - np.cumsum(self.slots, axis=1)  # slots still held after each end
        self.size = np.bincount(self.row_of, minlength=n_racks)  # racks per row
        self.rack_free = self.free_at[self.row_of]  # F_i per rack, for the idle-rack shortcut of ``place``

    def _room(self, used: NDArray[Any], pad: float) -> NDArray[Any]:
        """``used`` (the rows in use) in an array with room for R rows."""
        out = np.full((self.racks.size, *used.shape[1:]), pad, dtype=used.dtype)
        out[: used.shape[0]] = used
        return out

    def snapshot(self) -> Snapshot:
        used = slice(0, self.rows)
        return Snapshot(self.row_of.copy(), self.last_start[used].copy(), self.free_at[used].copy(), self.ends[used].copy(), self.slots[used].copy(),
                        self.uplink_free[used].copy())

    def last_starts(self) -> NDArray[np.float64]:
        """L_i per rack."""
        return self.last_start[self.row_of]

    def uplink_frees(self) -> float:
        """max_i U_i: no job holding the uplinks of every rack starts before it."""
        return float(self.uplink_free[: self.rows].max())

    def earliest(self, arrival: float, need: int, uplink: bool = False) -> NDArray[np.float64]:
        """e_i: the earliest time from which rack i can hold ``need`` more slots, at or after A and L_i
        (and U_i with ``uplink``)."""
        used = slice(0, self.rows)
        room = self.capacity - need
        first = np.count_nonzero(self.held_after[used] > room, axis=1)  # held_after falls along a row
        wait = np.where(self.held[used] > room, self.ends[np.arange(self.rows), first], -np.inf)
        if uplink:
            wait = np.maximum(wait, self.uplink_free[used])
        return np.maximum(np.maximum(self.last_start[used], wait), arrival)[self.row_of]

    def place(self, arrival: float, need: int, width: int, duration: float, uplink: bool = False) -> tuple[float, NDArray[np.int64]]:
        """Book a job (Fig. 4.2 over slots): its start T and its racks, the r_j smallest (F_i, i) of
        those admitting it at T; with ``uplink`` it holds their uplinks too."""
        idle = self._idle(arrival, width, need, duration, uplink)
        if idle is not None:
            return arrival, idle
        if width == 1 and not uplink:
            return self._place_one(arrival, need, duration)
        earliest = self.earliest(arrival, need, uplink)
        if width == earliest.size:
            start, chosen = float(earliest.max()), self.racks
        else:
            start = float(np.partition(earliest, width - 1)[width - 1])
            key = np.where(earliest <= start, self.rack_free, np.inf)
            chosen = _smallest(key, width)
        rows = self._rows_of(chosen)
        self._book(rows, start, start + duration, need)
        if uplink:
            self.uplink_free[rows] = np.maximum(self.uplink_free[rows], start + duration)
        self.rack_free[chosen] = self.free_at[self.row_of[chosen]]
        return start, chosen

    def _place_one(self, arrival: float, need: int, duration: float) -> tuple[float, NDArray[np.int64]]:
        """``place`` for a job on one rack: the first (F_i, i) of the racks with the smallest e_i, booked in its row alone."""
        used = slice(0, self.rows)
        room = self.capacity - need
        first = np.count_nonzero(self.held_after[used] > room, axis=1)
        wait = np.where(self.held[used] > room, self.ends[np.arange(self.rows), first], -np.inf)
        earliest = np.maximum(np.maximum(self.last_start[used], wait), arrival)
        start = float(earliest.min())
        rack = int(np.where(earliest[self.row_of] <= start, self.rack_free, np.inf).argmin())
        row = self._own_row(rack)
        self._book_row(row, start, start + duration, need)
        self.rack_free[rack] = self.free_at[row]
        return start, np.array([rack])

    def _own_row(self, rack: int) -> int:
        """Rack ``rack``'s row, after moving it to a copy of its row if it shares one."""
        row = int(self.row_of[rack])
        if self.size[row] == 1:
            return row
        copy = self.rows
        for array in (self.last_start, self.free_at, self.ends, self.slots, self.held, self.held_after, self.uplink_free):
            array[copy] = array[row]
        self.size[row] -= 1
        self.size[copy] = 1
        self.rows += 1
        self.row_of[rack] = copy
        return copy

    def _book_row(self, row: int, start: float, end: float, need: int) -> None:
        """``_book`` for one row, on Python lists (its few running reservations): those over by ``start`` leave,
        the new one goes in after those ending by ``end``."""
        booked = int(np.count_nonzero(self.slots[row]))
        ends, slots = self.ends[row, :booked].tolist(), self.slots[row, :booked].tolist()
        if end > start:  # a job of no duration holds no slot after its start
            at = bisect_right(ends, end)
            ends.insert(at, end)
            slots.insert(at, need)
        done = bisect_right(ends, start)
        del ends[:done], slots[:done]
        running = len(ends)
        if running >= self.ends.shape[1]:  # keep a padding column
            self._widen(running + 1)
        held = sum(slots)
        self.ends[row, :running], self.ends[row, running:] = ends, np.inf
        self.slots[row, :running], self.slots[row, running:] = slots, 0
        self.held_after[row, :running], self.held_after[row, running:] = [held - s for s in accumulate(slots)], 0
        self.held[row] = held
        self.free_at[row] = end if self.last_start[row] == -np.inf else max(float(self.free_at[row]), end)
        self.last_start[row] = start

    def _idle(self, arrival: float, width: int, need: int, duration: float, uplink: bool) -> NDArray[np.int64] | None:
        """The shortcut of light load: if the r_j smallest (F_i, i) are at most A, every reservation on those
        racks has ended by A (and L_i, U_i <= F_i), so each admits the job at A, no rack admits it earlier,
        and they are the racks ``place`` takes. Their state after the job is its reservation alone."""
        free = self.rack_free
        if width == 1:
            rack = int(free.argmin())  # the first of equal keys: the lowest index
            if free[rack] > arrival:
                return None
            self._settle_one(rack, arrival, need, duration, uplink)
            return np.array([rack])
        chosen = self.racks if width == free.size else _smallest(free, width)
        if free[chosen].max() > arrival:
            return None
        rows = self._rows_of(chosen)
        end = arrival + duration
        self._settled(rows, arrival, end, need)
        if uplink:
            self.uplink_free[rows] = end
        free[chosen] = end
        return chosen

    def _settle_one(self, rack: int, start: float, need: int, duration: float, uplink: bool) -> None:
        """``_idle`` for one rack: it takes a row of its own if it shares one."""
        row = int(self.row_of[rack])
        if self.size[row] > 1:
            self.size[row] -= 1
            copy = self.rows
            self.rows += 1
            self.size[copy] = 1
            self.uplink_free[copy] = self.uplink_free[row]
            self.row_of[rack] = row = copy
        end = start + duration
        self._settled(row, start, end, need)
        if uplink:
            self.uplink_free[row] = end
        self.rack_free[rack] = end

    def _settled(self, rows: NDArray[np.int64] | int, start: float, end: float, need: int) -> None:
        """Rows whose reservations all ended by ``start`` take one of ``need`` slots over [start, end) (none if end = start)."""
        if self.ends.shape[1] < 2:  # keep a padding column
            self._widen(2)
        self.ends[rows] = np.inf
        self.slots[rows] = 0
        self.held_after[rows] = 0
        held = need if end > start else 0
        if held:
            self.ends[rows, 0], self.slots[rows, 0] = end, need
        self.held[rows] = held
        self.last_start[rows], self.free_at[rows] = start, end

    def _rows_of(self, chosen: NDArray[np.int64]) -> NDArray[np.int64]:
        """The rows holding exactly the chosen racks: a row only partly chosen gives its chosen racks a
        copy. Every row keeps a rack, so at most R rows are ever in use."""
        if chosen.size == self.racks.size:
            return np.arange(self.rows)
        rows = self.row_of[chosen]
        taken = np.bincount(rows, minlength=self.rows)
        touched = np.flatnonzero(taken)
        split = touched[taken[touched] < self.size[touched]]
        if not split.size:
            return touched
        copies = np.arange(self.rows, self.rows + split.size)
        for array in (self.last_start, self.free_at, self.ends, self.slots, self.held, self.held_after, self.uplink_free):
            array[copies] = array[split]
        self.size[copies] = taken[split]
        self.size[split] -= taken[split]
        self.rows += split.size
        moved = np.arange(self.rows)
        moved[split] = copies
        self.row_of[chosen] = moved[rows]
        return moved[touched]

    def _book(self, chosen: NDArray[np.int64], start: float, end: float, need: int) -> None:
        """Reserve ``need`` slots over [start, end) on the chosen rows, whose L_i becomes ``start``: the
        reservations over by then (a prefix of each row) leave, the new one goes in at its place."""
        ends, slots = self.ends[chosen], self.slots[chosen]
        done = np.count_nonzero(ends <= start, axis=1)
        running = int((np.count_nonzero(slots, axis=1) - done).max()) + (end > start)
        if running >= ends.shape[1]:  # keep a padding column
            self._widen(running + 1)
            ends, slots = self.ends[chosen], self.slots[chosen]
        columns = np.arange(ends.shape[1])
        source = columns + done[:, None]  # column p takes the running reservation p
        rows = np.arange(chosen.size)[:, None]
        place = np.count_nonzero(ends <= end, axis=1) - done  # the new one goes after those ending by then
        if end > start:
            source -= columns > place[:, None]
        source = np.minimum(source, ends.shape[1] - 1)  # past the running ones: the padding column
        ends, slots = ends[rows, source], slots[rows, source]
        if end > start:  # a job of no duration holds no slot after its start
            ends[rows[:, 0], place], slots[rows[:, 0], place] = end, need
        self.ends[chosen], self.slots[chosen] = ends, slots
        held = slots.sum(axis=1)
        self.held[chosen] = held
        self.held_after[chosen] = held[:, None] - np.cumsum(slots, axis=1)
        self.free_at[chosen] = np.where(self.last_start[chosen] == -np.inf, end, np.maximum(self.free_at[chosen], end))
        self.last_start[chosen] = start

    def _widen(self, width: int) -> None:
        grow = max(width, 2 * self.ends.shape[1]) - self.ends.shape[1]
        n_racks = self.racks.size
        self.ends = np.concatenate([self.ends, np.full((n_racks, grow), np.inf)], axis=1)
        self.slots = np.concatenate([self.slots, np.zeros((n_racks, grow), dtype=np.int64)], axis=1)
        self.held_after = np.concatenate([self.held_after, np.zeros((n_racks, grow), dtype=np.int64)], axis=1)

    def blocked(self) -> float:
        """Slot-seconds no later job can use, over all racks (batch): every slot before L_i (or 0), and
        the running reservations' slots after it."""
        used = slice(0, self.rows)
        since, slots = np.maximum(self.last_start[used], 0.0), self.slots[used]
        running = np.where(slots > 0, self.ends[used] - since[:, None], 0.0)
        per_row = self.capacity * since + (running * slots).sum(axis=1)
        return float(per_row @ self.size[used])

    def room_by_free(self, limit: float) -> NDArray[np.float64]:
        """Per free level f = 0..S: the rack-seconds over [max(L_i, 0), limit), summed over racks, during which
        rack i has f slots free of the reservations booked so far (batch: no later job starts on it before
        L_i, and its held slots only fall after L_i, so it holds at most f slots of later jobs then)."""
        used = slice(0, self.rows)
        since = np.minimum(np.maximum(self.last_start[used], 0.0), limit)
        edges = np.column_stack([since, np.minimum(np.maximum(self.ends[used], since[:, None]), limit), np.full(self.rows, limit)])
        seconds = np.diff(edges, axis=1) * self.size[used][:, None]
        free = self.capacity - np.column_stack([self.held[used], self.held_after[used]])
        return np.bincount(free.ravel(), weights=seconds.ravel(), minlength=self.capacity + 1)


def _smallest(key: NDArray[np.float64], width: int) -> NDArray[np.int64]:
    """The racks of the ``width`` smallest (key, index)."""
    if width == 1:
        return np.array([int(np.argmin(key))])  # the first of equal keys: the lowest index
    kth = np.partition(key, width - 1)[width - 1]
    below = np.flatnonzero(key < kth)
    return np.concatenate([below, np.flatnonzero(key == kth)[: width - below.size]])


def prioritize(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order: list[int],
               slots: SlotDemand) -> Schedule:
    """``reference.prioritize_slots`` for the given prioritization order, in O(J R K) (K: reservations running on a rack)."""
    n_jobs, n_racks = latency.shape
    duration = latency[np.arange(n_jobs), counts - 1]
    effective = effective_arrival(scenario, arrival)
    racks = RackSlots(n_racks, slots.capacity)
    booked = []
    for j in order:
        width = int(counts[j])
        booked.append(racks.place(float(effective[j]), int(slots.demand[j, width - 1]), width, float(duration[j]), slots.uplink(j, width)))
    return schedule(scenario, latency, arrival, counts, order, booked)


def schedule(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order: list[int],
             booked: list[tuple[float, NDArray[np.int64]]]) -> Schedule:
    """The Schedule of the jobs placed in ``order``: job order[p] started at T_j on racks R_j, booked[p] = (T_j, R_j)."""
    n_jobs = latency.shape[0]
    start = np.zeros(n_jobs)
    rack_sets: list[tuple[int, ...]] = [()] * n_jobs
    for j, (start[j], chosen) in zip(order, booked):
        rack_sets[j] = tuple(sorted(chosen.tolist()))
    finish = start + latency[np.arange(n_jobs), counts - 1]
    return Schedule(counts.copy(), tuple(rack_sets), start, tuple(order), objective(scenario, finish, effective_arrival(scenario, arrival)))
