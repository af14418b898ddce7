"""``corral plan``, ``corral report``, ``corral example`` and ``corral plan-demo``: the offline planner's front end."""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from corral_yarn import io
from corral_yarn.cli.types import from_parser, non_negative_float, non_negative_int, positive_int
from corral_yarn.contracts import ClusterSpec, Plan, Workload
from corral_yarn.errors import InputError
from corral_yarn.nomora.latency import LatencyMatrix, RackLatencyMatrix
from corral_yarn.nomora.latency import load as load_latency
from corral_yarn.pipeline.outcome import period_comparison
from corral_yarn.pipeline.planning import PERIOD
from corral_yarn.pipeline.settings import Period
from corral_yarn.planner.build import IMPLEMENTATIONS, apart_pairs, build_plan, rack_latency_us, warn_interference_unused
from corral_yarn.planner.schedule import DEFAULT_ORDER, ORDERS, SCENARIOS, SHARING
from corral_yarn.report import write_plan_report
from corral_yarn.report.actual import Comparison
from corral_yarn.report.html import fmt_bytes, fmt_percent, fmt_seconds
from corral_yarn.workloads import example_cluster, w1_like

log = logging.getLogger(__name__)

CLUSTER_FILE = "cluster.json"
JOBS_FILE = "jobs.json"
DEMO_OUT = Path("out/demo")
DEMO_ARRIVAL_SPAN_S = 300.0  # arrivals close enough that online jobs queue for racks


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add plan, report, example and demo to the ``corral`` parser."""
    _register_plan(subparsers)
    _register_report(subparsers)
    _register_example(subparsers)
    _register_demo(subparsers)


def _register_plan(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("plan", help="plan jobs onto racks: rack sets, priorities, start times (thesis §4.3)",
                              description="Plan predicted jobs on a cluster with Corral's offline planner and write the plan as JSON.")
    p.add_argument("--jobs", required=True, type=Path, metavar="J.json", help="the predicted jobs (corral-yarn/jobs/v1 JSON)")
    p.add_argument("--cluster", required=True, type=Path, metavar="C.json", help="the cluster (corral-yarn/cluster/v1 JSON)")
    p.add_argument("--scenario", required=True, choices=SCENARIOS,
                   help="batch: all jobs at time 0, minimise the makespan; online: jobs at their arrival times, minimise the mean completion time")
    p.add_argument("--out", required=True, type=Path, metavar="PLAN.json", help="where to write the plan (written whole or not at all)")
    p.add_argument("--alpha", type=non_negative_float, metavar="X",
                   help="data-balance weight alpha in seconds per byte (thesis §4.3.4); default 1 / rack-to-core bandwidth; 0 turns it off")
    p.add_argument("--planner", choices=sorted(IMPLEMENTATIONS), default="fast",
                   help="fast (default) or reference, the literal and slow oracle; both give the same plan")
    p.add_argument("--order", choices=ORDERS,
                   help=f"prioritization order: thesis (earliest arrival, widest, longest first; thesis §4.3.4) or shortest-work "
                        f"(earliest arrival, then least rack-time r_j x L_j(r_j) first); default {DEFAULT_ORDER['batch']} for batch, "
                        f"{DEFAULT_ORDER['online']} for online")
    add_sharing_option(p)
    p.add_argument("--latency", type=Path, metavar="RACKS.csv|json",
                   help="rack-pair network latencies in microseconds (NoMora): jobs with a latency_profile prefer rack sets of low "
                        "latency (docs/planner.md, 'Network latency'); without it latency profiles are ignored")
    p.add_argument("--no-bound", action="store_true", help="skip the LP lower bound (the plan then has no gap)")
    p.set_defaults(func=_run_plan)


def add_sharing_option(p: argparse.ArgumentParser) -> None:
    """``--sharing``, whole racks or slot-aware sharing, as ``corral plan``, ``corral plan-demo`` and ``corral demo`` take it."""
    p.add_argument("--sharing", choices=SHARING, default="whole-rack",
                   help="whole-rack (default): each job holds its racks for its interval (thesis §4.3); slots: jobs whose tasks fit "
                        "in part of a rack share it (docs/planner.md, 'Slot-aware sharing'; no LP bound)")


def _register_report(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="render a plan as an HTML page with PNG charts; with --history, planned against actual",
                              description="Render a plan as a self-contained HTML page (index.html) plus its PNG charts; with --history, "
                                          "add the period's runs: planned against actual start and finish, locality and the model's error.")
    p.add_argument("plan", type=Path, metavar="PLAN.json", help="a plan written by 'corral plan'")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="the report directory (created; files in it are replaced whole)")
    p.add_argument("--cluster", type=Path, metavar="C.json", help="the plan's cluster, to list its hardware and check the plan's racks")
    p.add_argument("--jobs", type=Path, metavar="J.json", help="the plan's jobs, to add task counts and shuffle bytes to the job table")
    p.add_argument("--history", type=Path, metavar="STORE",
                   help="a history store holding the period's runs: adds planned against actual start and finish, the model's error, "
                        "and the runs drawn over the Gantt chart (runs join the plan by their corral-plan/-period/-job tags)")
    p.add_argument("--records", type=Path, metavar="DIR",
                   help="the pipeline's run records of this plan (<home>/records/<version>/), for each job's containers and blocks inside R_j")
    p.add_argument("--period-start", type=from_parser(io.parse_time), metavar="TIME",
                   help="the planning period's start, ISO 8601 (default: period.json beside PLAN.json, as the pipeline writes it)")
    p.add_argument("--horizon", type=from_parser(io.parse_duration), metavar="DURATION",
                   help="the period's length with --period-start, e.g. 24h; runs submitted in it that are not the plan's are ad hoc")
    p.set_defaults(func=_run_report)


def _register_example(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("example", help="write a sample cluster and a seeded W1-like workload",
                              description="Write DIR/cluster.json (racks like the thesis testbed) and DIR/jobs.json "
                                          "(W1-like jobs, thesis §4.5.2: small <= 50 tasks, medium <= 500, large >= 1000).")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for cluster.json and jobs.json")
    p.add_argument("--jobs", type=positive_int, default=50, metavar="N", help="number of jobs (default 50)")
    p.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--racks", type=positive_int, default=7, metavar="R", help="racks in the cluster (default 7)")
    p.add_argument("--machines-per-rack", type=positive_int, default=30, metavar="M", help="machines per rack (default 30)")
    p.add_argument("--arrival-span", type=non_negative_float, default=0.0, metavar="SECONDS",
                   help="spread arrivals uniformly over this many seconds (default 0: every job arrives at 0)")
    p.set_defaults(func=_run_example)


def _register_demo(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("plan-demo", help="offline only, no Hadoop: example inputs -> batch and online plans -> their reports, in seconds",
                              description="Write the example inputs, plan them in the batch and online scenarios, and render both reports (no cluster needed).")
    p.add_argument("--out", type=Path, default=DEMO_OUT, metavar="DIR", help=f"output directory (default {DEMO_OUT})")
    add_sharing_option(p)
    p.set_defaults(func=_run_demo)


def _run_plan(args: argparse.Namespace) -> int:
    workload, cluster = io.load_workload(args.jobs), io.load_cluster(args.cluster)
    rack_latency = _load_rack_latency(args.latency, cluster) if args.latency else None
    if args.sharing == "whole-rack" and apart_pairs(workload.jobs):  # jobs.json marked by corral estimate --interference
        warn_interference_unused(workload.jobs)
    with tqdm(total=2 if args.no_bound else 3, desc="corral plan", unit="phase", disable=None, file=sys.stderr) as bar:
        def step(name: str) -> None:  # the bar counts the phases started, the description names the running one
            bar.set_description(f"corral plan: {name}")
            bar.update()

        try:
            plan = build_plan(workload, cluster, args.scenario, alpha=args.alpha, implementation=args.planner,
                              with_bound=not args.no_bound, step=step, order=args.order, sharing=args.sharing,
                              rack_latency=rack_latency)
        except InputError as exc:  # the jobs and the cluster are valid alone but not together: name both files
            raise InputError(str(exc), field=f"{args.jobs} on {args.cluster}") from None
    io.save(plan, args.out)
    print(plan_summary(plan, len(cluster.racks), args.planner))
    print(f"Wrote {args.out}")
    return 0


def _load_rack_latency(path: Path, cluster: ClusterSpec) -> LatencyMatrix:
    """The rack-pair latency file, checked against the cluster's racks; an error names the file and field."""
    try:
        matrix = load_latency(path, RackLatencyMatrix)
        rack_latency_us(matrix, cluster)
    except InputError as error:
        raise InputError(str(error), field=str(path)) from None
    return matrix


