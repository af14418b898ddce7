"""Slot-aware prioritization, fast (docs/planner.md "Slot-aware sharing"): the same Schedule as
``reference.prioritize_slots``, with every rack's free slots over time held as arrays.

Rack i keeps L_i, the start of the last job placed on it (no job starts there earlier), F_i, the
last end of a reservation on it (the reference's choice key), and the reservations still running
after L_i as (end, slots) sorted by end. Its held slots only fall after L_i, so the earliest time
it takes a job of d slots arriving at A is e_i = max(A, L_i, the first end after which at most
S - d slots stay held); the reference's earliest T, at which r_j racks admit the job, is the r_j-th
smallest e_i, and the racks admitting it are those with e_i <= T.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Scenario, Schedule, SlotDemand, effective_arrival, objective


@dataclass(frozen=True)
class Snapshot:
    """A copy of a ``RackSlots`` state, to resume from."""

    last_start: NDArray[np.float64]
    free_at: NDArray[np.float64]
    ends: NDArray[np.float64]
    slots: NDArray[np.int64]


class RackSlots:
    """The reservations on R racks of ``capacity`` slots each, as the slot-aware planner books them."""

    def __init__(self, n_racks: int, capacity: int, snapshot: Snapshot | None = None) -> None:
        self.capacity = capacity
        self.rows = np.arange(n_racks)
        if snapshot is None:
            snapshot = Snapshot(np.full(n_racks, -np.inf), np.zeros(n_racks), np.full((n_racks, 1), np.inf), np.zeros((n_racks, 1), dtype=np.int64))
        self.last_start = snapshot.last_start.copy()  # L_i, -inf before any job
        self.free_at = snapshot.free_at.copy()  # F_i, 0 before any job (as the reference)
        self.ends = snapshot.ends.copy()  # running reservations' ends, ascending, padded with inf
        self.slots = snapshot.slots.copy()  # their slots, padded with 0
        self.held = self.slots.sum(axis=1)  # slots held at L_i
        self.held_after = self.held[:, None] - np.cumsum(self.slots, axis=1)  # slots still held after each end

    def snapshot(self) -> Snapshot:
        return Snapshot(self.last_start.copy(), self.free_at.copy(), self.ends.copy(), self.slots.copy())

    def earliest(self, arrival: float, need: int) -> NDArray[np.float64]:
        """e_i: the earliest time from which rack i can hold ``need`` more slots, at or after A and L_i."""
        room = self.capacity - need
        first = np.count_nonzero(self.held_after > room, axis=1)  # held_after falls along a row
        wait = np.where(self.held > room, self.ends[self.rows, first], -np.inf)
        return np.maximum(np.maximum(self.last_start, wait), arrival)

    def place(self, arrival: float, need: int, width: int, duration: float) -> tuple[float, NDArray[np.int64]]:
        """Book a job (Fig. 4.2 over slots): its start T and its racks, the r_j smallest (F_i, i) of
        those admitting it at T."""
        earliest = self.earliest(arrival, need)
        if width == earliest.size:
            start, chosen = float(earliest.max()), self.rows
        else:
            start = float(np.partition(earliest, width - 1)[width - 1])
            key = np.where(earliest <= start, self.free_at, np.inf)
            if width == 1:
                chosen = np.array([int(np.argmin(key))])  # the first of equal keys: the lowest index
            else:
                kth = np.partition(key, width - 1)[width - 1]
                below = np.flatnonzero(key < kth)
                chosen = np.concatenate([below, np.flatnonzero(key == kth)[: width - below.size]])
        self._book(chosen, start, start + duration, need)
        return start, chosen

    def _book(self, chosen: NDArray[np.int64], start: float, end: float, need: int) -> None:
        """Reserve ``need`` slots over [start, end) on the chosen racks, whose L_i becomes ``start``: the
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
        n_racks = self.rows.size
        self.ends = np.concatenate([self.ends, np.full((n_racks, grow), np.inf)], axis=1)
        self.slots = np.concatenate([self.slots, np.zeros((n_racks, grow), dtype=np.int64)], axis=1)
        self.held_after = np.concatenate([self.held_after, np.zeros((n_racks, grow), dtype=np.int64)], axis=1)

    def blocked(self) -> float:
        """Slot-seconds no later job can use, over all racks (batch): every slot before L_i (or 0), and
        the running reservations' slots after it."""
        since = np.maximum(self.last_start, 0.0)
        running = np.where(self.slots > 0, self.ends - since[:, None], 0.0)
        return float(self.capacity * since.sum() + (running * self.slots).sum())


def prioritize(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order: list[int],
               slots: SlotDemand) -> Schedule:
    """``reference.prioritize_slots`` for the given prioritization order, in O(J R K) (K: reservations running on a rack)."""
    n_jobs, n_racks = latency.shape
    duration = latency[np.arange(n_jobs), counts - 1]
    effective = effective_arrival(scenario, arrival)
    racks = RackSlots(n_racks, slots.capacity)
    start = np.zeros(n_jobs)
    rack_sets: list[tuple[int, ...]] = [()] * n_jobs
    for j in order:
        start[j], chosen = racks.place(float(effective[j]), int(slots.demand[j, counts[j] - 1]), int(counts[j]), float(duration[j]))
        rack_sets[j] = tuple(sorted(chosen.tolist()))
    return Schedule(counts.copy(), tuple(rack_sets), start, tuple(order), objective(scenario, start + duration, effective))

