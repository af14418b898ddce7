"""Planned against actual: how a period's plan held up once its jobs ran (issue 13 item 6).

Each planned job j is joined to the runs that carry its plan entry (plan id, period, job name; the
``corral-plan:``, ``corral-period:`` and ``corral-job:`` tags, docs/rack-tags.md), never by a run's
name. A run in the period that carries no entry of this plan is an ad hoc run. Times are seconds from
the plan's time 0: the period start for an online plan (jobs are submitted at their planned start
T_j), the first submission of the plan's runs for a batch plan (every job is released at once).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from corral_yarn.contracts import Plan, PlannedJob
from corral_yarn.errors import InputError

SUCCEEDED = "SUCCEEDED"


@dataclass(frozen=True)
class ActualRun:
    """One run from the history store, as the report needs it (YARN lower-cases the plan entry)."""

    run_id: str
    name: str  # shown, never joined on
    submit_time: datetime
    start_time: datetime | None
    finish_time: datetime | None
    outcome: str
    racks: tuple[str, ...] = ()  # where its task attempts ran
    plan_id: str | None = None
    plan_period: str | None = None
    planned_job: str | None = None


@dataclass(frozen=True)
class RunLocality:
    """A run record's locality (the pipeline's verify step): containers and input blocks inside R_j."""

    containers: int
    containers_in_racks: int
    blocks: int
    blocks_in_racks: int

    @property
    def container_share(self) -> float | None:
        return self.containers_in_racks / self.containers if self.containers else None

    @property
    def block_share(self) -> float | None:
        return self.blocks_in_racks / self.blocks if self.blocks else None


@dataclass(frozen=True)
class JobOutcome:
    """Planned job j beside its run (None: planned but never ran), times in seconds from time 0."""

    planned: PlannedJob
    run: ActualRun | None
    attempts: int
    start_s: float | None
    finish_s: float | None
    locality: RunLocality | None

    @property
    def latency_s(self) -> float | None:
        """The run's latency, start to finish (what MRCute's L_j(r_j) predicts, thesis §3.1.2)."""
        return self.finish_s - self.start_s if self.finished else None

    @property
    def finished(self) -> bool:
        return self.run is not None and self.run.outcome == SUCCEEDED and None not in (self.start_s, self.finish_s)

    @property
    def model_error(self) -> float | None:
        """(predicted L_j(r_j) - actual latency) / actual latency; positive when the model was slow."""
        latency = self.latency_s
        return (self.planned.predicted_duration_s - latency) / latency if latency else None


@dataclass(frozen=True)
class Comparison:
    """A period's plan against what ran: one outcome per planned job, the ad hoc runs of the period."""

    plan: Plan
    period: str
    origin: datetime
    jobs: list[JobOutcome]
    ad_hoc: list[ActualRun]

    @property
    def never_ran(self) -> list[str]:
        return [o.planned.name for o in self.jobs if o.run is None]

    def actual_objective_s(self) -> float | None:
        """The plan's objective over the finished jobs as they ran: makespan (batch) or mean completion time
        from arrival (online); None unless every planned job finished."""
        if not self.jobs or not all(o.finished for o in self.jobs):
            return None
        if self.plan.scenario == "batch":
            return max(o.finish_s for o in self.jobs)  # type: ignore[type-var]
        return math.fsum(o.finish_s - o.planned.arrival_s for o in self.jobs) / len(self.jobs)  # type: ignore[operator]

    def mean_abs_model_error(self) -> float | None:
        errors = [abs(e) for o in self.jobs if (e := o.model_error) is not None]
        return math.fsum(errors) / len(errors) if errors else None

    def shares(self) -> tuple[float | None, float | None]:
        """Containers and input blocks inside R_j over every recorded job."""
        recorded = [o.locality for o in self.jobs if o.locality is not None]
        total = RunLocality(*(sum(getattr(r, f) for r in recorded) for f in ("containers", "containers_in_racks", "blocks", "blocks_in_racks")))
        return total.container_share, total.block_share


def compare(plan: Plan, period: str, period_start: datetime, period_end: datetime, runs: Iterable[ActualRun],
            localities: dict[str, RunLocality] | None = None) -> Comparison:
    """Join the plan's jobs to the runs of ``period`` (its ``corral-period:`` value) by their plan entry.

    ``localities``: the run records' locality by planned job name. Runs of the period window
    [period_start, period_end) that carry no entry of this plan are ad hoc."""
    if period_end <= period_start:
        raise InputError(f"the period must end after it starts: {period_start.isoformat()} .. {period_end.isoformat()}", field="--horizon")
    localities = localities or {}
    if unknown := sorted(set(localities) - {j.name for j in plan.jobs}):
        raise InputError(f"run records of jobs plan {plan.plan_id} does not have: {unknown[:5]}", field="--records")
    by_job: dict[str, list[ActualRun]] = {j.name.lower(): [] for j in plan.jobs}
    ad_hoc: list[ActualRun] = []
    for run in runs:
        mine = _entry_of(run, plan.plan_id, period)
        if mine is not None and mine in by_job:
            by_job[mine].append(run)
        elif period_start <= run.submit_time < period_end:
            ad_hoc.append(run)
    chosen = {name: _chosen(found) for name, found in by_job.items()}
    origin = _origin(plan, period_start, [r for r in chosen.values() if r is not None])
    jobs = [_outcome(j, chosen[j.name.lower()], len(by_job[j.name.lower()]), origin, localities.get(j.name)) for j in plan.jobs]
    return Comparison(plan, period, origin, jobs, sorted(ad_hoc, key=lambda r: (r.submit_time, r.run_id)))


def _entry_of(run: ActualRun, plan_id: str, period: str) -> str | None:
    """The planned job a run was made for, lower-cased, when it carries this plan's id and period."""
    if run.plan_id is None or run.plan_period is None or run.planned_job is None:
        return None
    same = run.plan_id.lower() == plan_id.lower() and run.plan_period.lower() == period.lower()
    return run.planned_job.lower() if same else None


def _chosen(runs: Sequence[ActualRun]) -> ActualRun | None:
    """The run that counts for a planned job run more than once: the last that succeeded, else the last."""
    ordered = sorted(runs, key=lambda r: (r.outcome == SUCCEEDED, r.submit_time, r.run_id))
    return ordered[-1] if ordered else None


def _origin(plan: Plan, period_start: datetime, runs: Sequence[ActualRun]) -> datetime:
    if plan.scenario == "batch" and runs:
        return min(r.submit_time for r in runs)
    return period_start


def _outcome(job: PlannedJob, run: ActualRun | None, attempts: int, origin: datetime, locality: RunLocality | None) -> JobOutcome:
    def offset(t: datetime | None) -> float | None:
        return (t - origin).total_seconds() if t is not None else None

    return JobOutcome(job, run, attempts, offset(run.start_time) if run else None, offset(run.finish_time) if run else None, locality)
