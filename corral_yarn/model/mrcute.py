"""MRCute, the MapReduce completion-time estimator (thesis §3.1.2), vectorised over resources, and
MRCute+ (docs/model.md), the thesis model plus an output-write term and start-up costs.

All functions are pure and take numpy arrays of resource amounts (racks r, or machines N and
bandwidth B); they return seconds, elementwise. ``ClusterSpec.model`` selects the model behind
``job_rack_latency`` and ``latency_table``: ``"paper"`` or an ``MRCutePlus``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, StageSpec

Seconds = NDArray[np.float64]
Waves = Callable[[int, NDArray[np.float64]], NDArray[np.float64]]  # counts a phase's waves from its tasks and slots


def _waves(tasks: int, slots: NDArray[np.float64]) -> NDArray[np.float64]:
    # w = ceil(tasks / (machines x slots per machine)), thesis §3.1.2 "Waves"
    return np.ceil(tasks / slots)


def _map_and_reduce(stage: StageSpec, cluster: ClusterSpec, machines: NDArray[np.float64],
                    waves: Waves = _waves) -> tuple[Seconds, Seconds, Seconds]:
    """T_map, reduce waves and T_reduce, shared by both MRCute variants (thesis §3.1.2); ``waves`` counts them."""
    disk = cluster.disk_bandwidth_bytes_per_s
    b_map = min(disk, stage.map_rate_bytes_per_s)  # B_map = Min{B_D, B_map^P}
    b_reduce = min(disk, stage.reduce_rate_bytes_per_s)  # B_reduce = Min{B_D, B_reduce^P}
    t_map = waves(stage.map_tasks, machines * cluster.map_slots_per_machine) * (stage.input_bytes / stage.map_tasks) / b_map
    if stage.reduce_tasks == 0:
        zero = np.zeros_like(machines)
        return t_map, zero, zero
    w_reduce = waves(stage.reduce_tasks, machines * cluster.reduce_slots_per_machine)
    # T_reduce = w_reduce x (|D_i| / (S_map S_reduce R)) / B_reduce: each task's output over B_reduce
    t_reduce = w_reduce * (stage.output_bytes / stage.reduce_tasks) / b_reduce
    return t_map, w_reduce, t_reduce


def rack_latency(stage: StageSpec, cluster: ClusterSpec, racks: ArrayLike) -> Seconds:
    """L(r) of one stage on r racks, without bandwidth reservations (thesis §3.1.2)."""
    front, t_reduce, _ = _stage_terms(stage, cluster, np.asarray(racks, dtype=np.float64))
    return front + t_reduce


def _stage_terms(stage: StageSpec, cluster: ClusterSpec, r: NDArray[np.float64], waves: Waves = _waves,
                 shuffle_per_wave: bool = True) -> tuple[Seconds, Seconds, NDArray[np.float64]]:
    """(T_map + T_shuffle, T_reduce, w_map + w_reduce) of one stage on r racks (thesis §3.1.2), ``waves`` counting
    the waves; the shuffle crosses the network once per reduce wave (T_shuffle = w_reduce x max{T_core, T_local}) or once."""
    machines = r * cluster.machines_per_rack
    t_map, w_reduce, t_reduce = _map_and_reduce(stage, cluster, machines, waves)
    once = _shuffle_once(stage, cluster, r) if stage.reduce_tasks else 0.0 * r
    t_shuffle = w_reduce * once if shuffle_per_wave else once
    return t_map + t_shuffle, t_reduce, waves(stage.map_tasks, machines * cluster.map_slots_per_machine) + w_reduce


def _shuffle_once(stage: StageSpec, cluster: ClusterSpec, r: NDArray[np.float64]) -> Seconds:
    """max{T_core, T_local}: the stage's shuffle data crossing the network once (thesis §3.1.2)."""
    m = float(cluster.machines_per_rack)
    nic, oversub = cluster.nic_bandwidth_bytes_per_s, cluster.oversubscription
    per_machine = stage.shuffle_bytes / (r * m)  # D_i^S x 1/(r m)
    t_core = per_machine * (r - 1.0) / r / (nic / oversub)  # T_core = D_i^core / (B_M / O)
    d_local = per_machine / r  # D_i^local = D_i^S x 1/(r m) x 1/r
    t_local = d_local * (m - 1.0) / m / (nic - nic / oversub)  # T_local, over B_M - B_M/O
    return np.maximum(t_core, t_local)


