"""Run-time state of the simulated jobs: stages, their pending map splits and reducers.

Map splits are tracked per block so that locality is exact at rack granularity: a rack's
``local_count`` is how many pending splits have a replica there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from corral_yarn.contracts import ClusterSpec, JobSpec, StageSpec
from corral_yarn.model.classes import speedups

Mask = NDArray[np.bool_]


def map_rate(stage: StageSpec, disk: float) -> float:
    """B_map = Min{B_D, B_map^P} (thesis §3.1.2)."""
    return min(disk, stage.map_rate_bytes_per_s)


def reduce_rate(stage: StageSpec, disk: float) -> float:
    """B_reduce = Min{B_D, B_reduce^P}, in reduce output bytes per second (thesis §3.1.2)."""
    return min(disk, stage.reduce_rate_bytes_per_s)


class RackSpeeds:
    """Task rates per rack: on heterogeneous racks a job's B_map^P and B_reduce^P times its speedups on
    the rack's node class, B_D the class's (docs/paragon.md); without node classes the thesis's rates."""

    def __init__(self, cluster: ClusterSpec) -> None:
        self.cluster = cluster
        classes = cluster.node_classes or {}
        self.disk = [(classes[r.node_class].disk_bandwidth_bytes_per_s if r.node_class else None) or cluster.disk_bandwidth_bytes_per_s
                     for r in cluster.racks]
        self._speedups: dict[tuple[str, int], tuple[float, float]] = {}

    def _speedup(self, job: JobRun, rack: int) -> tuple[float, float]:
        name = self.cluster.racks[rack].node_class
        if name is None:
            return 1.0, 1.0
        key = (job.spec.name, rack)
        if key not in self._speedups:
            self._speedups[key] = speedups(job.spec, self.cluster, name)
        return self._speedups[key]

    def map_rate(self, job: JobRun, stage: StageSpec, rack: int) -> float:
        """B_map = Min{B_D, B_map^P} on ``rack`` (thesis §3.1.2)."""
        return min(self.disk[rack], stage.map_rate_bytes_per_s * self._speedup(job, rack)[0])

    def reduce_rate(self, job: JobRun, stage: StageSpec, rack: int) -> float:
        """B_reduce = Min{B_D, B_reduce^P} on ``rack`` (thesis §3.1.2)."""
        return min(self.disk[rack], stage.reduce_rate_bytes_per_s * self._speedup(job, rack)[1])


class Splits:
    """The pending map splits of one stage and the racks holding their replicas."""

    def __init__(self, replicas: NDArray[np.int64], racks: int) -> None:
        self.replicas = replicas
        self.taken = np.zeros(replicas.shape[0], dtype=bool)
        ordered = np.sort(replicas, axis=1)
        distinct = np.ones_like(ordered, dtype=bool)
        distinct[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        self._holders, self._distinct = ordered, distinct  # a block's racks, each once
        self.local_count = np.bincount(ordered[distinct], minlength=racks)
        self._by_rack = [np.flatnonzero((replicas == r).any(axis=1)) for r in range(racks)]
        self._cursor = np.zeros(racks, dtype=np.int64)
        self._any_cursor = 0
        self.pending = replicas.shape[0]

    def _take(self, block: int) -> None:
        self.taken[block] = True
        self.local_count[self._holders[block][self._distinct[block]]] -= 1
        self.pending -= 1

    def take_local(self, rack: int, k: int) -> int:
        """Take up to k pending splits with a replica on ``rack``; returns how many were taken."""
        blocks, i, got = self._by_rack[rack], int(self._cursor[rack]), 0
        while got < k and i < blocks.size:
            b = int(blocks[i])
            i += 1
            if not self.taken[b]:
                self._take(b)
                got += 1
        self._cursor[rack] = i
        return got

    def take_any(self, k: int) -> list[int]:
        """Take up to k pending splits wherever they are (off-rack reads)."""
        out: list[int] = []
        while len(out) < k and self._any_cursor < self.taken.size:
            b = self._any_cursor
            self._any_cursor += 1
            if not self.taken[b]:
                self._take(b)
                out.append(b)
        return out


@dataclass(eq=False)
class StageRun:
    spec: StageSpec
    uid: int  # stable identity (coflow ids, tie-breaks)
    racks: int
    splits: Splits | None = None
    maps_done: int = 0
    reduces_pending: int = 0
    reduces_done: int = 0
    map_output_by_rack: NDArray[np.float64] = field(default=None)  # type: ignore[assignment]
    output_by_rack: NDArray[np.float64] = field(default=None)  # type: ignore[assignment]
    waiting_since: float | None = None  # delay scheduling: first declined offer
    wake_at: float | None = None  # pending wake-up for the off-switch decision
    started: bool = False
    done: bool = False

    def __post_init__(self) -> None:
        self.map_output_by_rack = np.zeros(self.racks)
        self.output_by_rack = np.zeros(self.racks)
        self.reduces_pending = self.spec.reduce_tasks

    @property
    def split_bytes(self) -> float:
        return self.spec.input_bytes / self.spec.map_tasks

    @property
    def maps_finished(self) -> bool:
        return self.maps_done == self.spec.map_tasks

    @property
    def wants_maps(self) -> bool:
        return self.splits is not None and self.splits.pending > 0

    @property
    def wants_reduces(self) -> bool:
        return self.maps_finished and self.reduces_pending > 0


@dataclass(eq=False)
class JobRun:
    spec: JobSpec
    index: int
    arrival_s: float
    key: tuple  # scheduling order, smallest first
    allowed: Mask | None = None  # racks the job's tasks may use (None: all)
    rack_set: NDArray[np.int64] | None = None  # R_j when the job follows a plan
    adhoc: bool = False
    stages: dict[str, StageRun] = field(default_factory=dict)
    first_task_s: float | None = None
    finish_s: float | None = None
    task_seconds: float = 0.0
    reduce_task_seconds: float = 0.0
    racks_used: set[int] = field(default_factory=set)

    def ready_stages(self) -> list[StageRun]:
        """Stages whose parents are all done and that still have tasks to place."""
        return [
            s for s in self.stages.values()
            if not s.done and all(self.stages[p].done for p in s.spec.after) and (s.wants_maps or s.wants_reduces)
        ]

    @property
    def done(self) -> bool:
        return all(s.done for s in self.stages.values())