def _run_report(args: argparse.Namespace) -> int:
    plan = io.load_plan(args.plan)
    cluster = io.load_cluster(args.cluster) if args.cluster else None
    workload = io.load_workload(args.jobs) if args.jobs else None
    actual = _actual(args, plan)
    log.info("rendering the report of plan %s (%d jobs) into %s", plan.plan_id, len(plan.jobs), args.out)
    index = write_plan_report(plan, args.out, cluster, workload, actual)
    if actual is not None:
        print(versus_summary(actual))
    print(index)
    return 0


def _actual(args: argparse.Namespace, plan: Plan) -> Comparison | None:
    """The plan against the period's runs when --history is given (the options that need it refused without it)."""
    if args.history is None:
        if given := next((o for o in ("records", "period_start", "horizon") if getattr(args, o) is not None), None):
            raise InputError("needs --history (the store holding the period's runs)", field="--" + given.replace("_", "-"))
        return None
    start, end = _period(args, plan)
    return period_comparison(plan, start, end, args.history, args.records)


def _period(args: argparse.Namespace, plan: Plan) -> tuple[datetime, datetime]:
    """[start, end) of the plan's period: --period-start and --horizon, else the pipeline's period.json beside the plan."""
    if args.period_start is not None or args.horizon is not None:
        if args.period_start is None or args.horizon is None:
            raise InputError("give --period-start and --horizon together", field="--horizon" if args.horizon is None else "--period-start")
        return args.period_start, args.period_start + args.horizon
    path = args.plan.parent / PERIOD
    if not path.is_file():
        raise InputError(f"no {PERIOD} beside {args.plan}: give the period as --period-start TIME --horizon DURATION", field="--period-start")
    period = io.load(Period, path)
    if period.scenario != plan.scenario:
        raise InputError(f"the period was planned {period.scenario}, the plan is {plan.scenario}: not this plan's period", field=f"{path}: scenario")
    return period.start, period.start + period.horizon


