"""What a simulation run reports (thesis §4.5.2-§4.5.3): per job and summarised, as versioned JSON."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from corral_yarn.contracts import ClusterSpec, Scenario, Workload
from corral_yarn.model import latency_table
from corral_yarn.sim.flows import UP, LINKS_PER_RACK, RackLinks
from corral_yarn.sim.state import JobRun, map_rate, reduce_rate

RESULT_SCHEMA = "corral-yarn/sim-result/v1"


class JobResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    adhoc: bool
    tasks: int
    arrival_s: float
    first_task_s: float
    finish_s: float
    completion_s: float  # finish - arrival
    slowdown: float  # completion / min_r L_j(r), MRCute's best time alone
    mean_reduce_task_s: float
    task_seconds: float
    racks_used: int


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs: int
    makespan_s: float
    mean_completion_s: float
    median_completion_s: float
    p90_completion_s: float
    mean_slowdown: float
    median_slowdown: float
    cross_rack_bytes: float
    cross_rack_bytes_by_kind: dict[str, float]
    moved_bytes_by_kind: dict[str, float]
    local_read_bytes: float  # map input read from the map's own rack; with moved "read", all map input
    compute_hours: float
    mean_slot_load: float  # task-seconds / (task slots x makespan): the cluster load of §4.5.6
    mean_core_load: float  # cross-rack bytes / (rack uplinks left by the background x makespan)
    rack_data_cov: float
    local_map_fraction: float
    map_tasks_run: int
    reduce_tasks_run: int
    rate_recomputations: int


class SimResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = RESULT_SCHEMA
    label: str
    scheduler: str
    network: str
    scenario: str
    seed: int
    cluster_name: str
    background_share: float
    plan_id: str | None
    summary: Summary
    jobs: list[JobResult]

    def completions(self, adhoc: bool | None = None) -> list[float]:
        return [j.completion_s for j in self.jobs if adhoc is None or j.adhoc == adhoc]


def job_results(jobs: list[JobRun], cluster: ClusterSpec) -> list[JobResult]:
    best_alone = latency_table([j.spec for j in jobs], cluster, 0.0)[0].min(axis=1)
    out = []
    for job, best in zip(jobs, best_alone):
        reducers = sum(s.reduce_tasks for s in job.spec.stages)
        completion = job.finish_s - job.arrival_s
        out.append(JobResult(
            name=job.spec.name, adhoc=job.adhoc, tasks=job.spec.tasks, arrival_s=job.arrival_s,
            first_task_s=job.first_task_s if job.first_task_s is not None else job.finish_s,
            finish_s=job.finish_s, completion_s=completion, slowdown=completion / best if best > 0 else 1.0,
            mean_reduce_task_s=job.reduce_task_seconds / reducers if reducers else 0.0,
            task_seconds=job.task_seconds, racks_used=len(job.racks_used),
        ))
    return out


def summarize(jobs: list[JobResult], sim) -> Summary:  # sim: engine.Simulator (avoid the import cycle)
    completion = np.array([j.completion_s for j in jobs])
    slowdown = np.array([j.slowdown for j in jobs])
    maps = sim.tasks_run["map"]
    makespan = float(max(j.finish_s for j in jobs) - min(j.arrival_s for j in jobs))
    task_seconds = sum(j.task_seconds for j in jobs)
    slots = int(sim.machines.sum()) * (sim.cluster.map_slots_per_machine + sim.cluster.reduce_slots_per_machine)
    return Summary(
        jobs=len(jobs),
        makespan_s=makespan,
        mean_completion_s=float(completion.mean()),
        median_completion_s=float(np.median(completion)),
        p90_completion_s=float(np.percentile(completion, 90)),
        mean_slowdown=float(slowdown.mean()),
        median_slowdown=float(np.median(slowdown)),
        cross_rack_bytes=float(sum(sim.net.cross_rack_bytes.values())),
        cross_rack_bytes_by_kind=dict(sim.net.cross_rack_bytes),
        moved_bytes_by_kind=dict(sim.net.moved_bytes),
        local_read_bytes=sim.local_read_bytes,
        compute_hours=task_seconds / 3600.0,
        mean_slot_load=task_seconds / (slots * makespan) if makespan > 0 else 0.0,
        mean_core_load=float(sum(sim.net.cross_rack_bytes.values())) / (uplinks(sim.topology) * makespan) if makespan > 0 else 0.0,
        rack_data_cov=cov(sim.stored),
        local_map_fraction=sim.local_maps / maps if maps else 1.0,
        map_tasks_run=maps,
        reduce_tasks_run=sim.tasks_run["reduce"],
        rate_recomputations=sim.net.recomputations,
    )


def cov(values: np.ndarray) -> float:
    """Coefficient of variation, stdev / mean (0 without data)."""
    mean = float(np.mean(values))
    return float(np.std(values) / mean) if mean > 0 else 0.0


def uplinks(topology: RackLinks) -> float:
    """Bytes/s all racks can send to the core together (what background traffic leaves)."""
    return float(topology.capacity[UP::LINKS_PER_RACK].sum())


class OfferedLoad(BaseModel):
    """What a workload asks of a cluster, before any scheduler runs it (thesis §4.5.6's cluster load).

    ``slot_load``: the jobs' task-seconds at their rates over task slots x arrival span; ``core_load``:
    the bytes that cross the core when tasks and data are spread over every rack (shuffle x (R-1)/R and
    one copy of the output per HDFS's pipeline) over the rack uplinks x arrival span. Both None in batch
    (every job at 0: no span)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs: int
    span_s: float
    jobs_per_hour: float | None
    task_hours: float
    spread_cross_rack_bytes: float
    slot_load: float | None
    core_load: float | None


def offered_load(workload: Workload, cluster: ClusterSpec, scenario: Scenario, background_share: float, output_replication: int) -> OfferedLoad:
    disk, racks = cluster.disk_bandwidth_bytes_per_s, len(cluster.racks)
    stages = [s for j in workload.jobs for s in j.stages]
    task_s = sum(s.input_bytes / map_rate(s, disk) + (s.output_bytes / reduce_rate(s, disk) if s.reduce_tasks else 0.0) for s in stages)
    cross = sum(s.shuffle_bytes * (racks - 1) / racks + (s.output_bytes if output_replication > 1 and racks > 1 else 0.0) for s in stages)
    arrivals = [j.arrival_s for j in workload.jobs]
    span = max(arrivals) - min(arrivals) if scenario == "online" else 0.0
    topology = RackLinks.of(cluster, background_share)
    slots = int(topology.machines.sum()) * (cluster.map_slots_per_machine + cluster.reduce_slots_per_machine)
    return OfferedLoad(
        jobs=len(workload.jobs), span_s=span, jobs_per_hour=len(workload.jobs) * 3600.0 / span if span > 0 else None,
        task_hours=task_s / 3600.0, spread_cross_rack_bytes=cross,
        slot_load=task_s / (slots * span) if span > 0 else None,
        core_load=cross / (uplinks(topology) * span) if span > 0 else None,
    )