def write_latency(stage: StageSpec, cluster: ClusterSpec, racks: ArrayLike, model: MRCutePlus) -> Seconds:
    """T_write of MRCute+: the copies of the output sent to the other replicas, over the writers' NICs
    and R_j's share of the core, whichever is smaller."""
    r = np.asarray(racks, dtype=np.float64)
    m = float(cluster.machines_per_rack)
    nic, oversub = cluster.nic_bandwidth_bytes_per_s, cluster.oversubscription
    writers_nic = np.minimum(r * m, stage.reduce_tasks or stage.map_tasks) * nic  # the machines holding the writing tasks
    core = np.minimum(writers_nic, r * m * nic / oversub)  # R_j's uplinks: r m B_M / O
    if model.output_replicas_leave_racks:  # HDFS's pipeline: one copy leaves R_j, the next hops are outside R_j
        return stage.output_bytes * min(1, model.replication - 1) / core
    # all replication - 1 hops inside R_j split like the shuffle (§3.1.2): (r-1)/r over the core, 1/r in the rack
    copies = stage.output_bytes * (model.replication - 1)
    in_rack = np.minimum(writers_nic, r * m * (nic - nic / oversub))
    return np.maximum(copies * (r - 1.0) / r / core, copies / r * (m - 1.0) / m / in_rack)


def rack_waves(stage: StageSpec, cluster: ClusterSpec, racks: ArrayLike) -> NDArray[np.float64]:
    """w_map + w_reduce on r racks: the task waves, each paying the per-task start-up of MRCute+."""
    return _stage_terms(stage, cluster, np.asarray(racks, dtype=np.float64))[2]


def plus_terms(stage: StageSpec, cluster: ClusterSpec, racks: ArrayLike, model: MRCutePlus, waves: Waves = _waves,
               shuffle_per_wave: bool = True) -> tuple[Seconds, NDArray[np.float64]]:
    """(T_map + T_shuffle + max(T_reduce, T_write), w_map + w_reduce): the per-stage regressors of MRCute+, scaled by
    ``scale`` and ``task_startup_s``. Reducers write while they reduce, so the slower of the two sets the pace."""
    r = np.asarray(racks, dtype=np.float64)
    front, t_reduce, w = _stage_terms(stage, cluster, r, waves, shuffle_per_wave)
    return front + t_reduce + np.maximum(write_latency(stage, cluster, r, model) - t_reduce, 0.0), w


def plus_rack_latency(stage: StageSpec, cluster: ClusterSpec, racks: ArrayLike, model: MRCutePlus, waves: Waves = _waves,
                      shuffle_per_wave: bool = True) -> Seconds:
    """L+(r) of one stage = scale x (T_map + T_shuffle + max(T_reduce, T_write)) + task start-up x waves."""
    base, w = plus_terms(stage, cluster, racks, model, waves, shuffle_per_wave)
    return model.scale * base + model.task_startup_s * w


def shuffle_bandwidth(disk: float, bandwidth: ArrayLike) -> NDArray[np.float64]:
    """B_shuffle = (1 / Min{B_D, B} + 1 / B_D)^-1 (thesis §3.1.2)."""
    b = np.asarray(bandwidth, dtype=np.float64)
    return 1.0 / (1.0 / np.minimum(disk, b) + 1.0 / disk)


def reservation_latency(stage: StageSpec, cluster: ClusterSpec, machines: ArrayLike, bandwidth: ArrayLike) -> Seconds:
    """L(<N, B>) of one stage on N machines with B bytes/s between them (thesis §3.1.2)."""
    n, b = np.broadcast_arrays(np.asarray(machines, np.float64), np.asarray(bandwidth, np.float64))
    t_map, w_reduce, t_reduce = _map_and_reduce(stage, cluster, n)
    if stage.reduce_tasks == 0:
        return t_map
    b_shuffle = shuffle_bandwidth(cluster.disk_bandwidth_bytes_per_s, b)
    t_shuffle = w_reduce * (stage.shuffle_bytes / stage.reduce_tasks) / b_shuffle
    return t_map + t_shuffle + t_reduce


def critical_path(after: Mapping[str, Sequence[str]], stage_latency: Mapping[str, ArrayLike]) -> Seconds:
    """The longest source-to-sink path, max over paths of the sum of its stages' latencies (thesis §3.1.3, eq. 5.1).

    ``after`` maps each stage to the stages it runs after (acyclic); latencies broadcast elementwise.
    """
    finish: dict[str, Seconds] = {}
    pending = list(after)
    while pending:  # stages are acyclic, so each pass settles at least one stage
        ready = [s for s in pending if all(p in finish for p in after[s])]
        for s in ready:
            start = np.maximum.reduce([finish[p] for p in after[s]]) if after[s] else 0.0
            finish[s] = start + np.asarray(stage_latency[s], dtype=np.float64)
        pending = [s for s in pending if s not in finish]
    return np.maximum.reduce(list(finish.values()))


