"""The planned-vs-actual part of a plan report: the runs drawn over the planned schedule, and the
per-job table of planned and actual start and finish, locality in R_j and the model's error."""

from __future__ import annotations

import math

from corral_yarn.report import html
from corral_yarn.report.actual import ActualRun, Comparison, JobOutcome
from corral_yarn.report.charts import Bar, Marker
from corral_yarn.report.html import fmt_percent, fmt_seconds


def actual_bars(actual: Comparison, racks: list[str]) -> list[Bar]:
    """One bar per run with a start and a finish, on the racks its tasks ran on (R_j when the history does not say)."""
    lane = {r.lower(): k for k, r in enumerate(racks)}
    bars = []
    for o in actual.jobs:
        if o.start_s is None or o.finish_s is None:
            continue
        ran = [lane[r.lower()] for r in (o.run.racks if o.run and o.run.racks else o.planned.racks) if r.lower() in lane]
        if ran:
            bars.append(Bar(tuple(ran), o.start_s, o.finish_s, (o.planned.name, f"#{o.planned.order}"), o.planned.order))
    return bars


def actual_markers(actual: Comparison) -> list[Marker]:
    """The objective as it ran: the last finish (batch) or the mean finish (online), once every planned job finished."""
    objective = actual.actual_objective_s()
    if objective is None:
        return []
    if actual.plan.scenario == "batch":
        return [Marker(objective, f"last finish, actual {fmt_seconds(objective)}", "#2ca02c", "-")]
    mean_finish = math.fsum(o.finish_s or 0.0 for o in actual.jobs) / len(actual.jobs)
    return [Marker(mean_finish, f"mean finish, actual {fmt_seconds(mean_finish)}", "#2ca02c", "-")]


def versus_section(actual: Comparison) -> str:
    """Summary figures, the per-job table and the period's ad hoc runs."""
    parts = [html.key_values(_summary(actual)), html.table(*_job_rows(actual), numeric={0, *range(4, 15)}, wrap={1})]
    if actual.ad_hoc:
        parts += [html.paragraph(f"{len(actual.ad_hoc)} runs in the period carry no entry of this plan (ad hoc, or another plan's):"),
                  html.table(*_ad_hoc_rows(actual), numeric={3, 4, 5}, wrap={1})]
    return html.section("Planned vs actual", *parts)


def _summary(actual: Comparison) -> list[tuple[str, str]]:
    plan = actual.plan
    ran = [o for o in actual.jobs if o.run is not None]
    containers, blocks = actual.shares()
    objective = plan.objective.replace("_", " ")
    measured = actual.actual_objective_s()
    return [
        ("period", actual.period),
        ("time 0", f"{actual.origin.isoformat()} ({'first submission of the batch' if plan.scenario == 'batch' else 'period start'})"),
        ("planned jobs that ran", f"{len(ran)} of {len(actual.jobs)}"),
        ("planned jobs that succeeded", f"{sum(1 for o in actual.jobs if o.finished)}"),
        ("planned jobs that never ran", ", ".join(actual.never_ran) or "none"),
        ("ad hoc runs in the period", f"{len(actual.ad_hoc)}"),
        (f"{objective}: plan", fmt_seconds(plan.objective_s)),
        (f"{objective}: actual", "n/a (not every planned job finished)" if measured is None else fmt_seconds(measured)),
        ("latency model of the plan", "paper (MRCute, thesis §3.1.2)" if plan.model == "paper" else "MRCute+ (fitted)"),
        ("mean |model error| (L_j(r_j) against start-to-finish)", fmt_percent(actual.mean_abs_model_error())),
        ("containers inside R_j", fmt_percent(containers)),
        ("input blocks with a replica inside R_j", fmt_percent(blocks)),
    ]


def _job_rows(actual: Comparison) -> tuple[list[str], list[list[object]]]:
    headers = ["#", "job", "run", "outcome", "runs", "planned start", "actual start", "start delay", "planned finish", "actual finish",
               "finish delay", "L_j(r_j)", "actual latency", "model error", "containers in R_j / blocks in R_j"]
    return headers, [_job_row(o) for o in actual.jobs]


def _job_row(o: JobOutcome) -> list[object]:
    p = o.planned
    return [p.order, p.name, o.run.run_id if o.run else "never ran", o.run.outcome if o.run else "", o.attempts,
            fmt_seconds(p.planned_start_s), _secs(o.start_s), _delay(o.start_s, p.planned_start_s), fmt_seconds(p.planned_finish_s),
            _secs(o.finish_s), _delay(o.finish_s, p.planned_finish_s), fmt_seconds(p.predicted_duration_s), _secs(o.latency_s),
            fmt_percent(o.model_error) if o.model_error is not None else "n/a",
            "no record" if o.locality is None else f"{fmt_percent(o.locality.container_share)} / {fmt_percent(o.locality.block_share)}"]


def _ad_hoc_rows(actual: Comparison) -> tuple[list[str], list[list[object]]]:
    def offset(run: ActualRun, attr: str) -> str:
        t = getattr(run, attr)
        return _secs((t - actual.origin).total_seconds() if t is not None else None)

    rows: list[list[object]] = [[r.run_id, r.name, r.outcome, offset(r, "submit_time"), offset(r, "start_time"), offset(r, "finish_time")]
                                for r in actual.ad_hoc]
    return ["run", "name", "outcome", "submitted", "started", "finished"], rows


def _secs(s: float | None) -> str:
    return "n/a" if s is None else fmt_seconds(s)


def _delay(actual_s: float | None, planned_s: float) -> str:
    return "n/a" if actual_s is None else f"{actual_s - planned_s:+,.1f} s"
