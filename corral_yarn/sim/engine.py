"""The discrete-event loop: jobs arrive, a scheduling policy hands out slots, cohorts of tasks run.

Task model (thesis §3.1.2, as MRCute assumes): a stage's map tasks run in waves on map slots; a
map reads its split from a local replica at B_map, or streams it from another rack as a flow capped
at B_map. Reducers start when every map of the stage is done (slowstart 1.0), fetch their partition
from where the maps ran (all-to-all shuffle flow), then reduce at B_reduce while writing the output
to HDFS (local replica plus a remote pair: one cross-rack copy). Tasks of one job placed in one rack
at one instant form a cohort and move as one aggregate flow (docs/simulator.md).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import logging
import math
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from corral_yarn.contracts import BLOCK_BYTES, ClusterSpec, StageSpec
from corral_yarn.errors import CorralError
from corral_yarn.model.classes import mean_startup, startup
from corral_yarn.sim import placement
from corral_yarn.sim.flows import DOWN, LINKS_PER_RACK, LOCAL, UP, Flow, FlowTable, RackLinks
from corral_yarn.sim.state import JobRun, RackSpeeds, Splits, StageRun

log = logging.getLogger(__name__)


WRITE_SPREAD = 8  # remote racks a write cohort's output is spread over (HDFS: one per block)


class SimulationError(CorralError):
    """The simulation cannot go on (e.g. a job whose tasks may run on no rack)."""


@dataclass(frozen=True)
class SimConfig:
    network: str = "tcp"  # "tcp" (max-min fair) or "varys"
    background_share: float = 0.0  # share of every rack's core link used by background traffic
    parallel_copies: int = 5  # mapreduce.reduce.shuffle.parallelcopies: TCP connections per reducer
    heartbeat_s: float = 1.0  # NodeManager heartbeat: one scheduling opportunity per node per beat
    output_replication: int = 3  # dfs.replication of job output: 1 = local disk only (no network)
    seed: int = 0


class Policy(Protocol):
    name: str

    def prepare(self, job: JobRun) -> None: ...
    def place(self, job: JobRun, stage: StageSpec, rng: np.random.Generator, stored: np.ndarray) -> placement.Racks: ...
    def admit(self, job: JobRun, sim: Simulator) -> None: ...


class Simulator:
    def __init__(self, cluster: ClusterSpec, jobs: list[JobRun], policy: Policy, config: SimConfig) -> None:
        self.cluster, self.jobs, self.policy, self.config = cluster, jobs, policy, config
        self.topology = RackLinks.of(cluster, config.background_share)
        self.racks = self.topology.racks
        self.machines = self.topology.machines
        self.free_map = self.machines * cluster.map_slots_per_machine
        self.free_reduce = self.machines * cluster.reduce_slots_per_machine
        self.disk = cluster.disk_bandwidth_bytes_per_s
        self.speed = RackSpeeds(cluster)
        # MRCute+'s per-task start-up, run as a delay: each rack's class's figure (docs/model.md, docs/paragon.md)
        self.task_startup_s = [startup(cluster, rack.node_class, "task_startup_s") for rack in cluster.racks]
        self.net = FlowTable(self.topology, config.network)
        self.rng = np.random.default_rng(config.seed)
        self.now = 0.0
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.active: list[JobRun] = []
        self.stored = np.zeros(self.racks)
        self.tasks_run = {"map": 0, "reduce": 0}
        self.local_maps = 0
        self.local_read_bytes = 0.0  # map input read from a replica on the map's own rack (no link)

    def _job_startup(self, job: JobRun) -> float:
        """MRCute+'s per-job constant, run as a delay: on node classes the mean over the racks its AM may
        start on (R_j for a planned job, else every rack; docs/paragon.md)."""
        return mean_startup(self.cluster, "job_startup_s", None if job.rack_set is None else job.rack_set.tolist())

    # -- events -------------------------------------------------------------------------------
    def at(self, t: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (t, next(self._seq), action))

    def run(self) -> None:
        for job in self.jobs:
            self.policy.prepare(job)
            for stage in job.stages.values():
                if not stage.spec.after:
                    self._place_input(stage, self.policy.place(job, stage.spec, self.rng, self.stored))
            self.at(job.arrival_s + self._job_startup(job), lambda job=job: self._arrive(job))  # the AM starts first
        while self.events or self.net.busy:
            t_event = self.events[0][0] if self.events else math.inf
            t = min(t_event, self.net.next_finish(self.now))
            if not math.isfinite(t):
                raise SimulationError(f"deadlock at t={self.now:.1f}s: flows that never finish")
            self.net.advance(t - self.now)
            self.now = max(self.now, t)
            for flow in self.net.pop_finished(self.now):
                flow.on_done(self.now)
            while self.events and self.events[0][0] <= self.now:
                heapq.heappop(self.events)[2]()
            self._schedule()
        if stuck := [j.spec.name for j in self.jobs if j.finish_s is None]:
            raise SimulationError(f"{len(stuck)} jobs never finished (first: {stuck[0]}); do their racks exist?")

    def _arrive(self, job: JobRun) -> None:
        self.policy.admit(job, self)
        if job.allowed is not None and not job.allowed.any():
            raise SimulationError(f"job {job.spec.name} may run on no rack")
        bisect.insort(self.active, job, key=lambda j: j.key)

    def _place_input(self, stage: StageRun, replicas: placement.Racks) -> None:
        stage.splits = Splits(replicas, self.racks)
        self.stored += placement.stored_bytes_per_rack(replicas, stage.split_bytes, self.racks)

    # -- scheduling ---------------------------------------------------------------------------
    def _schedule(self) -> None:
        for job in list(self.active):
            free_map, free_reduce = self.free_map.any(), self.free_reduce.any()
            if not (free_map or free_reduce):
                return
            if job.allowed is not None and not (self.free_map[job.allowed].any() or self.free_reduce[job.allowed].any()):
                continue
            for stage in job.ready_stages():
                if stage.wants_maps and self.free_map.any():
                    self._assign_maps(job, stage)
                if stage.wants_reduces and self.free_reduce.any():
                    self._assign_reduces(job, stage)

    def _free(self, slots: np.ndarray, job: JobRun) -> np.ndarray:
        return slots if job.allowed is None else np.where(job.allowed, slots, 0)

    def _assign_maps(self, job: JobRun, stage: StageRun) -> None:
        splits = stage.splits
        free = self._free(self.free_map, job).copy()
        taken = np.zeros_like(free)
        while (ready := np.flatnonzero((free > 0) & (splits.local_count > 0))).size:
            for x in ready:  # a heartbeat round: each node with a free slot takes one local split
                k = splits.take_local(int(x), int(min(free[x], self.machines[x])))
                free[x] -= k
                taken[x] += k
        for x in np.flatnonzero(taken):
            self._start_local_maps(job, stage, int(x), int(taken[x]))
            stage.waiting_since = None
        if splits.pending == 0:
            return
        free = self._free(self.free_map, job)
        offers = int(np.minimum(free, self.machines).sum())  # nodes offering a slot per heartbeat
        if offers == 0:
            return
        if stage.waiting_since is None:
            stage.waiting_since = self.now
        if not self._off_switch_allowed(stage, offers):
            return
        for x, k in enumerate(spread(splits.pending, free, self.machines)):
            if k:
                self._start_remote_maps(job, stage, x, splits.take_any(int(k)))

    def _off_switch_allowed(self, stage: StageRun, offers: int) -> bool:
        """Delay scheduling as in the capacity scheduler: off-switch once the missed scheduling
        opportunities exceed pending x localityWaitFactor, with factor = min(replica nodes / nodes, 1)."""
        nodes = int(self.machines.sum())
        pending = stage.splits.pending
        threshold = pending * min(1.0, 3.0 * pending / nodes)
        beats = 1.0 + (self.now - stage.waiting_since) / self.config.heartbeat_s
        if offers * beats >= threshold * (1.0 - 1e-9):
            return True
        wake = max(stage.waiting_since + self.config.heartbeat_s * (threshold / offers - 1.0), self.now)
        if stage.wake_at is None or stage.wake_at <= self.now or wake < stage.wake_at:
            stage.wake_at = wake
            self.at(wake, lambda: None)  # a scheduling pass then
        return False

    def _assign_reduces(self, job: JobRun, stage: StageRun) -> None:
        free = self._free(self.free_reduce, job)
        for x, k in enumerate(spread(stage.reduces_pending, free, self.machines)):
            if k:
                self._start_shuffle(job, stage, x, int(k))

    def _started(self, job: JobRun, stage: StageRun, rack: int) -> None:
        job.first_task_s = self.now if job.first_task_s is None else job.first_task_s
        job.racks_used.add(rack)
        stage.started = True

    # -- map tasks ----------------------------------------------------------------------------
    def _start_local_maps(self, job: JobRun, stage: StageRun, rack: int, k: int) -> None:
        self.free_map[rack] -= k
        self._started(job, stage, rack)
        self.local_maps += k
        self.local_read_bytes += k * stage.split_bytes
        start = self.now
        self.at(start + self.task_startup_s[rack] + stage.split_bytes / self.speed.map_rate(job, stage.spec, rack), lambda: self._maps_done(job, stage, rack, k, start))

    def _start_remote_maps(self, job: JobRun, stage: StageRun, rack: int, blocks: list[int]) -> None:
        """k maps reading their splits from other racks: one flow loading each source rack's uplink
        with the share of the splits it serves (the cohort progresses together)."""
        k = len(blocks)
        self.free_map[rack] -= k
        self._started(job, stage, rack)
        sources = np.bincount([self._read_source(job, stage.splits.replicas[b]) for b in blocks], minlength=self.racks) / k
        others = np.flatnonzero((sources > 0) & (np.arange(self.racks) != rack))
        links = [RackLinks.link(rack, LOCAL), RackLinks.link(rack, DOWN), *(LINKS_PER_RACK * others + UP)]
        coefs = [sources[rack], float(sources[others].sum()), *sources[others]]
        start = self.now
        flow = Flow(
            links=np.array(links, dtype=np.int64), coefs=np.array(coefs), volume=k * stage.split_bytes, weight=float(k),
            cap=k * self.speed.map_rate(job, stage.spec, rack), coflow=3 * stage.uid, kind="read",
            cross_rack_fraction=float(sources[others].sum()),
            on_done=lambda t: self._maps_done(job, stage, rack, k, start),
        )
        self._after_startup(rack, lambda: self.net.add(flow))

    def _after_startup(self, rack: int, action: Callable[[], None]) -> None:
        """Run a task cohort's first step once its containers on ``rack`` have started (MRCute+'s task start-up)."""
        if self.task_startup_s[rack] > 0:
            self.at(self.now + self.task_startup_s[rack], action)
        else:
            action()

    def _read_source(self, job: JobRun, replicas: np.ndarray) -> int:
        """The replica a remote map reads: one inside the job's racks if any, else a random one."""
        if job.allowed is not None and (inside := replicas[job.allowed[replicas]]).size:
            return int(inside[0])
        return int(replicas[self.rng.integers(0, replicas.size)])

    def _maps_done(self, job: JobRun, stage: StageRun, rack: int, k: int, start: float) -> None:
        self.free_map[rack] += k
        self.tasks_run["map"] += k
        stage.maps_done += k
        stage.map_output_by_rack[rack] += k * stage.spec.shuffle_bytes / stage.spec.map_tasks
        job.task_seconds += k * (self.now - start)
        if stage.maps_finished and stage.spec.reduce_tasks == 0:
            self._stage_done(job, stage)

    # -- reduce tasks -------------------------------------------------------------------------
    def _start_shuffle(self, job: JobRun, stage: StageRun, rack: int, k: int) -> None:
        self.free_reduce[rack] -= k
        stage.reduces_pending -= k
        self._started(job, stage, rack)
        start = self.now
        volume = k * stage.spec.shuffle_bytes / stage.spec.reduce_tasks
        total = stage.map_output_by_rack.sum()
        if volume <= 0 or total <= 0:
            self._after_startup(rack, lambda: self._start_write(job, stage, rack, k, start))
            return
        share = stage.map_output_by_rack / total  # f_a: where the map output sits
        m = float(self.machines[rack])
        same_machine = share[rack] / m  # map output on the reducer's own machine never hits a NIC
        others = np.flatnonzero((share > 0) & (np.arange(self.racks) != rack))
        links = [RackLinks.link(rack, LOCAL)]
        coefs = [share[rack] - same_machine]
        if others.size:
            links += [RackLinks.link(rack, DOWN), *(LINKS_PER_RACK * others + UP)]
            coefs += [float(share[others].sum()), *share[others]]
        flow = Flow(
            links=np.array(links, dtype=np.int64), coefs=np.array(coefs), volume=volume,
            weight=float(k * self.config.parallel_copies), cap=min(k, int(m)) * self.topology.nic,
            coflow=3 * stage.uid + 1, kind="shuffle", cross_rack_fraction=float(1.0 - share[rack]),
            on_done=lambda t: self._start_write(job, stage, rack, k, start),
        )
        self._after_startup(rack, lambda: self.net.add(flow))

    def _start_write(self, job: JobRun, stage: StageRun, rack: int, k: int, start: float) -> None:
        """Reduce at B_reduce while HDFS writes the output: first replica on the local disk, the
        pipeline's second on a remote rack (one cross-rack copy) and the third inside that rack. HDFS
        draws the remote rack per block; the cohort's output is split evenly over up to
        WRITE_SPREAD remote racks drawn at random, one flow each, done when all are."""
        volume = k * stage.spec.output_bytes / stage.spec.reduce_tasks
        replicas = self.config.output_replication
        rate = self.speed.reduce_rate(job, stage.spec, rack)
        if volume <= 0 or replicas == 1:
            self.at(self.now + volume / k / rate, lambda: self._reduces_done(job, stage, rack, k, start))
            return
        if self.racks == 1:
            paths = [([RackLinks.link(rack, LOCAL)], [replicas - 1.0])]
        else:
            blocks = math.ceil(volume / BLOCK_BYTES)
            remotes = (rack + 1 + self.rng.choice(self.racks - 1, size=min(blocks, self.racks - 1, WRITE_SPREAD), replace=False)) % self.racks
            paths = [([RackLinks.link(rack, UP), RackLinks.link(int(c), DOWN), RackLinks.link(int(c), LOCAL)], [1.0, 1.0, replicas - 2.0]) for c in remotes]
        left = [len(paths)]

        def part_done(t: float) -> None:
            left[0] -= 1
            if left[0] == 0:
                self._reduces_done(job, stage, rack, k, start)

        for links, coefs in paths:
            self.net.add(Flow(
                links=np.array(links, dtype=np.int64), coefs=np.array(coefs), volume=volume / len(paths), weight=k / len(paths),
                cap=k * rate / len(paths), coflow=3 * stage.uid + 2, kind="write", cross_rack_fraction=float(self.racks > 1),
                on_done=part_done,
            ))

    def _reduces_done(self, job: JobRun, stage: StageRun, rack: int, k: int, start: float) -> None:
        self.free_reduce[rack] += k
        self.tasks_run["reduce"] += k
        stage.reduces_done += k
        stage.output_by_rack[rack] += k * stage.spec.output_bytes / stage.spec.reduce_tasks
        job.task_seconds += k * (self.now - start)
        job.reduce_task_seconds += k * (self.now - start)
        if stage.reduces_done == stage.spec.reduce_tasks:
            self._stage_done(job, stage)

    def _stage_done(self, job: JobRun, stage: StageRun) -> None:
        stage.done = True
        if job.done:
            job.finish_s = self.now
            self.active.remove(job)
            return
        for child in job.stages.values():
            if child.splits is None and all(job.stages[p].done for p in child.spec.after):
                outputs = sum(job.stages[p].output_by_rack for p in child.spec.after)
                self._place_input(child, placement.from_outputs(child.spec.map_tasks, outputs, self.racks, self.rng))


def spread(k: int, free: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """Hand k tasks to racks as node heartbeats would: each round every node with a free slot takes
    one container, so racks fill in proportion to their nodes with free slots."""
    free = free.astype(np.int64).copy()
    out = np.zeros_like(free)
    while k > 0 and free.any():
        per = np.minimum(free, machines)
        total = int(per.sum())
        if total <= k:
            out += per
            free -= per
            k -= total
            continue
        exact = per * k / total
        share = np.floor(exact).astype(np.int64)
        rest = k - int(share.sum())
        share[np.argsort(-(exact - share), kind="stable")[:rest]] += 1
        out += share
        k = 0
    return out
