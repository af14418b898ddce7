"""Predicted recurring jobs for a planning period [at, at + horizon) as the planner's ``Workload``.

For each day of the period, each recurring job's submission slots (times of day it ran at on most
previous same-type days) become jobs: arrival, input / shuffle / output bytes by the job's predictor
(chosen by rolling backtest under ``auto``), tasks and rates by the MRCute fit (thesis §3.1.2). Sizes
are scaled by ``1 + slack``, the thesis's slack against prediction errors (§1, §3.1). Intervals and
the choices made go to a details document, since the jobs contract carries none.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from corral_yarn.contracts import BLOCK_BYTES, ClusterSpec, JobSpec, StageSpec, Workload
from corral_yarn.errors import InputError
from estimator.adhoc import class_rates, deficit, size_class
from estimator.backtest import AUTO, COVERAGE, Point, backtest_job, choose, conformal
from estimator.classes import with_class_speedups
from estimator.errors import EstimateError
from estimator.fit import MRCuteParams, fit_job
from estimator.interference import with_interference
from estimator.newjobs import NewJob, check_arrivals, declared_sizes, new_job_params
from estimator.predictors import PREDICTORS, QUANTITIES, Context, History, Instance, Season, instances, predict, predict_offset, slots
from estimator.records import JobRun
from estimator.sources.swim import REDUCER_BYTES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EstimateOptions:
    at: datetime
    horizon: timedelta
    predictor: str = AUTO
    slack: float = 0.0
    coverage: float = COVERAGE
    season: Season = field(default_factory=Season)
    default_map_rate_bytes_per_s: float = 50e6
    default_reduce_rate_bytes_per_s: float = 50e6
    block_bytes: int = BLOCK_BYTES  # the cluster's dfs.blocksize: one map task per block for jobs whose runs do not say
    adhoc: bool = False  # ad hoc jobs (adhoc.py): on in 'corral estimate', off for a pipeline that runs only its catalog's jobs

    def __post_init__(self) -> None:
        if self.predictor not in (AUTO, *PREDICTORS):
            raise InputError(f"unknown predictor {self.predictor!r}; choose {AUTO} or one of {sorted(PREDICTORS)}", field="predictor")
        if not (0 <= self.slack < math.inf and 0 < self.coverage < 1):  # written so that NaN fails too
            raise InputError(f"slack must be finite and >= 0 and coverage in (0, 1) (got {self.slack}, {self.coverage})", field="slack")
        for name in ("default_map_rate_bytes_per_s", "default_reduce_rate_bytes_per_s"):
            if not 0 < getattr(self, name) < math.inf:
                raise InputError(f"must be a finite rate > 0 bytes/s (got {getattr(self, name)})", field=name)


@dataclass
class Estimate:
    """The predicted jobs, how each was predicted, default rates used, and the recurring jobs in the
    history that have no sized successful run to predict from (e.g. non-MapReduce RM apps)."""

    workload: Workload
    details: list[dict[str, Any]]
    defaults_used: Counter[str]
    unsized_jobs: list[str]


def _interval(points: Sequence[Point], predictor: str, quantity: str, coverage: float, value: float) -> list[float] | None:
    """The split-conformal interval of ``value`` from the job's backtest ratios actual / predicted."""
    i = QUANTITIES.index(quantity)
    ratio = conformal([p.actual[i] / p.predicted[i] for p in points if p.predictor == predictor and p.predicted[i] > 0], coverage)
    return [value * ratio[0], value * ratio[1]] if ratio and value > 0 else None


def _stage(sizes: dict[str, float], params: MRCuteParams, options: EstimateOptions, defaults: Counter[str]) -> StageSpec:
    map_rate = params.map_rate_bytes_per_s
    reduce_rate = params.reduce_rate_bytes_per_s
    if map_rate is None:
        defaults["map_rate"] += 1
        map_rate = options.default_map_rate_bytes_per_s
    if reduce_rate is None:
        defaults["reduce_rate"] += 1
        reduce_rate = options.default_reduce_rate_bytes_per_s
    reduce_tasks = params.reduce_tasks if params.reduce_tasks is not None else (1 if sizes["shuffle_bytes"] > 0 else 0)
    shuffle = sizes["shuffle_bytes"] if reduce_tasks > 0 else 0.0  # a map-only job shuffles nothing
    return StageSpec(
        name="main",
        input_bytes=sizes["input_bytes"],
        shuffle_bytes=shuffle,
        output_bytes=sizes["output_bytes"],
        map_tasks=max(1, math.ceil(sizes["input_bytes"] / (params.bytes_per_map_task or options.block_bytes))),
        reduce_tasks=reduce_tasks,
        map_rate_bytes_per_s=map_rate,
        reduce_rate_bytes_per_s=reduce_rate,
    )


