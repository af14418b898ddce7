"""The plan report: what the offline planner decided (thesis §4.3) and how good it is, as HTML + PNGs."""

from __future__ import annotations

import math
import os
from pathlib import Path

from corral_yarn.contracts import ClusterSpec, Plan, PlannedJob, Workload
from corral_yarn.errors import InputError
from corral_yarn.report import charts, html
from corral_yarn.report.actual import Comparison
from corral_yarn.report.charts import Bar, Marker, Panel
from corral_yarn.report.html import fmt_bytes, fmt_percent, fmt_seconds
from corral_yarn.report.versus import actual_bars, actual_markers, versus_section

SCHEDULE_PNG = "schedule.png"
RACK_INPUT_PNG = "rack_input.png"
SUMMARY_PNG = "summary.png"
_RACKS_SHOWN = 12


def render_plan_report(plan: Plan, cluster: ClusterSpec | None = None, workload: Workload | None = None,
                       actual: Comparison | None = None) -> dict[str, bytes]:
    """The report's files by name (index.html and its PNGs); pure, nothing is written. With ``actual``
    (the period's runs joined to the plan) the Gantt chart overlays the runs and a planned-vs-actual
    section follows the schedule."""
    racks = _rack_lanes(plan, cluster)
    if workload is not None:
        _check_jobs(plan, workload)
    overlay = actual_bars(actual, racks) if actual is not None else []
    markers = _markers(plan) + (actual_markers(actual) if actual is not None else [])
    pngs = {
        SUMMARY_PNG: charts.comparison_png(_summary_panels(plan)),
        SCHEDULE_PNG: charts.gantt_png(racks, _bars(plan, racks), _schedule_title(plan), markers, overlay=overlay, overlay_label="actual run"),
        RACK_INPUT_PNG: charts.lane_bars_png(
            racks, [plan.rack_input_bytes.get(r, 0.0) for r in racks],
            f"Planned input bytes per rack (coefficient of variation {plan.rack_input_cov:.3f})", "input bytes", fmt_bytes),
    }
    sections = [
        html.section("Summary", html.key_values(_summary(plan, racks)),
                     html.figure(pngs[SUMMARY_PNG], SUMMARY_PNG, "Objective against the LP lower bound; cross-rack shuffle bytes against spreading every job over all racks.")),
        html.section("Schedule", html.figure(pngs[SCHEDULE_PNG], SCHEDULE_PNG, _schedule_caption(plan, actual))),
        *([versus_section(actual)] if actual is not None else []),
        html.section("Input data per rack", html.figure(pngs[RACK_INPUT_PNG], RACK_INPUT_PNG, "Each job's input D_j is split evenly over its racks R_j (the Corral replica; thesis §4.3.4).")),
        html.section("Jobs", _jobs_table(plan, workload)),
    ]
    if cluster is not None:
        sections.append(html.section("Cluster", html.key_values(_cluster_figures(cluster))))
    title = f"Corral plan: {plan.scenario} scenario on {plan.cluster_name}"
    subtitle = f"plan {plan.plan_id} by {plan.planner_version}"
    return {html.INDEX: html.page(title, subtitle, sections).encode("utf-8"), **pngs}


def write_plan_report(plan: Plan, out_dir: str | os.PathLike[str], cluster: ClusterSpec | None = None, workload: Workload | None = None,
                      actual: Comparison | None = None) -> Path:
    """Render the report, then publish it into ``out_dir``; returns the path of index.html."""
    return html.publish(out_dir, render_plan_report(plan, cluster, workload, actual))


def _rack_lanes(plan: Plan, cluster: ClusterSpec | None) -> list[str]:
    planned = {r for j in plan.jobs for r in j.racks} | set(plan.rack_input_bytes)
    if cluster is None:  # the plan lists every rack of its cluster in rack_input_bytes, in cluster order
        return list(plan.rack_input_bytes) + sorted(planned - set(plan.rack_input_bytes))
    if unknown := sorted(planned - set(cluster.rack_names)):
        raise InputError(f"the plan uses racks the cluster does not have: {unknown[:5]}", field="--cluster")
    return cluster.rack_names


def _check_jobs(plan: Plan, workload: Workload) -> None:
    if missing := sorted({j.name for j in plan.jobs} - {j.name for j in workload.jobs}):
        raise InputError(f"the plan has jobs the jobs file does not: {missing[:5]}", field="--jobs")


def _bars(plan: Plan, racks: list[str]) -> list[Bar]:
    lane = {r: k for k, r in enumerate(racks)}
    return [Bar(tuple(lane[r] for r in j.racks), j.planned_start_s, j.planned_finish_s, (j.name, f"#{j.order}"), j.order) for j in plan.jobs]


def _markers(plan: Plan) -> list[Marker]:
    last = max((j.planned_finish_s for j in plan.jobs), default=0.0)
    markers = [Marker(last, f"last finish {fmt_seconds(last)}")]
    if plan.lower_bound_s is None:
        return markers
    if plan.scenario == "batch":  # a bound on the makespan: the last finish
        return [*markers, Marker(plan.lower_bound_s, f"LP-Batch bound {fmt_seconds(plan.lower_bound_s)}", "#d62728", ":")]
    # online: mean(C_j - A_j) >= bound, so the mean finish instant is at least mean(A_j) + bound (§4.3.5)
    mean_arrival = math.fsum(j.arrival_s for j in plan.jobs) / len(plan.jobs) if plan.jobs else 0.0
    return [*markers, Marker(mean_arrival + plan.objective_s, f"mean finish, plan {fmt_seconds(mean_arrival + plan.objective_s)}", "#1f77b4", "-."),
            Marker(mean_arrival + plan.lower_bound_s, f"online bound on the mean finish {fmt_seconds(mean_arrival + plan.lower_bound_s)}", "#d62728", ":")]


