"""MRCute job parameters from the logs of earlier runs (thesis §3.1.2, "Estimating job-specific
parameters"): Estimator(P, D_s, H_P) -> {S_map, S_reduce, B_map, B_reduce, B_D}.

* S_map = input / shuffle and S_reduce = shuffle / output, as ratios of sums over the runs;
* B_map^P = a map task's input bytes over its duration; B_reduce^P = a reduce task's output bytes over
  its reduce-phase time (our contract's unit, docs/model.md); the median over the tasks of the runs;
* B_D per machine: the 95th percentile of the task rates seen on that machine. A task runs at
  Min{B_D, B^P} <= B_D, so this is a lower bound of the disk bandwidth, not a disk benchmark.

Runs of the job in production are used when they carry task samples; otherwise the job's profiling
runs (``is_profile``: the job run on a sample, thesis §3.1.2's fallback for a job with no history).

MRCute+ (docs/model.md): ``fit_model`` fits its cluster-wide parameters (scale, per-job and per-task
start-up costs) by least squares on the durations of real runs, ``model_errors`` gives each run's
predicted latency against its actual one.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, StageSpec
from corral_yarn.errors import InputError
from corral_yarn.model import job_rack_latency, plus_terms
from corral_yarn.model.classes import STARTUPS, classes_startup, mean_startup, with_startups
from estimator.classes import observed as observed_speedups
from estimator.records import SUCCEEDED, JobRun, TaskSample

log = logging.getLogger(__name__)

RECENT_RUNS = 10
DISK_QUANTILE = 0.95


@dataclass(frozen=True)
class MRCuteParams:
    """The fitted parameters of one recurring job; None where its history says nothing."""

    map_selectivity: float | None
    reduce_selectivity: float | None
    map_rate_bytes_per_s: float | None
    reduce_rate_bytes_per_s: float | None
    bytes_per_map_task: float | None
    reduce_tasks: int | None
    runs: int
    from_profile: bool


def _rates(samples: Sequence[TaskSample]) -> list[float]:
    return [s.bytes / s.seconds for s in samples if s.seconds > 0 and s.bytes > 0]


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if numerator > 0 and denominator > 0 else None


def fit_job(runs: Sequence[JobRun]) -> MRCuteParams:
    """Fit one job's parameters from its most recent successful runs (RECENT_RUNS of them)."""
    ok = [r for r in runs if r.outcome == SUCCEEDED and r.has_sizes]
    production = [r for r in ok if not r.is_profile and r.map_task_samples]
    from_profile = not production
    used = (production or [r for r in ok if r.is_profile] or [r for r in ok if not r.is_profile])[-RECENT_RUNS:]
    if not used:
        return MRCuteParams(None, None, None, None, None, None, 0, False)
    sum_in, sum_sh, sum_out = (sum(getattr(r, q) for r in used) for q in ("input_bytes", "shuffle_bytes", "output_bytes"))
    per_map = [r.input_bytes / r.map_tasks for r in used if r.map_tasks]
    reduces = [r.reduce_tasks for r in used if r.reduce_tasks is not None]
    return MRCuteParams(
        map_selectivity=_ratio(sum_in, sum_sh),  # S_map = |D_i| / D_i^S (thesis §3.1.2)
        reduce_selectivity=_ratio(sum_sh, sum_out),  # S_reduce = shuffle / output
        map_rate_bytes_per_s=_median(_rates([s for r in used for s in r.map_task_samples])),
        reduce_rate_bytes_per_s=_median(_rates([s for r in used for s in r.reduce_task_samples])),
        bytes_per_map_task=_median(per_map),
        reduce_tasks=int(round(float(np.median(reduces)))) if reduces else None,
        runs=len(used),
        from_profile=from_profile and any(r.is_profile for r in used),
    )


def disk_bandwidth(runs: Sequence[JobRun]) -> dict[str, float]:
    """B_D per machine (bytes/s): the DISK_QUANTILE of the task rates observed on it (a lower bound)."""
    by_node: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        for s in (*r.map_task_samples, *r.reduce_task_samples):
            if s.node and s.seconds > 0 and s.bytes > 0:
                by_node[s.node].append(s.bytes / s.seconds)
    return {node: float(np.quantile(rates, DISK_QUANTILE)) for node, rates in sorted(by_node.items())}


@dataclass(frozen=True)
class ObservedRun:
    """One successful run as MRCute+ sees it: its stage (sizes, tasks, fitted rates), racks and duration."""

    run_id: str
    recurring_key: str
    stage: StageSpec
    racks: int
    actual_s: float
    classes: tuple[str, ...] = ()  # the node class of each of its racks (heterogeneous racks; empty otherwise)


@dataclass(frozen=True)
class JobError:
    """One run's predicted latency (thesis model and the cluster's model) against its actual duration."""

    run_id: str
    recurring_key: str
    racks: int
    actual_s: float
    paper_s: float
    model_s: float

    @property
    def error(self) -> float:
        """predicted / actual - 1 by the cluster's model (thesis §3.1.2 reports |error| <= 12 % on average)."""
        return self.model_s / self.actual_s - 1.0


