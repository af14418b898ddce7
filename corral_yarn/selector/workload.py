"""Deadline requests for the selector simulation (thesis §4.4.1-2), and how long a job really runs.

A request is a MapReduce job, its input size and a completion-time goal. As in §4.4.2 the goal is
chosen so that the Baseline tuple <N_base, B_base> is exponentially distributed (means 50 VMs and
``mean_bandwidth``): T_desired = L(<N_base, B_base>). The thesis leaves the job's shape open; ours
(documented in docs/selector.md) is: N_base x w map tasks of ``block_bytes`` each and N_base x w'
reduce tasks (w, w' uniform in 1..``max_map_waves``, 1..``max_reduce_waves``), selectivities log-uniform in [1/2, 2], and map/reduce
rates B^P exponential with mean 500 Mbps (§4.4.1). Arrivals are Poisson at the rate that makes
lambda x E[N_base x T_desired] / (VMs) the target occupancy (§4.4.1).

Goals are heavy-tailed (B^P and B_base near 1 Mbps make jobs of hours), so a datacenter that starts
empty needs hours of arrivals before the offered load reaches the target. The stream is therefore
preceded by its *history*: the requests of the ``history_s`` seconds of Poisson arrivals before it
that are still running (by their goal) when it starts. Those that would have ended earlier cannot be
running then and are left out, so the load the stream starts from is the stationary one (that of an
M/G/inf system), and only about as many requests as run at once are simulated before the stream
instead of hours of arrivals (the others are drawn only to be left out).
"""

from __future__ import annotations

import math
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
    history_s: float = 20_000.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.requests < 1:
            raise InputError(f"must be >= 1, got {self.requests}", field="requests")
        check_occupancy(self.occupancy, field="occupancy")
        if not 0 <= self.history_s < math.inf:  # written so that NaN fails too
            raise InputError(f"must be finite and >= 0, got {self.history_s}", field="history_s")
        for name, value, least in (("mean_vms", self.mean_vms, 1), ("mean_bandwidth", self.mean_bandwidth, MBPS),
                                   ("mean_task_rate", self.mean_task_rate, MBPS), ("outlier_mean_slowdown", self.outlier_mean_slowdown, 0)):
            if not least <= value < math.inf:
                raise InputError(f"must be finite and >= {least}, got {value}", field=name)
        if not 0 <= self.outlier_probability < 1:
            raise InputError(f"must be in [0, 1), got {self.outlier_probability}", field="outlier_probability")


def check_occupancy(occupancy: float, field: str) -> None:
    """The target occupancy lambda N T / M (§4.4.1) must be in (0, 1]; an InputError names ``field``."""
    if not 0 < occupancy <= 1:
        raise InputError(f"must be in (0, 1], got {occupancy:g}", field=field)


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

    @property
    def history(self) -> bool:
        """Arrived before the stream: part of the load the stream starts from, not measured."""
        return self.arrival_s < 0


def _job(rng: np.random.Generator, name: str, vms: int, config: WorkloadConfig) -> JobSpec:
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
    return JobSpec(name=name, stages=[stage])


@dataclass(frozen=True)
class _Drawn:
    """A request before its arrival time is known."""

    job: JobSpec
    vms: int
    bandwidth: int
    deadline_s: float


def _draw(rng: np.random.Generator, name: str, config: WorkloadConfig, profile: ClusterSpec) -> _Drawn:
    """A job and its Baseline tuple <N_base, B_base>; its goal is T_desired = L(<N_base, B_base>) (§4.4.2)."""
    vms = min(max(round(rng.exponential(config.mean_vms)), 1), config.max_vms)
    mbps = min(max(round(rng.exponential(config.mean_bandwidth) / MBPS), 1), config.max_bandwidth // MBPS)
    job = _job(rng, name, vms, config)
    deadline = float(latency(job, profile, np.array([vms]), np.array([mbps * MBPS]))[0])
    return _Drawn(job, vms, mbps * MBPS, deadline)


def _rate(drawn: list[_Drawn], occupancy: float, total_vms: int) -> float:
    """lambda with occupancy = lambda E[N T] / M (§4.4.1; the mean of the product, which occupancy measures)."""
    return occupancy * total_vms / float(np.mean([d.vms * d.deadline_s for d in drawn]))


def generate_requests(config: WorkloadConfig, profile: ClusterSpec, total_vms: int) -> list[Request]:
    """The seeded request stream with Poisson arrivals at the target occupancy (§4.4.1), after its history.

    History requests (arrival < 0) come first; the stream arrives from time 0 on. Every draw, the
    history's included, estimates E[N T] for the arrival rate; the history spans about ``history_s``.
    """
    rng = np.random.default_rng(config.seed)
    stream = [_draw(rng, f"request-{i:06d}", config, profile) for i in range(config.requests)]
    pool = [_draw(rng, f"history-{k:06d}", config, profile)
            for k in range(math.ceil(_rate(stream, config.occupancy, total_vms) * config.history_s))]
    rate = _rate(stream + pool, config.occupancy, total_vms)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, size=len(stream)))
    before = -np.cumsum(rng.exponential(1.0 / rate, size=len(pool)))
    running = [(t, d) for t, d in zip(before.tolist(), pool) if t + d.deadline_s > 0]  # still running at 0
    running.sort(key=lambda td: td[0])
    timed = running + list(zip(arrivals.tolist(), stream))
    return [Request(i, t, d.job, d.vms, d.bandwidth, d.deadline_s) for i, (t, d) in enumerate(timed)]


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
