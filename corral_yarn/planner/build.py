"""From predicted jobs and a cluster to a Plan: MRCute latencies -> heuristic -> LP bound -> figures."""

from __future__ import annotations

import logging
from typing import Callable, Literal

import numpy as np
from numpy.typing import NDArray

from corral_yarn import __version__
from corral_yarn.contracts import CUSTOM_PROFILE, MAX_SECONDS, ClusterSpec, JobSpec, MRCutePlus, Order, Plan, PlannedJob, PlanOptions, Sharing, Workload
from corral_yarn.errors import InputError
from corral_yarn.io import inputs_sha256
from corral_yarn.model import default_alpha, latency_table, packed_table
from corral_yarn.model.classes import check_class_speedups, class_cluster, class_racks, identical_machines, job_on_class
from corral_yarn.nomora.latency import LatencyMatrix
from corral_yarn.nomora.perf import PUBLISHED, fit
from corral_yarn.planner import fast, hetero, reference
from corral_yarn.planner.bounds import lower_bound
from corral_yarn.planner.network import Perf, RackChoice, rack_choice
from corral_yarn.planner.schedule import DEFAULT_ORDER, Scenario, Schedule, SlotDemand, effective_arrival, objective, replay

log = logging.getLogger(__name__)

PLANNER_VERSION = f"corral-yarn-planner/{__version__}"
# The planning algorithm's version per sharing mode: bumped whenever the same inputs give a different
# plan in that mode, so that a plan_id pins one plan (docs/planner.md "Plan identity"). Version 1 is
# hashed as before versions existed (whole-rack plans keep their plan_id); slots 2: split jobs hold
# their racks' uplinks (25 Nov 2026).
ALGORITHM_VERSION: dict[Sharing, int] = {"whole-rack": 1, "slots": 2}
# Whole-rack plans on a cluster with node classes, hashed only there (plans without classes keep their
# plan_id): 2 since 26 Nov 2026, the class choice judged as the work-conserving run-time executes it;
# 3 since 27 Nov 2026, a job's start-up in its own least time F only, not in its hold P of R_j's slots;
# 4 since 27 Nov 2026 (session 17), F with whole waves per phase (ceil, thesis §3.1.2 "Waves").
CLASS_ALGORITHM_VERSION = 5
Implementation = Literal["fast", "reference"]
IMPLEMENTATIONS: dict[str, Callable[..., Schedule]] = {
    "fast": fast.plan,
    "reference": reference.plan,
}


