"""Corral on heterogeneous racks (docs/paragon.md "Heterogeneous racks in Corral").

Every job runs inside one node class (as Paragon places a workload on one server configuration,
paper 003 §3.2), so each class is a cluster of identical machines that the thesis's heuristic (§4.3.4)
plans unchanged, fast or reference. What is new is which class each job goes to:
1. greedy: jobs by decreasing least rack-time over the classes, each to the class where its rack-time
   r L'_j(r) is least relative to the class's size after the load already given to it (LPT);
2. moves: each job in turn tries every other class; a move stays if the objective (makespan, or mean
   completion time) strictly improves; up to ``MAX_PASSES`` passes over the jobs.
The objective is that of the classes' schedules together as the work-conserving run-time (§4.1) executes
them (``run_time_finish``: back-filled holds P_j, each job's own least time F_j); with slot-aware sharing,
whose schedules already share racks, it is the planned objective the thesis's heuristic minimises.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from corral_yarn.planner.schedule import Order, Scenario, Schedule, SlotDemand, effective_arrival, objective, replay

log = logging.getLogger(__name__)

MAX_PASSES = 3  # passes of single-job moves; each pass tries every job on every other class
Planner = Callable[..., Schedule]


@dataclass(frozen=True)
class ClassTable:
    """One node class: its racks (global indices) and every job's L' on r = 1..len(racks) of them."""

    racks: list[int]
    penalized: NDArray[np.float64]  # J x R_c
    slots: SlotDemand | None = None  # slot-aware sharing: d_j(r) on this class's racks
    packed: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None  # whole racks: (P, F) of every job on r racks, back-filled (J x R_c each)


@dataclass(frozen=True)
class HeteroSchedule:
    """The classes' schedules as one Schedule over the whole cluster, and each job's class."""

    schedule: Schedule
    job_class: NDArray[np.int64]
    run_time: float | None = None  # the objective as the work-conserving run-time executes the plan (``run_time_finish``)


class _Search:
    """Per-class schedules of the jobs given to each class, cached by the class's job set."""

    def __init__(self, scenario: Scenario, classes: list[ClassTable], arrival: NDArray[np.float64], planner: Planner, order: Order) -> None:
        self.scenario, self.classes, self.arrival, self.planner, self.order = scenario, classes, arrival, planner, order
        self._cache: dict[tuple[int, tuple[int, ...]], Schedule] = {}

    def schedule(self, c: int, jobs: tuple[int, ...]) -> Schedule:
        key = (c, jobs)
        if key not in self._cache:
            table = self.classes[c]
            idx = np.array(jobs, dtype=np.int64)
            slots = table.slots.subset(list(jobs)) if table.slots is not None else None
            self._cache[key] = self.planner(self.scenario, table.penalized[idx], self.arrival[idx], self.order, slots=slots)
        return self._cache[key]

    def finish(self, job_class: NDArray[np.int64]) -> NDArray[np.float64]:
        """T_j + L'_j(r_j) of every job, each planned on its class."""
        out = np.zeros(job_class.size)
        for c in range(len(self.classes)):
            jobs = tuple(np.flatnonzero(job_class == c).tolist())
            if jobs:
                s = self.schedule(c, jobs)
                out[list(jobs)] = s.start + self.classes[c].penalized[list(jobs), s.rack_counts - 1]
        return out

    def objective(self, job_class: NDArray[np.int64]) -> float:
        arrival = self.arrival if self.scenario == "online" else np.zeros_like(self.arrival)
        return objective(self.scenario, self.finish(job_class), arrival)

    @property
    def packed(self) -> bool:
        return all(t.packed is not None for t in self.classes)

    def run_time(self, job_class: NDArray[np.int64]) -> float:
        """The objective of the classes' schedules together as the run-time executes them (``run_time_finish``;
        classes share no rack)."""
        finish = np.zeros(job_class.size)
        for c, table in enumerate(self.classes):
            jobs = np.flatnonzero(job_class == c)
            if jobs.size:
                s = self.schedule(c, tuple(jobs.tolist()))
                assert table.packed is not None
                held, floor = table.packed
                finish[jobs] = run_time_finish(self.scenario, s, held[jobs], floor[jobs], self.arrival[jobs], len(table.racks))
        return objective(self.scenario, finish, effective_arrival(self.scenario, self.arrival))

    def judge(self, job_class: NDArray[np.int64]) -> float:
        """What the class choice minimises: the run-time's objective when every class has (P, F), else the plan's."""
        return self.run_time(job_class) if self.packed else self.objective(job_class)