def _schedule_title(plan: Plan) -> str:
    return f"Planned schedule: {len(plan.jobs)} jobs, {plan.scenario} scenario, {plan.objective.replace('_', ' ')} {fmt_seconds(plan.objective_s)}"


def _schedule_caption(plan: Plan, actual: Comparison | None = None) -> str:
    caption = ("Each bar is one job on its racks R_j, from its planned start T_j to T_j + L'_j(r_j) (MRCute latency plus the "
               "data-balance penalty alpha D_j / r_j). Labels are job names, or #order in the priority order when the name does not fit. "
               "Jobs on a rack at the same time (slot-aware sharing) split its row into bands, one per job, a job keeping its band on each of its racks.")
    if plan.scenario == "online" and plan.lower_bound_s is not None:
        caption += (" The online bound is on the mean completion time from arrival, so the dotted line is the mean arrival plus the bound: "
                    "no schedule's mean finish comes before it.")
    if actual is not None:
        caption += (" Hatched bars are the runs as they happened (history store), on the racks their tasks ran on, from their start to "
                    f"their finish; time 0 is {actual.origin.isoformat()}.")
    return caption


def _summary(plan: Plan, racks: list[str]) -> list[tuple[str, str]]:
    saved = 1.0 - plan.cross_rack_shuffle_bytes / plan.all_racks_cross_rack_shuffle_bytes if plan.all_racks_cross_rack_shuffle_bytes else None
    bound = "not computed" if plan.lower_bound_s is None else fmt_seconds(plan.lower_bound_s)
    return [
        ("scenario", plan.scenario),
        (f"objective: {plan.objective.replace('_', ' ')}", fmt_seconds(plan.objective_s)),
        ("LP lower bound", bound),
        ("gap to the bound", fmt_percent(plan.gap)),
        ("jobs", f"{len(plan.jobs)}"),
        ("racks", f"{len(racks)}"),
        ("planned input bytes", fmt_bytes(sum(plan.rack_input_bytes.values()))),
        ("input bytes per rack: coefficient of variation", f"{plan.rack_input_cov:.3f}"),
        ("cross-rack shuffle bytes: this plan", fmt_bytes(plan.cross_rack_shuffle_bytes)),
        ("cross-rack shuffle bytes: every job on all racks", fmt_bytes(plan.all_racks_cross_rack_shuffle_bytes)),
        ("cross-rack shuffle saved", fmt_percent(saved)),
        ("alpha (data-balance penalty)", f"{plan.alpha_s_per_byte:.3g} s/byte"),
        ("inputs sha256", plan.inputs_sha256),
    ]


def _summary_panels(plan: Plan) -> list[Panel]:
    objective = plan.objective.replace("_", " ")
    labels, values = ["plan"], [plan.objective_s]
    if plan.lower_bound_s is not None:
        labels.append("LP lower bound")
        values.append(plan.lower_bound_s)
    return [
        Panel(f"{objective.capitalize()} (gap {fmt_percent(plan.gap)})", labels, values, fmt_seconds),
        Panel("Cross-rack shuffle bytes", ["plan", "every job on all racks"],
              [plan.cross_rack_shuffle_bytes, plan.all_racks_cross_rack_shuffle_bytes], fmt_bytes),
    ]


def _rack_list(job: PlannedJob) -> str:
    shown = ", ".join(job.racks[:_RACKS_SHOWN])
    more = len(job.racks) - _RACKS_SHOWN
    return f"{shown}, … (+{more} more)" if more > 0 else shown


def _jobs_table(plan: Plan, workload: Workload | None) -> str:
    specs = {j.name: j for j in workload.jobs} if workload is not None else {}
    headers = ["#", "job", "priority", "r_j", "racks R_j", "arrival", "planned start", "L_j(r_j)", "planned finish", "input", "cross-rack shuffle"]
    if specs:
        headers += ["tasks", "shuffle"]
    rows = []
    for j in plan.jobs:
        row: list[object] = [j.order, j.name, j.priority, len(j.racks), _rack_list(j), fmt_seconds(j.arrival_s), fmt_seconds(j.planned_start_s),
                             fmt_seconds(j.predicted_duration_s), fmt_seconds(j.planned_finish_s), fmt_bytes(j.input_bytes), fmt_bytes(j.cross_rack_shuffle_bytes)]
        if specs:
            row += [specs[j.name].tasks, fmt_bytes(specs[j.name].shuffle_bytes)]
        rows.append(row)
    numeric = {0, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12}
    return html.table(headers, rows, numeric=numeric, wrap={4})


def _cluster_figures(cluster: ClusterSpec) -> list[tuple[str, str]]:
    return [
        ("name", cluster.name),
        ("racks x machines (smallest rack)", f"{len(cluster.racks)} x {cluster.machines_per_rack}"),
        ("map / reduce slots per machine", f"{cluster.map_slots_per_machine} / {cluster.reduce_slots_per_machine}"),
        ("NIC bandwidth", f"{fmt_bytes(cluster.nic_bandwidth_bytes_per_s)}/s"),
        ("disk bandwidth", f"{fmt_bytes(cluster.disk_bandwidth_bytes_per_s)}/s"),
        ("oversubscription", f"{cluster.oversubscription:.2f}:1"),
        ("rack-to-core bandwidth", f"{fmt_bytes(cluster.rack_core_bandwidth_bytes_per_s)}/s"),
    ]