def dag_latency(job: JobSpec, stage_latency: dict[str, Seconds]) -> Seconds:
    """L_DAG = sum of L_s over the critical path, the longest source-to-sink path (thesis §3.1.3)."""
    return critical_path({s.name: s.after for s in job.stages}, stage_latency)


def job_rack_latency(job: JobSpec, cluster: ClusterSpec, racks: ArrayLike) -> Seconds:
    """L_j(r) of a job (one stage or a DAG) on r racks, by the cluster's model (thesis's or MRCute+)."""
    r = np.asarray(racks, dtype=np.float64)
    model = cluster.model
    if model == "paper":
        return dag_latency(job, {s.name: rack_latency(s, cluster, r) for s in job.stages})
    return model.job_startup_s + dag_latency(job, {s.name: plus_rack_latency(s, cluster, r, model) for s in job.stages})


def _fractional_waves(tasks: int, slots: NDArray[np.float64]) -> NDArray[np.float64]:
    # w = tasks / slots: a partial wave's idle slots go to R_j's other jobs (the run-time's back-filling, §4.1)
    return tasks / slots


def _packed_stage(stage: StageSpec, cluster: ClusterSpec, r: NDArray[np.float64], waves: Waves) -> Seconds:
    """A stage's L(r) with ``waves`` counting its waves and its shuffle crossing the network once, not once per
    reduce wave: its terms as MRCute (§3.1.2) or MRCute+ adds them."""
    if cluster.model == "paper":
        front, t_reduce, _ = _stage_terms(stage, cluster, r, waves, shuffle_per_wave=False)
        return front + t_reduce
    return plus_rack_latency(stage, cluster, r, cluster.model, waves, shuffle_per_wave=False)


def packed_latency(job: JobSpec, cluster: ClusterSpec, racks: ArrayLike) -> tuple[Seconds, Seconds]:
    """(P_j(r), F_j(r)) when the work-conserving run-time (thesis §4.1) back-fills R_j's idle slots with its
    other jobs: P, job j's hold on R_j, its stages' work at fractional waves, added (their tasks share the
    racks); F, the least time of the job itself, its critical path (§3.1.3) with whole waves per phase (a
    phase of n tasks on s slots takes ceil(n / s) task times, §3.1.2 "Waves"), after MRCute+'s job start-up.
    Both cross the network once per shuffle. The start-up (its ApplicationMaster's launch and set-up) holds
    one container, not R_j's task slots, so it is in F only: the run-time runs other jobs' tasks on R_j meanwhile."""
    r = np.asarray(racks, dtype=np.float64)
    startup = 0.0 if cluster.model == "paper" else cluster.model.job_startup_s
    held = sum((_packed_stage(s, cluster, r, _fractional_waves) for s in job.stages), start=np.zeros_like(r))
    floor = dag_latency(job, {s.name: _packed_stage(s, cluster, r, _waves) for s in job.stages})
    return held, startup + floor


def packed_table(jobs: list[JobSpec], cluster: ClusterSpec) -> tuple[Seconds, Seconds]:
    """(P, F) as J x R arrays over r = 1..R (``packed_latency``)."""
    r = np.arange(1, len(cluster.racks) + 1, dtype=np.float64)
    if not jobs:
        return np.zeros((0, r.size)), np.zeros((0, r.size))
    held, floor = zip(*(packed_latency(j, cluster, r) for j in jobs))
    return np.stack(held), np.stack(floor)


def default_alpha(cluster: ClusterSpec) -> float:
    """alpha = 1 / (bandwidth between one rack and the core), as in the thesis's experiments (§4.3.4)."""
    return 1.0 / cluster.rack_core_bandwidth_bytes_per_s


def latency_table(jobs: list[JobSpec], cluster: ClusterSpec, alpha: float) -> tuple[Seconds, Seconds]:
    """(L, L') as J x R arrays over r = 1..R, with L'_j(r) = L_j(r) + alpha D_j^I / r (thesis §4.3.4)."""
    r = np.arange(1, len(cluster.racks) + 1, dtype=np.float64)
    latency = np.stack([job_rack_latency(j, cluster, r) for j in jobs]) if jobs else np.zeros((0, r.size))
    inputs = np.array([j.input_bytes for j in jobs], dtype=np.float64)[:, None]
    return latency, latency + alpha * inputs / r