def run_time_finish(scenario: Scenario, s: Schedule, held: NDArray[np.float64], floor: NDArray[np.float64], arrival: NDArray[np.float64],
                    racks: int) -> NDArray[np.float64]:
    """Each job's finish as the work-conserving run-time (thesis §4.1) executes schedule ``s``: R_j's jobs share its
    slots in the prioritization order, so each holds R_j only for P_j(r_j), its back-filled work; a job has R_j
    first only once the jobs before it there have had it (T_j = max{max F_i, A_j}, Fig. 4.2, over the P holds),
    and then needs at least F_j(r_j), its own least time (``model.packed_latency``)."""
    rows = np.arange(s.rack_counts.size)
    due = effective_arrival(scenario, arrival)
    took = held[rows, s.rack_counts - 1]
    start = replay(s.order, s.rack_sets, took, due, racks)
    return start + np.maximum(took, floor[rows, s.rack_counts - 1])


def rack_time(table: ClassTable) -> NDArray[np.float64]:
    """min_r r L'_j(r) on the class: the least rack-seconds job j needs there."""
    return (table.penalized * np.arange(1, len(table.racks) + 1)).min(axis=1)


def greedy(classes: list[ClassTable]) -> NDArray[np.int64]:
    """LPT over classes: jobs by decreasing least rack-time, each to the class where (load + its
    rack-time) / racks is least; ties to the first class, then the lowest job index."""
    work = np.stack([rack_time(t) for t in classes])  # C x J
    size = np.array([len(t.racks) for t in classes], dtype=np.float64)
    load = np.zeros(len(classes))
    job_class = np.zeros(work.shape[1], dtype=np.int64)
    for j in np.argsort(-work.min(axis=0), kind="stable"):
        c = int(np.argmin((load + work[:, j]) / size))
        job_class[j] = c
        load[c] += work[c, j]
    return job_class


def plan(scenario: Scenario, classes: list[ClassTable], arrival: NDArray[np.float64], planner: Planner, order: Order) -> HeteroSchedule:
    """Assign jobs to classes (greedy, then improving moves) and plan each class with ``planner``."""
    search = _Search(scenario, classes, arrival, planner, order)
    job_class = greedy(classes)
    best = search.judge(job_class)
    for _ in range(MAX_PASSES):
        moved = False
        for j in range(job_class.size):
            for c in range(len(classes)):
                if c == job_class[j]:
                    continue
                trial = job_class.copy()
                trial[j] = c
                if (value := search.judge(trial)) < best:
                    job_class, best, moved = trial, value, True
        if not moved:
            break
    log.info("node classes: %s jobs per class, objective %.6g", np.bincount(job_class, minlength=len(classes)).tolist(), best)
    run_time = best if search.packed else None
    return HeteroSchedule(merge(scenario, search, job_class), job_class, run_time)


def merge(scenario: Scenario, search: _Search, job_class: NDArray[np.int64]) -> Schedule:
    """One Schedule: global rack indices; the priority order by planned start, then each class's own
    order (classes share no rack, so only the order within a class matters to YARN)."""
    n = job_class.size
    counts, start = np.ones(n, dtype=np.int64), np.zeros(n)
    rack_sets: list[tuple[int, ...]] = [()] * n
    position = np.zeros(n, dtype=np.int64)
    for c, table in enumerate(search.classes):
        jobs = np.flatnonzero(job_class == c)
        if not jobs.size:
            continue
        s = search.schedule(c, tuple(jobs.tolist()))
        counts[jobs], start[jobs] = s.rack_counts, s.start
        for k, j in enumerate(jobs):
            rack_sets[j] = tuple(sorted(table.racks[i] for i in s.rack_sets[k]))
        position[jobs[list(s.order)]] = np.arange(jobs.size)
    order = tuple(sorted(range(n), key=lambda j: (start[j], position[j], job_class[j], j)))
    return Schedule(counts, tuple(rack_sets), start, order, search.objective(job_class))