def build_plan(
    workload: Workload,
    cluster: ClusterSpec,
    scenario: Scenario,
    alpha: float | None = None,
    implementation: Implementation = "fast",
    with_bound: bool = True,
    step: Callable[[str], None] | None = None,
    order: Order | None = None,
    sharing: Sharing = "whole-rack",
    rack_latency: LatencyMatrix | None = None,
) -> Plan:
    """Plan ``workload`` on ``cluster``; alpha defaults to 1 / rack-to-core bandwidth (§4.3.4), the
    prioritization order to the scenario's default (``DEFAULT_ORDER``). With ``rack_latency`` (a
    rack-pair matrix naming every rack of the cluster) latency-sensitive jobs, those with a
    ``latency_profile``, prefer rack sets of low latency (docs/planner.md "Network latency").

    ``step`` is told the name of each phase as it starts (for a progress display)."""
    step = step or (lambda name: None)
    jobs = workload.jobs
    alpha = default_alpha(cluster) if alpha is None else alpha
    options = PlanOptions(order=order or DEFAULT_ORDER[scenario], sharing=sharing)
    step("latency model")
    check_class_speedups(jobs, cluster)
    arrival = np.array([j.arrival_s for j in jobs], dtype=np.float64)
    log.info("planning %d jobs on %d racks (%s, %s, %s order)", len(jobs), len(cluster.racks), scenario, implementation, options.order)
    slots = slot_demand(jobs, cluster) if sharing == "slots" else None
    if rack_latency is not None and (slots is not None or cluster.node_classes is not None):
        raise InputError("a rack latency matrix works with whole-rack sharing on racks of one node class only", field="latency_file")
    network = None
    if cluster.node_classes is None:
        latency, penalized = _latency(jobs, cluster, alpha)
        network = network_choice(jobs, cluster, penalized, rack_latency) if rack_latency is not None else None
        sensitive = network if network is not None and network.sensitive.any() else None
        step(f"{implementation} heuristic")
        schedule = IMPLEMENTATIONS[implementation](scenario, penalized, arrival, options.order, slots=slots, network=sensitive)
        # no job runs shorter than its floor L_j(r) / p_j(d_low(r)), so the LP over the floor table is a bound
        job_class, bound_table = None, penalized if sensitive is None else sensitive.floor
    else:
        step(f"{implementation} heuristic per node class")
        latency, penalized, schedule, job_class, bound_table = _plan_classes(workload, cluster, scenario, alpha, arrival, implementation, options)
    with_bound = with_bound and slots is None  # the LP bound is over whole racks: sharing may beat it
    if with_bound:
        step("LP lower bound")
    bound = lower_bound(scenario, bound_table, arrival) if with_bound else None
    # whole-rack plans keep the digest (and plan_id) they had before sharing existed; the same for the latency matrix
    extra = {"rack_latency_us": network.rack_us.tolist()} if network is not None else {}
    algorithm = ALGORITHM_VERSION[sharing]
    extra |= {"algorithm": algorithm} if algorithm > 1 else {}
    by_class = cluster.node_classes is not None and slots is None
    extra |= {"class_algorithm": CLASS_ALGORITHM_VERSION} if by_class else {}
    digest = inputs_sha256(workload, cluster, {"scenario": scenario, "alpha": alpha, "planner": PLANNER_VERSION,
                                               **options.model_dump(exclude=None if slots else {"sharing"}), **extra})
    planned = _planned_jobs(jobs, cluster, schedule, latency, penalized, arrival if scenario == "online" else 0 * arrival, job_class, network)
    rack_bytes = _rack_input_bytes(cluster, planned)
    return Plan(
        plan_id=digest[:16],
        planner_version=f"{PLANNER_VERSION} ({sharing} algorithm {algorithm}{f', node classes {CLASS_ALGORITHM_VERSION}' if by_class else ''})",
        inputs_sha256=digest,
        cluster_name=cluster.name,
        scenario=scenario,
        objective="makespan" if scenario == "batch" else "mean_completion_time",
        objective_s=schedule.objective,
        lower_bound_s=bound,
        gap=(schedule.objective / bound - 1.0) if bound else None,
        alpha_s_per_byte=alpha,
        model=cluster.model,
        options=options,
        jobs=planned,
        rack_input_bytes=rack_bytes,
        rack_input_cov=_cov(list(rack_bytes.values())),
        cross_rack_shuffle_bytes=sum(p.cross_rack_shuffle_bytes for p in planned),
        all_racks_cross_rack_shuffle_bytes=sum(_cross_rack_shuffle(j, len(cluster.racks)) for j in jobs),
    )


