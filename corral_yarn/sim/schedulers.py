"""Job schedulers of the evaluation (thesis §4.5.2): Yarn-CS, Corral, LocalShuffle, ShuffleWatcher.

A policy decides three things: where a job's input replicas live (placement), which racks its tasks
may use (``allowed``) and the order in which jobs are offered free slots (``key``, smallest first).
Map locality inside the allowed racks is the engine's delay scheduling, the same for all policies.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from corral_yarn.contracts import ClusterSpec, Plan, StageSpec
from corral_yarn.sim import placement
from corral_yarn.sim.state import JobRun

if TYPE_CHECKING:
    from corral_yarn.sim.engine import Simulator

SCHEDULERS = ("yarn-cs", "corral", "localshuffle", "shufflewatcher")
PLANNED = ("corral", "localshuffle")


class YarnCS:
    """YARN's capacity scheduler, one queue: applications in submission (FIFO) order, maps placed by
    delay scheduling, reducers anywhere; input placed by HDFS's default policy."""

    name = "yarn-cs"

    def __init__(self, cluster: ClusterSpec) -> None:
        self.racks = len(cluster.racks)
        self.rack_map_slots = cluster.machines_per_rack * cluster.map_slots_per_machine

    def prepare(self, job: JobRun) -> None:
        job.key = (1, job.arrival_s, job.index)

    def place(self, job: JobRun, stage: StageSpec, rng: np.random.Generator, stored: np.ndarray) -> placement.Racks:
        """Replicas of the stage's splits; ``stored`` holds the bytes on each rack so far."""
        return placement.hdfs_default(stage.map_tasks, self.racks, rng)

    def admit(self, job: JobRun, sim: Simulator) -> None:
        """Called at arrival; Yarn-CS decides nothing ahead of the slot offers."""


class Corral(YarnCS):
    """Corral's cluster scheduler (§4.1): a planned job's input gets one replica in R_j, its tasks
    run only in R_j, and a free slot goes to the highest-priority job assigned that rack. The plan's
    start times are not enforced (work conservation, §4.3.3). Jobs outside the plan are ad hoc and
    follow Yarn-CS, after the planned jobs (their YARN priority is the lowest)."""

    name = "corral"

    def __init__(self, cluster: ClusterSpec, plan: Plan | None) -> None:
        super().__init__(cluster)
        index = {name: i for i, name in enumerate(cluster.rack_names)}
        jobs = plan.jobs if plan is not None else []
        self.plan = {p.name: (np.array(sorted(index[r] for r in p.racks), dtype=np.int64), p.priority) for p in jobs}

    def prepare(self, job: JobRun) -> None:
        if job.spec.name not in self.plan:
            job.adhoc = True
            super().prepare(job)
            return
        rack_set, priority = self.plan[job.spec.name]
        job.rack_set = rack_set
        job.allowed = np.zeros(self.racks, dtype=bool)
        job.allowed[rack_set] = True
        job.key = (0, -priority, job.index)

    def place(self, job: JobRun, stage: StageSpec, rng: np.random.Generator, stored: np.ndarray) -> placement.Racks:
        if job.rack_set is None:
            return super().place(job, stage, rng, stored)
        return placement.corral(stage.map_tasks, job.rack_set, self.racks, rng, stored.copy(), stage.input_bytes / stage.map_tasks)


class LocalShuffle(Corral):
    """Corral's task placement (same plan, R_j and priorities) with HDFS's default data placement."""

    name = "localshuffle"

    def place(self, job: JobRun, stage: StageSpec, rng: np.random.Generator, stored: np.ndarray) -> placement.Racks:
        return YarnCS.place(self, job, stage, rng, stored)


class ShuffleWatcher(YarnCS):
    """ShuffleWatcher (Ahmad et al., ATC 2014) at rack granularity: at arrival each job, on its own,
    is confined to the fewest racks that hold its widest map stage in one wave, taking the racks with
    the most free map slots (ties: most of its input replicas, then rack order); maps and reducers stay
    there, so the map output and the shuffle are rack-local. Input keeps HDFS's default placement.
    Not modelled: its shuffle traffic shaping (delaying a job's shuffle under network load)."""

    name = "shufflewatcher"

    def admit(self, job: JobRun, sim: Simulator) -> None:
        widest = max(s.spec.map_tasks for s in job.stages.values())
        count = min(self.racks, max(1, math.ceil(widest / self.rack_map_slots)))
        replicas = sum(s.splits.local_count for s in job.stages.values() if s.splits is not None)
        order = np.lexsort((np.arange(self.racks), -replicas, -sim.free_map))
        job.allowed = np.zeros(self.racks, dtype=bool)
        job.allowed[order[:count]] = True


def make_policy(name: str, cluster: ClusterSpec, plan: Plan | None) -> YarnCS:
    if name in PLANNED:  # without a plan every job is ad hoc
        return (Corral if name == "corral" else LocalShuffle)(cluster, plan)
    return {"yarn-cs": YarnCS, "shufflewatcher": ShuffleWatcher}[name](cluster)