def observed_runs(runs: Sequence[JobRun], cluster: ClusterSpec) -> tuple[list[ObservedRun], Counter[str]]:
    """The runs MRCute+ can be fitted on, rates from ``fit_job`` over their recurring job; and why others are not."""
    by_key: dict[str, list[JobRun]] = defaultdict(list)
    for r in runs:
        by_key[r.recurring_key].append(r)
    params = {key: fit_job(sorted(rs, key=lambda r: r.submit_time)) for key, rs in by_key.items()}
    rack_class = {r.name: r.node_class for r in cluster.racks if r.node_class}
    learned = observed_speedups(runs, cluster) if rack_class else {}
    out, skipped = [], Counter[str]()
    for r in runs:
        p = params[r.recurring_key]
        reason = _unusable(r, p)
        if reason:
            skipped[reason] += 1
            continue
        stage = StageSpec(name="main", input_bytes=r.input_bytes, shuffle_bytes=r.shuffle_bytes if r.reduce_tasks else 0.0,
                          output_bytes=r.output_bytes, map_tasks=r.map_tasks, reduce_tasks=r.reduce_tasks,
                          map_rate_bytes_per_s=p.map_rate_bytes_per_s, reduce_rate_bytes_per_s=p.reduce_rate_bytes_per_s or 1.0)
        actual = (r.finish_time - (r.start_time or r.submit_time)).total_seconds()
        classes = tuple(rack_class[name] for name in r.racks if name in rack_class)
        if classes:  # its tasks at its rates on the classes it ran on (estimator/classes.py), mean over its racks
            speedup = float(np.mean([learned.get(r.recurring_key, {}).get(c, 1.0) for c in classes]))
            stage = stage.model_copy(update={"map_rate_bytes_per_s": stage.map_rate_bytes_per_s * speedup,
                                             "reduce_rate_bytes_per_s": stage.reduce_rate_bytes_per_s * speedup})
        out.append(ObservedRun(r.run_id, r.recurring_key, stage, min(len(r.racks), len(cluster.racks)), actual, classes))
    return out, skipped


def _unusable(r: JobRun, p: MRCuteParams) -> str | None:
    """Why a run cannot be used to fit or check the model, or None."""
    if r.outcome != SUCCEEDED or r.is_profile:
        return "not a successful production run"
    if not r.has_sizes or not r.map_tasks or r.reduce_tasks is None:
        return "no sizes or task counts"
    if r.finish_time is None or not r.racks:
        return "no finish time or racks"
    if p.map_rate_bytes_per_s is None or (r.reduce_tasks and p.reduce_rate_bytes_per_s is None):
        return "no task samples to fit its rates"
    if (r.finish_time - (r.start_time or r.submit_time)).total_seconds() <= 0:
        return "no duration"
    return None


def fit_model(observed: Sequence[ObservedRun], cluster: ClusterSpec, template: MRCutePlus | None = None) -> MRCutePlus:
    """MRCute+'s scale, per-job and per-task start-up costs by non-negative least squares on relative error.

    actual = scale x (T_map + T_shuffle + max(T_reduce, T_write))(r) + task_startup x waves(r) + job_startup for every run; rows are
    divided by the actual duration so that each run weighs by its relative error, the figure reported.
    """
    template = template or MRCutePlus()
    if len(observed) < 3:
        raise InputError(f"fitting MRCute+ needs at least 3 usable runs (got {len(observed)})", field="runs")
    return fit_cluster(observed, cluster, template).model  # type: ignore[return-value]


def fit_cluster(observed: Sequence[ObservedRun], cluster: ClusterSpec, template: MRCutePlus | None = None) -> ClusterSpec:
    """``cluster`` with MRCute+ fitted (``fit_model``); on node classes the job constant is one per class,
    each run's share of its racks in a class its regressor (a job's AM starts on one of its racks), written
    to ``node_classes[c].job_startup_s``, and the model's constant is their mean over the racks; when the
    runs do not tell the classes apart (``_separable``), one constant s_0 at speedup 1, each class's
    s_0 / speedup (``_speed_scaled``). The per-task start-up is always one t_0 at speedup 1, each class's
    t_0 / speedup in ``node_classes[c].task_startup_s``, each run's waves times its racks' mean 1 / speedup."""
    template = template or MRCutePlus()
    if len(observed) < 3:
        raise InputError(f"fitting MRCute+ needs at least 3 usable runs (got {len(observed)})", field="runs")
    seen = [c for c in cluster.class_names if any(c in o.classes for o in observed)] if cluster.node_classes else []
    names = seen if _separable(observed, seen) else []
    terms = [plus_terms(o.stage, cluster, o.racks, template) for o in observed]
    shares = [[_on_classes(o, cluster).count(c) / len(_on_classes(o, cluster)) for c in names] or [_speed_scaled(o, cluster)]
              for o in observed]
    # the waves regressor of t_0, the per-task start-up at speedup 1: a container's launch is CPU work on its node (Session 18)
    design = np.array([[float(base), float(waves) * _speed_scaled(o, cluster), *share] for o, (base, waves), share in zip(observed, terms, shares)])
    actual = np.array([o.actual_s for o in observed])
    constants = list(range(2, design.shape[1]))
    columns = [0, 1, *constants] if np.linalg.matrix_rank(design) == design.shape[1] else [0, *constants]
    if 1 not in columns:
        log.warning("every run has the same waves-to-size relation; task start-up is not separable and is folded into the job constant")
    if np.linalg.matrix_rank(design[:, columns]) < len(columns):
        raise InputError("the runs do not separate the parameters: give runs of different sizes", field="runs")
    coef, _ = nnls(design[:, columns] / actual[:, None], np.ones_like(actual))
    fitted = dict(zip(columns, coef, strict=True))
    if fitted[0] <= 0:
        raise InputError("the fit gives the MRCute terms no weight: the runs' durations do not grow with their sizes", field="runs")
    return _with_fitted(cluster, template.model_copy(update={"scale": float(fitted[0]), "fitted_runs": len(observed)}),
                        float(fitted.get(1, 0.0)), [float(fitted[k]) for k in constants], names)