def versus_summary(actual: Comparison) -> str:
    """One paragraph: how many planned jobs ran, the objective planned and actual, the model's error and locality."""
    ran = sum(1 for o in actual.jobs if o.run is not None)
    measured = actual.actual_objective_s()
    containers, blocks = actual.shares()
    objective = actual.plan.objective.replace("_", " ")
    never = f" (never ran: {', '.join(actual.never_ran)})" if actual.never_ran else ""
    return (f"Period {actual.period}: {ran} of {len(actual.jobs)} planned jobs ran{never}, {len(actual.ad_hoc)} ad hoc runs. "
            f"{objective.capitalize()} planned {fmt_seconds(actual.plan.objective_s)}, actual "
            f"{'n/a' if measured is None else fmt_seconds(measured)}; mean |model error| {fmt_percent(actual.mean_abs_model_error())}; "
            f"containers inside R_j {fmt_percent(containers)}, input blocks {fmt_percent(blocks)}.")


def _run_example(args: argparse.Namespace) -> int:
    cluster = example_cluster(racks=args.racks, machines_per_rack=args.machines_per_rack)
    workload = w1_like(n_jobs=args.jobs, seed=args.seed, arrival_span_s=args.arrival_span)
    for path in write_inputs(args.out, cluster, workload):
        print(f"Wrote {path}")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    out: Path = args.out
    cluster, workload = example_cluster(), w1_like(n_jobs=50, seed=0, arrival_span_s=DEMO_ARRIVAL_SPAN_S)
    written = write_inputs(out, cluster, workload)
    with tqdm(total=2 * len(SCENARIOS), desc="corral plan-demo", unit="step", disable=None) as bar:
        for scenario in SCENARIOS:
            log.info("demo: planning and reporting the %s scenario", scenario)
            plan = build_plan(workload, cluster, scenario, sharing=args.sharing)
            plan_path = out / f"plan-{scenario}.json"
            io.save(plan, plan_path)
            bar.update()
            written += [plan_path, write_plan_report(plan, out / f"report-{scenario}", cluster, workload)]
            bar.update()
            print(plan_summary(plan, len(cluster.racks), "fast"), end="\n\n")
    print("Wrote", *written, sep="\n  ")
    print(f"Open {out / 'report-batch' / 'index.html'} and {out / 'report-online' / 'index.html'} in a browser.")
    return 0


def write_inputs(out: Path, cluster: ClusterSpec, workload: Workload) -> list[Path]:
    """Write ``cluster.json`` and ``jobs.json`` into ``out`` (both or, as far as it can, neither)."""
    paths = [out / CLUSTER_FILE, out / JOBS_FILE]
    io.write_together({paths[0]: io.to_json(cluster), paths[1]: io.to_json(workload)})
    return paths


def plan_summary(plan: Plan, racks: int, planner: str) -> str:
    """One paragraph: objective, bound and gap, jobs, data balance and cross-rack shuffle."""
    objective = plan.objective.replace("_", " ")
    sharing = ", slot sharing" if plan.options.sharing == "slots" else ""
    bound = ("no LP lower bound computed" if plan.lower_bound_s is None
             else f"against an LP lower bound of {fmt_seconds(plan.lower_bound_s)} (gap {fmt_percent(plan.gap)})")
    return (
        f"Planned {len(plan.jobs)} jobs on {racks} racks ({plan.scenario} scenario, {planner} planner, {plan.options.order} order{sharing}): "
        f"{objective} {fmt_seconds(plan.objective_s)}, {bound}. "
        f"Planned input bytes per rack have a coefficient of variation of {plan.rack_input_cov:.3f}; "
        f"cross-rack shuffle is {fmt_bytes(plan.cross_rack_shuffle_bytes)} against "
        f"{fmt_bytes(plan.all_racks_cross_rack_shuffle_bytes)} with every job on all racks."
    )
