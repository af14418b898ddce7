"""What a simulation run reports (thesis §4.5.2-§4.5.3): per job and summarised, as versioned JSON."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from corral_yarn.contracts import ClusterSpec
from corral_yarn.model import latency_table
from corral_yarn.sim.state import JobRun

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