def _with_fitted(cluster: ClusterSpec, model: MRCutePlus, t_0: float, constants: list[float], names: list[str]) -> ClusterSpec:
    """The cluster with the fitted start-ups: each class its job constant (``names``'s own, else s_0 / speedup)
    and t_0 / speedup; the model's figures their means over the racks (``mean_startup``; a class without a
    figure counts 0)."""
    per_class = dict(zip(names, constants, strict=True)) if names else {c: constants[0] / _speedup(cluster, c) for c in cluster.class_names}
    classes = {c: n.model_copy(update={"task_startup_s": t_0 / _speedup(cluster, c), **({"job_startup_s": per_class[c]} if c in per_class else {})})
               for c, n in (cluster.node_classes or {}).items()}
    out = cluster.model_copy(update={"model": model.model_copy(update={"job_startup_s": 0.0 if names else constants[0], "task_startup_s": t_0}),
                                     **({"node_classes": classes} if classes else {})})
    return out.model_copy(update={"model": out.model.model_copy(update={kind: mean_startup(out, kind) for kind in STARTUPS})})


def _speedup(cluster: ClusterSpec, name: str | None) -> float:
    return cluster.node_classes[name].speedup if name is not None and cluster.node_classes else 1.0


def _on_classes(o: ObservedRun, cluster: ClusterSpec) -> tuple[str | None, ...]:
    """The classes of the racks a run is charged for: its own, or every rack's when it recorded none (as
    ``run_cluster`` charges it the model's figures, the means over every rack)."""
    return o.classes or tuple(r.node_class for r in cluster.racks)


def _speed_scaled(o: ObservedRun, cluster: ClusterSpec) -> float:
    """A run's regressor of s_0 when the classes' job constants are not separable: the AM's launch, set-up
    and commit are work on the node it starts on, so it takes s_0 / speedup there; the mean over its racks."""
    return float(np.mean([1.0 / _speedup(cluster, c) for c in _on_classes(o, cluster)]))


def _separable(observed: Sequence[ObservedRun], classes: list[str]) -> bool:
    """Whether the runs tell the classes' job constants apart: each class has a run confined to its racks
    (Corral's runs inside R_j are). Runs that all spread over the classes in like shares (stock YARN) leave
    the per-class constants collinear, and the least squares would put their sum anywhere (docs/paragon.md,
    Session 16): then one constant is fitted, scaled by each class's speedup (``_speed_scaled``)."""
    if unconfined := [c for c in classes if not any(o.classes and set(o.classes) == {c} for o in observed)]:
        log.warning("no run was confined to the node classes %s: one job start-up is fitted, scaled by each class's speedup", unconfined)
    return not unconfined


def run_cluster(o: ObservedRun, cluster: ClusterSpec) -> ClusterSpec:
    """``cluster`` with MRCute+'s start-ups those of run ``o``'s racks, each class's figure averaged over them:
    what ``fit_cluster`` charges the run (its regressors, a class's share of its racks or their mean
    1 / speedup, times the fitted figures). A run with no recorded classes keeps the model's, the mean over every rack."""
    return cluster.model_copy(update=with_startups(cluster, lambda kind: classes_startup(cluster, kind, o.classes))) if o.classes else cluster


def model_errors(observed: Sequence[ObservedRun], cluster: ClusterSpec) -> list[JobError]:
    """Per run: the thesis model's and the cluster's model's L_j(r) against the actual duration, the latter
    with the start-ups of the run's racks (``run_cluster``)."""
    if cluster.node_classes and (unplaced := sum(not o.classes for o in observed)):
        log.warning("%d runs do not record their racks' node classes: their start-ups are the model's, the mean over every rack", unplaced)
    paper = cluster.model_copy(update={"model": "paper"})
    out = []
    for o in observed:
        job = JobSpec(name="run", stages=[o.stage])
        out.append(JobError(o.run_id, o.recurring_key, o.racks, o.actual_s,
                            float(job_rack_latency(job, paper, o.racks)), float(job_rack_latency(job, run_cluster(o, cluster), o.racks))))
    return out