@dataclass(frozen=True)
class _Job:
    """What one recurring job's slots share: its key, predictor, backtest points and MRCute fit."""

    key: str
    predictor: str
    points: list[Point]
    params: MRCuteParams


def _predicted(job: _Job, arrival: datetime, ctx: Context, options: EstimateOptions, defaults: Counter[str]) -> tuple[JobSpec, dict[str, Any]]:
    """The JobSpec of one slot arriving at ``arrival`` and the details of how it was predicted."""
    predicted = {q: predict(ctx, job.predictor, q) for q in QUANTITIES}
    sizes = {q: v * (1.0 + options.slack) for q, v in predicted.items()}
    paths = {i.run.input_path for i in ctx.matched}
    spec = JobSpec(
        name=f"{job.key[:180]}@{arrival:%Y%m%dT%H%M%S}",
        arrival_s=(arrival - options.at).total_seconds(),
        stages=[_stage(sizes, job.params, options, defaults)],
        input_path=paths.pop() if len(paths) == 1 else None,  # only a path every matched run read
        recurring_key=job.key,
    )
    detail = {
        "name": spec.name,
        "recurring_key": job.key,
        "predictor": job.predictor,
        "matched_runs": [i.run.run_id for i in ctx.matched],
        "arrival": arrival.isoformat(),
        "predicted": predicted,
        "slack": options.slack,
        "interval_coverage": options.coverage,
        # auto's intervals from auto's own backtest residuals (a chosen predictor's look better than they are)
        "intervals": {q: _interval(job.points, options.predictor, q, options.coverage, predicted[q]) for q in QUANTITIES},
        "mrcute": asdict(job.params),
    }
    return spec, detail


def _jobs_of(key: str, items: list[Instance], runs: list[JobRun], options: EstimateOptions, defaults: Counter[str],
             known: Sequence[Point] | None) -> list[tuple[JobSpec, dict[str, Any]]]:
    """The predicted instances of one recurring job in [at, at + horizon); ``known``: its backtest points
    before ``at`` when already computed (they depend on earlier instances only)."""
    season, end = options.season, options.at + options.horizon
    points = list(known) if known is not None else backtest_job(key, items, season, options.coverage)
    predictor = choose([p for p in points if p.predictor != AUTO]) if options.predictor == AUTO else options.predictor
    job = _Job(key, predictor, points, fit_job(runs))
    history = History(items, season)
    cut = bisect.bisect_left([i.time for i in items], season.start(season.day(options.at)))  # whole days before --at's
    recent = items[max(0, cut - season.lookback_days):cut]
    out = []
    for day in range(season.day(options.at), season.day(end - timedelta(microseconds=1)) + 1):
        for matched in slots(history, day, options.at):
            ctx = Context(matched, recent, day, season)
            arrival = season.start(day) + timedelta(seconds=predict_offset(ctx, predictor))
            if options.at <= arrival < end:
                out.append(_predicted(job, arrival, ctx, options, defaults))
    return out


def _unique_names(pairs: list[tuple[JobSpec, dict[str, Any]]]) -> list[tuple[JobSpec, dict[str, Any]]]:
    """Two slots of a job predicted at the same second get names ``…@T`` and ``…@T-2``."""
    seen: Counter[str] = Counter()
    out = []
    for job, detail in pairs:
        seen[job.name] += 1
        if seen[job.name] > 1:
            job = job.model_copy(update={"name": f"{job.name}-{seen[job.name]}"})
            detail = {**detail, "name": job.name}
        out.append((job, detail))
    return out


def _declared(jobs: Sequence[NewJob], runs: Sequence[JobRun], options: EstimateOptions,
              defaults: Counter[str], source: str) -> list[tuple[JobSpec, dict[str, Any]]]:
    """New jobs as declared, sized and rated from their profiling runs (thesis §3.1.2)."""
    check_arrivals(jobs, options.at, options.at + options.horizon, source)
    out = []
    for k, job in enumerate(jobs):
        params = new_job_params(job, runs)
        sizes = declared_sizes(job, params, field=f"{source}: jobs[{k}]")
        spec = JobSpec(name=f"{job.recurring_key[:180]}@{job.arrival:%Y%m%dT%H%M%S}", arrival_s=(job.arrival - options.at).total_seconds(),
                       stages=[_stage(sizes, params, options, defaults)], recurring_key=job.recurring_key)
        out.append((spec, {"name": spec.name, "recurring_key": job.recurring_key, "predictor": "declared", "matched_runs": [],
                           "arrival": job.arrival.isoformat(), "predicted": sizes, "mrcute": asdict(params)}))
    return out


