"""Deadline requests for the selector simulation (thesis §4.4.1-2), and how long a job really runs.

A request is a MapReduce job, its input size and a completion-time goal. As in §4.4.2 the goal is
chosen so that the Baseline tuple <N_base, B_base> is exponentially distributed (means 50 VMs and
``mean_bandwidth``): T_desired = L(<N_base, B_base>). The thesis leaves the job's shape open; ours
(documented in docs/selector.md) is: N_base x w map tasks of ``block_bytes`` each and N_base x w'
reduce tasks (w, w' uniform in 1..``max_map_waves``, 1..``max_reduce_waves``), selectivities log-uniform in [1/2, 2], and map/reduce
rates B^P exponential with mean 500 Mbps (§4.4.1). Arrivals are Poisson at the rate that makes
lambda x E[N_base x T_desired] / (VMs) the target occupancy (§4.4.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corral_yarn.contracts import ClusterSpec, JobSpec, StageSpec
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import MBPS, latency
from corral_yarn.selector.shuffle import shuffle_seconds


@dataclass(frozen=True)
class WorkloadConfig:
    """The request stream of one simulation run; rates in bytes/s."""

    requests: int = 15_000
    occupancy: float = 0.75
    mean_vms: float = 50.0
    mean_bandwidth: int = 500 * MBPS
    mean_task_rate: int = 500 * MBPS
    max_vms: int = 1000
    max_bandwidth: int = 1000 * MBPS
    block_bytes: int = 256 * 2**20
    max_map_waves: int = 8
    max_reduce_waves: int = 4
    outlier_probability: float = 0.0
    outlier_mean_slowdown: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.requests < 1 or not 0 < self.occupancy <= 2:
            raise InputError("requests must be >= 1 and occupancy in (0, 2]", field="workload")
        if self.mean_vms < 1 or self.mean_bandwidth < MBPS or self.mean_task_rate < MBPS:
            raise InputError("mean_vms >= 1 and mean rates >= 1 Mbps are required", field="workload")
        if not 0 <= self.outlier_probability < 1 or self.outlier_mean_slowdown < 0:
            raise InputError("outlier_probability must be in [0, 1) and the slowdown >= 0", field="workload")


@dataclass(frozen=True)
class Request:
    """One application request: its job, the Baseline tuple and the completion-time goal."""

    index: int
    arrival_s: float
    job: JobSpec
    baseline_vms: int
    baseline_bandwidth: int
    deadline_s: float

    @property
    def input_bytes(self) -> float:
        return self.job.input_bytes


def _job(rng: np.random.Generator, index: int, vms: int, config: WorkloadConfig) -> JobSpec:
    map_tasks = vms * int(rng.integers(1, config.max_map_waves + 1))
    reduce_tasks = vms * int(rng.integers(1, config.max_reduce_waves + 1))
    map_sel, reduce_sel = np.exp(rng.uniform(np.log(0.5), np.log(2.0), size=2))
    map_rate, reduce_rate = np.maximum(rng.exponential(config.mean_task_rate, size=2), MBPS)
    stage = StageSpec(
        name="main",
        input_bytes=float(map_tasks * config.block_bytes),
        map_selectivity=float(map_sel),
        reduce_selectivity=float(reduce_sel),
        map_tasks=map_tasks,
        reduce_tasks=reduce_tasks,
        map_rate_bytes_per_s=float(map_rate),
        reduce_rate_bytes_per_s=float(reduce_rate),
    )
    return JobSpec(name=f"request-{index:06d}", stages=[stage])


def generate_requests(config: WorkloadConfig, profile: ClusterSpec, total_vms: int) -> list[Request]:
    """The seeded request stream with Poisson arrivals at the target occupancy (§4.4.1)."""
    rng = np.random.default_rng(config.seed)
    drawn = []
    for i in range(config.requests):
        vms = int(np.clip(round(rng.exponential(config.mean_vms)), 1, config.max_vms))
        bandwidth = int(np.clip(round(rng.exponential(config.mean_bandwidth) / MBPS), 1, config.max_bandwidth // MBPS)) * MBPS
        job = _job(rng, i, vms, config)
        deadline = float(latency(job, profile, np.array([vms]), np.array([bandwidth]))[0])  # T_desired
        drawn.append((job, vms, bandwidth, deadline))
    vm_seconds = np.mean([vms * deadline for _, vms, _, deadline in drawn])
    rate = config.occupancy * total_vms / vm_seconds  # occupancy = lambda N T / M (§4.4.1)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, size=config.requests))
    return [Request(i, float(t), job, vms, b, d) for i, (t, (job, vms, b, d)) in enumerate(zip(arrivals, drawn))]


def _stage_seconds(rng: np.random.Generator, tasks: int, slots: int, task_seconds: float, config: WorkloadConfig) -> float:
    """Waves of ``slots`` tasks; a wave lasts as long as its slowest task (outliers, §4.4.2)."""
    waves = -(-tasks // slots)
    per_wave = np.full(waves, slots)
    per_wave[-1] = tasks - slots * (waves - 1)
    factor = np.ones(waves)
    if config.outlier_probability > 0:
        outliers = rng.binomial(per_wave, config.outlier_probability)
        hit = outliers > 0  # the largest of k slowdowns 1 + Exp(mean): invert the CDF of the maximum
        largest = -np.log(1.0 - rng.uniform(size=waves) ** (1.0 / np.maximum(outliers, 1)))
        factor[hit] = 1.0 + config.outlier_mean_slowdown * largest[hit]
    return float(task_seconds * factor.sum())


def run_seconds(request: Request, vms: int, bandwidth: int, profile: ClusterSpec, config: WorkloadConfig) -> float:
    """How long the job runs on <N, B>: map and reduce waves with outliers, the shuffle as max-min flows.

    The shuffle model runs one reducer per VM per wave, as the VM profile of the simulation has.
    """
    rng = np.random.default_rng((config.seed, request.index))  # the same outliers whatever the strategy
    disk = profile.disk_bandwidth_bytes_per_s
    map_slots, reduce_slots = vms * profile.map_slots_per_machine, vms * profile.reduce_slots_per_machine
    total = 0.0
    for s in request.job.stages:  # the generated jobs are one stage; a DAG would run its stages in turn
        total += _stage_seconds(rng, s.map_tasks, map_slots, s.input_bytes / s.map_tasks / min(disk, s.map_rate_bytes_per_s), config)
        total += shuffle_seconds(vms, s.reduce_tasks, s.shuffle_bytes, bandwidth, disk)
        if s.reduce_tasks:
            total += _stage_seconds(rng, s.reduce_tasks, reduce_slots, s.output_bytes / s.reduce_tasks / min(disk, s.reduce_rate_bytes_per_s), config)
    return total