def _latency(jobs: list[JobSpec], cluster: ClusterSpec, alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(L, L') over r = 1..R, checked finite (thesis §4.3.4)."""
    with np.errstate(over="ignore", invalid="ignore"):
        latency, penalized = latency_table(jobs, cluster, alpha)
    _check_finite(jobs, penalized)
    return latency, penalized


def _plan_classes(workload: Workload, cluster: ClusterSpec, scenario: Scenario, alpha: float, arrival: NDArray[np.float64],
                  implementation: Implementation, options: PlanOptions) -> tuple[NDArray[np.float64], NDArray[np.float64], Schedule, list[str] | None, NDArray[np.float64]]:
    """Heterogeneous racks (docs/paragon.md): per class L and L' of every job at its speedups there, the
    classes' plans as one schedule, each job's class, and the table the LP bound is taken over; or, when
    its objective is smaller, the plan of identical machines at each job's mean rates (jobs span classes)."""
    names, racks = cluster.class_names, class_racks(cluster)
    tables, rows = [], []
    for name in names:
        sub = class_cluster(cluster, name)
        on_class = [job_on_class(j, cluster, name) for j in workload.jobs]
        latency, penalized = _latency(on_class, sub, alpha)
        slots = slot_demand(on_class, sub) if options.sharing == "slots" else None
        tables.append(hetero.ClassTable(racks[name], penalized, slots, packed_table(on_class, sub) if slots is None else None))
        rows.append((latency, penalized))
    planner = IMPLEMENTATIONS[implementation]
    result = hetero.plan(scenario, tables, arrival, planner, options.order)
    n_racks = len(cluster.racks)
    bound_table = _bound_table(rows, n_racks)
    flat_jobs, flat = identical_machines(workload.jobs, cluster)
    flat_latency, flat_penalized = _latency(flat_jobs, flat, alpha)
    flat_slots = slot_demand(flat_jobs, flat) if options.sharing == "slots" else None
    spread = planner(scenario, flat_penalized, arrival, options.order, slots=flat_slots)
    if flat_slots is None:  # judged as it would run on these racks, as the one-class-per-job plan is
        flat_latency, flat_penalized, spread, spread_run_time = _on_its_racks(workload.jobs, cluster, flat, alpha, spread, arrival, scenario)
    ours, theirs = (result.schedule.objective, spread.objective) if flat_slots is not None else (result.run_time, spread_run_time)
    if theirs < ours:  # every class together beats one class per job
        log.info("node classes: jobs span the classes (objective %.6g against %.6g one class per job)", theirs, ours)
        return flat_latency, flat_penalized, spread, None, np.minimum(bound_table, flat_penalized)
    latency, penalized = (np.stack([_padded(rows[c][k][j], n_racks) for j, c in enumerate(result.job_class)]) for k in (0, 1))
    return latency, penalized, result.schedule, [names[c] for c in result.job_class], bound_table


def _on_its_racks(jobs: list[JobSpec], cluster: ClusterSpec, flat: ClusterSpec, alpha: float, spread: Schedule,
                  arrival: NDArray[np.float64], scenario: Scenario) -> tuple[NDArray[np.float64], NDArray[np.float64], Schedule, float]:
    """The identical-machines plan on the classed racks: each job at its mean task rates over its own R_j
    (not over the cluster), its starts replayed in its prioritization order (thesis Fig. 4.2: T_j = max{max
    F_i, A_j}), and its objective from those; L and L' over r = 1..R at the R_j mix of classes; and its
    objective as the work-conserving run-time executes it (``hetero.run_time_finish``), as the classes' plan is judged."""
    rated, on_racks = zip(*(_rated_on(job, cluster, flat, racks) for job, racks in zip(jobs, spread.rack_sets, strict=True)))
    latency, penalized = (np.concatenate(rows) for rows in zip(*(_latency([job], flat_j, alpha) for job, flat_j in zip(rated, on_racks))))
    due = effective_arrival(scenario, arrival)
    took = penalized[np.arange(len(jobs)), spread.rack_counts - 1]
    start = replay(spread.order, spread.rack_sets, took, due, len(cluster.racks))
    replayed = Schedule(spread.rack_counts, spread.rack_sets, start, spread.order, objective(scenario, start + took, due))
    held, floor = (np.concatenate(rows) for rows in zip(*(packed_table([job], flat_j) for job, flat_j in zip(rated, on_racks))))
    run_time = hetero.run_time_finish(scenario, replayed, held, floor, arrival, len(cluster.racks))
    return latency, penalized, replayed, objective(scenario, run_time, due)


def _rated_on(job: JobSpec, cluster: ClusterSpec, flat: ClusterSpec, racks: NDArray[np.int64]) -> tuple[JobSpec, ClusterSpec]:
    """The job at its mean task rates over its R_j and the identical machines with MRCute+'s start-ups at their
    means over R_j (its AM and its tasks start there; docs/paragon.md), over all R of the cluster's racks."""
    (rated,), on_racks = identical_machines([job], cluster.model_copy(update={"racks": [cluster.racks[i] for i in racks]}))
    return rated, flat.model_copy(update={"model": on_racks.model})


def _padded(row: NDArray[np.float64], n_racks: int) -> NDArray[np.float64]:
    """A class's L_j(r) over r = 1..R, infinite beyond the class's racks (a job stays in one class)."""
    return np.concatenate([row, np.full(n_racks - row.size, np.inf)])


def _bound_table(rows: list[tuple[NDArray[np.float64], NDArray[np.float64]]], n_racks: int) -> NDArray[np.float64]:
    """min over classes of L'_j(r): every plan's job on r racks of some class takes at least that, so the
    LP bounds over it stay bounds; r beyond every class gets the row's largest value (never used)."""
    best = np.minimum.reduce([np.stack([_padded(row, n_racks) for row in pen]) for _, pen in rows])
    largest = np.where(np.isfinite(best), best, -np.inf).max(axis=1, keepdims=True)
    return np.where(np.isfinite(best), best, largest)


def slot_demand(jobs: list[JobSpec], cluster: ClusterSpec) -> SlotDemand:
    """d_j(r), in map slots of one rack (docs/planner.md "Slot-aware sharing"): on r racks a stage's
    tasks use s = min(tasks, r x slots per rack) slots, ceil(s / r) per rack; a reduce slot counts as
    map slots per rack / reduce slots per rack map slots (rounded up); the job needs its widest stage."""
    m = cluster.machines_per_rack
    capacity = m * cluster.map_slots_per_machine
    reduce_capacity = m * cluster.reduce_slots_per_machine
    racks = np.arange(1, len(cluster.racks) + 1)
    demand = np.ones((len(jobs), racks.size), dtype=np.int64)
    for j, job in enumerate(jobs):
        for stage in job.stages:
            per_map = np.ceil(np.minimum(stage.map_tasks, racks * capacity) / racks)
            per_reduce = np.ceil(np.minimum(stage.reduce_tasks, racks * reduce_capacity) / racks)
            need = np.maximum(per_map, np.ceil(per_reduce * capacity / reduce_capacity))
            demand[j] = np.maximum(demand[j], np.minimum(need, capacity).astype(np.int64))
    return SlotDemand(demand, capacity, apart_pairs(jobs), np.array([_crosses_core(job, cluster) for job in jobs], dtype=bool))


def _crosses_core(job: JobSpec, cluster: ClusterSpec) -> bool:
    """Whether the job, split across racks, sends data over the core: its shuffle (D_i^core, §3.1.2), or the
    output replicas MRCute+ keeps inside R_j (docs/model.md)."""
    model = cluster.model
    inside = isinstance(model, MRCutePlus) and model.replication > 1 and not model.output_replicas_leave_racks
    return any(stage.shuffle_bytes > 0 or (inside and stage.output_bytes > 0) for stage in job.stages)


def apart_pairs(jobs: list[JobSpec]) -> frozenset[tuple[int, int]]:
    """Pairs (j, k), j < k, where one job names the other (its recurring key or name) in interferes_with;
    names of jobs not in this workload are ignored (they do not run in this period)."""
    by_id: dict[str, list[int]] = {}
    for j, job in enumerate(jobs):
        for ident in {job.name, job.recurring_key} - {None}:
            by_id.setdefault(ident, []).append(j)
    return frozenset((min(j, k), max(j, k)) for j, job in enumerate(jobs) for other in job.interferes_with or () for k in by_id.get(other, ()) if k != j)


def warn_interference_unused(jobs: list[JobSpec]) -> None:
    """Say that the interference pairs (``apart_pairs``) do not change a whole-rack plan: they steer only slot-sharing
    plans, and whole racks never put two jobs on one rack at a time (docs/paragon.md). The front ends decide when."""
    log.warning("interference is on but sharing is whole-rack: no two jobs are planned on a rack at a time, so the jobs that slowed each "
                "other in history (%d pair(s) among the planned jobs' interferes_with) are apart already and the pairs do not change the "
                "plan; they steer it only with sharing 'slots'", len(apart_pairs(jobs)))


def perf_function(job: JobSpec, index: int) -> Perf | None:
    """The job's performance-latency function: a published one by name, or fitted to its points (NoMora)."""
    profile = job.latency_profile
    if profile is None or isinstance(profile, str):
        return None if profile is None else PUBLISHED[profile]
    try:
        return fit(job.name, [(p.latency_us, p.perf) for p in profile.points], profile.threshold_us, profile.degree)
    except InputError as error:
        raise InputError(str(error), field=f"jobs[{index}] ({job.name}).latency_profile") from None


def latency_function(job: JobSpec) -> str | None:
    """The name the scheduler's ``corral-latency:`` tag carries: the published function's, or ``custom`` for the job's own points."""
    profile = job.latency_profile
    return None if profile is None else profile if isinstance(profile, str) else CUSTOM_PROFILE


def rack_latency_us(matrix: LatencyMatrix, cluster: ClusterSpec) -> NDArray[np.float64]:
    """The R x R latencies between the cluster's racks, in its rack order; every rack must be in the matrix."""
    for name in cluster.rack_names:
        if name not in matrix.names:
            raise InputError(f"rack {name!r} of the cluster is not in the latency matrix (it has {', '.join(matrix.names)})", field="names")
    index = [matrix.index(name) for name in cluster.rack_names]
    return matrix.latency_us[np.ix_(index, index)]


def network_choice(jobs: list[JobSpec], cluster: ClusterSpec, penalized: NDArray[np.float64], matrix: LatencyMatrix) -> RackChoice:
    """The planner's view of the network: rack-pair latencies and every job's performance-latency function."""
    return rack_choice(penalized, rack_latency_us(matrix, cluster), [perf_function(job, j) for j, job in enumerate(jobs)])


def _check_finite(jobs: list[JobSpec], penalized: NDArray[np.float64]) -> None:
    """Sizes and rates that make L_j(r) longer than MAX_SECONDS (or overflow) are an input error naming the job."""
    for j in np.flatnonzero(~(penalized <= MAX_SECONDS).all(axis=1)):
        raise InputError(f"its predicted latency reaches {penalized[j].max():.3g} s, over {MAX_SECONDS:.0e} s; check its sizes and rates",
                         field=f"jobs[{j}] ({jobs[j].name})")


def _cross_rack_shuffle(job: JobSpec, racks: int) -> float:
    # each machine sends (r-1)/r of its shuffle data across the core (MRCute D_i^core, §3.1.2)
    return job.shuffle_bytes * (racks - 1) / racks


def _planned_jobs(jobs: list[JobSpec], cluster: ClusterSpec, s: Schedule, latency: NDArray[np.float64], penalized: NDArray[np.float64], arrival: NDArray[np.float64],
                  job_class: list[str] | None, network: RackChoice | None) -> list[PlannedJob]:
    names = cluster.rack_names
    position = {j: k for k, j in enumerate(s.order)}
    planned = []
    for j, job in enumerate(jobs):
        r = int(s.rack_counts[j])
        duration = float(penalized[j, r - 1]) if network is None else network.duration(j, s.rack_sets[j])
        sensitive = network is not None and bool(network.sensitive[j])
        planned.append(
            PlannedJob(
                name=job.name,
                racks=[names[i] for i in s.rack_sets[j]],
                priority=len(jobs) - position[j],
                order=position[j],
                arrival_s=float(arrival[j]),
                planned_start_s=float(s.start[j]),
                predicted_duration_s=float(latency[j, r - 1]),
                planned_finish_s=float(s.start[j] + duration),
                input_bytes=job.input_bytes,
                cross_rack_shuffle_bytes=_cross_rack_shuffle(job, r),
                node_class=job_class[j] if job_class else None,
                rack_set_latency_us=network.spread(s.rack_sets[j]) if network is not None else None,
                expected_performance=network.performance(j, s.rack_sets[j]) if sensitive else None,
                latency_function=latency_function(job),
            )
        )
    return sorted(planned, key=lambda p: p.order)


def _rack_input_bytes(cluster: ClusterSpec, planned: list[PlannedJob]) -> dict[str, float]:
    """Bytes of the Corral replica per rack: D_j^I / r_j on each rack of R_j."""
    per_rack = dict.fromkeys(cluster.rack_names, 0.0)
    for p in planned:
        for rack in p.racks:
            per_rack[rack] += p.input_bytes / len(p.racks)
    return per_rack


def _cov(values: list[float]) -> float:
    """Coefficient of variation, stdev / mean (0 when there is no data)."""
    arr = np.asarray(values, dtype=np.float64)
    return float(arr.std() / arr.mean()) if arr.mean() > 0 else 0.0