def _adhoc(past: Sequence[Instance], slot_jobs: Sequence[tuple[JobSpec, dict[str, Any]]], options: EstimateOptions,
           defaults: Counter[str]) -> list[tuple[JobSpec, dict[str, Any]]]:
    """Jobs for the size classes' arrival rates the recurring slots leave uncovered (estimator/adhoc.py)."""
    rates = class_rates(past, options.at, options.horizon, options.season)
    if rates.windows < options.season.min_history:
        return []
    add = deficit(rates, Counter(size_class(d["predicted"]["input_bytes"], d["predicted"]["shuffle_bytes"]) for _, d in slot_jobs))
    n, out, scale = sum(add.jobs.values()), [], add.scale(rates)
    for k, cls in enumerate(sorted(add.jobs.elements())):
        arrival = options.at + options.horizon * ((k + 0.5) / n)
        predicted = {q: v * scale[q] for q, v in rates.sizes[cls].items()}
        sizes = {q: v * (1.0 + options.slack) for q, v in predicted.items()}
        reducers = math.ceil(sizes["shuffle_bytes"] / REDUCER_BYTES) if sizes["shuffle_bytes"] > 0 else 0
        params = MRCuteParams(None, None, None, None, None, reducers, runs=0, from_profile=False)
        key = f"adhoc-{cls}"
        spec = JobSpec(name=f"{key}@{arrival:%Y%m%dT%H%M%S}", arrival_s=(arrival - options.at).total_seconds(),
                       stages=[_stage(sizes, params, options, defaults)], recurring_key=key)
        out.append((spec, {"name": spec.name, "recurring_key": key, "predictor": "class_rate", "matched_runs": [],
                           "arrival": arrival.isoformat(), "predicted": predicted, "slack": options.slack,
                           "class_rate": rates.rate[cls], "class_windows": rates.windows}))
    return out


def estimate(runs: Sequence[JobRun], options: EstimateOptions, new_jobs: Sequence[NewJob] = (),
             points: dict[str, list[Point]] | None = None, new_jobs_source: str = "new jobs") -> Estimate:
    """The predicted jobs of [at, at + horizon), from the runs submitted before ``at``: the recurring jobs'
    slots, the size classes' uncovered arrival rates (unless ``options.adhoc`` is off) and the new jobs
    declared. ``points``: a backtest of the same runs to reuse (only its points before ``at`` are used);
    ``new_jobs_source`` names the new jobs' file in errors."""
    past = sorted((r for r in runs if r.submit_time < options.at), key=lambda r: r.submit_time)
    by_key = instances(past)
    runs_by_key: dict[str, list[JobRun]] = {}
    for r in past:
        runs_by_key.setdefault(r.recurring_key, []).append(r)
    defaults: Counter[str] = Counter()
    pairs = [pair for key in sorted(by_key)
             for pair in _jobs_of(key, by_key[key], runs_by_key[key], options, defaults,
                                  None if points is None else [p for p in points.get(key, []) if p.time < options.at])]
    if options.adhoc:
        pairs += _adhoc(sorted((i for v in by_key.values() for i in v), key=lambda i: i.time), pairs, options, defaults)
    pairs += _declared(new_jobs, past, options, defaults, new_jobs_source)
    if not pairs:
        raise EstimateError(
            f"no recurring job has a submission slot in [{options.at.isoformat()}, {(options.at + options.horizon).isoformat()}) "
            f"with at least {options.season.min_history} matching runs on previous days; ingest more history or widen --horizon"
        )
    pairs = _unique_names(sorted(pairs, key=lambda p: (p[0].arrival_s, p[0].name)))
    if defaults:
        log.warning("default task rates used where the history has no task samples: %s", dict(defaults))
    unsized = sorted(runs_by_key.keys() - by_key.keys() - {j.recurring_key for j in new_jobs})
    if unsized:
        log.warning("%d recurring jobs have no sized successful run and are not predicted: %s", len(unsized), ", ".join(unsized[:10]))
    return Estimate(Workload(jobs=[j for j, _ in pairs]), [d for _, d in pairs], defaults, unsized)


def with_classes_and_interference(workload: Workload, runs: Sequence[JobRun], at: datetime, cluster: ClusterSpec | None,
                                  interference: float | None) -> tuple[Workload, dict[str, Any]]:
    """Paragon's two classifications learnt from the runs submitted before ``at`` (docs/paragon.md): each job's
    per-class speedups when ``cluster`` has node classes, and the jobs it interferes with when ``interference``
    (the threshold F) is given. Returns the jobs and what was learnt, for the details document."""
    past = [r for r in runs if r.submit_time < at]
    details: dict[str, Any] = {}
    if cluster is not None and cluster.node_classes:
        workload, classes = with_class_speedups(workload, past, cluster)
        details["class_speedups"] = {"speedups": classes.speedups, "filled_by_classification": classes.filled}
    if interference is not None:
        workload = with_interference(workload, past, interference)
        marked = {j.recurring_key: j.interferes_with for j in workload.jobs if j.interferes_with}
        details["interference"] = {"threshold": interference, "interferes_with": dict(sorted(marked.items()))}
    return workload, details
