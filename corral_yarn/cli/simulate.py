"""``corral simulate``, ``corral compare`` and ``corral sim-workload``: the flow-level simulator's front end (thesis §4.5)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from tqdm import tqdm

from corral_yarn import io
from corral_yarn.cli.types import non_negative_float, non_negative_int, positive_float, positive_int, unit_interval
from corral_yarn.errors import InputError
from corral_yarn.planner.schedule import SCENARIOS
from corral_yarn.sim import RunSpec, simulate
from corral_yarn.sim.network import SHARING
from corral_yarn.sim.experiments import reduction, run_all
from corral_yarn.sim.metrics import OfferedLoad, offered_load
from corral_yarn.sim.report import render
from corral_yarn.sim.schedulers import SCHEDULERS
from corral_yarn.sim.workloads import DEFAULT_SCALE, perturb, scale_sizes, spread_arrivals, swim_replay, with_adhoc
from corral_yarn.workloads import w1_like

log = logging.getLogger(__name__)
COMPARE_SCHEMA = "corral-yarn/sim-compare/v1"


_share = unit_interval(closed=False)
_fraction = unit_interval(closed=True)


def _names(choices: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in choices]
        if not names or unknown:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(choices)}, got {text!r}")
        return names
    return parse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", required=True, type=Path, metavar="C.json", help="the cluster (corral-yarn/cluster/v1 JSON)")
    p.add_argument("--workload", required=True, type=Path, metavar="W.json", help="the jobs that actually run (corral-yarn/jobs/v1 JSON); jobs without recurring_key are ad hoc")
    p.add_argument("--scenario", choices=SCENARIOS, default="online", help="batch: every job arrives at 0; online (default): jobs arrive at their arrival_s")
    p.add_argument("--seed", type=non_negative_int, default=0, help="random seed of data placement and scheduling choices (default 0)")
    p.add_argument("--predicted", type=Path, metavar="W.json", help="the predicted jobs the plan is built from (default: --workload itself); use it to inject prediction errors")
    p.add_argument("--plan", type=Path, metavar="PLAN.json", help="a plan from 'corral plan' for corral/localshuffle (default: planned here from the predicted jobs)")
    p.add_argument("--background-share", type=_share, default=0.0, metavar="F", help="share of every rack's core bandwidth taken by background traffic, in [0, 1) (default 0)")
    p.add_argument("--output-replication", type=int, choices=(1, 2, 3), default=3, help="HDFS replication of job output: 3 (default, HDFS), or 1 to write output locally only, as MRCute assumes")


def _base_workload(args: argparse.Namespace):
    """The predicted jobs: W1-like or a SWIM replay, sizes x --scale, plus --adhoc W1-like ad hoc jobs (§4.5.5)."""
    if args.source == "swim":
        if not (args.swim and args.cluster):
            raise InputError("--source swim needs --swim (the trace) and --cluster (to scale it to)")
        base = swim_replay(args.swim, io.load_cluster(args.cluster), args.swim_start, args.arrival_span, seed=args.seed)
    else:
        base = w1_like(args.jobs, seed=args.seed, arrival_span_s=args.arrival_span)
    if args.adhoc:
        base = with_adhoc(base, spread_arrivals(w1_like(args.adhoc, seed=args.seed + 1), args.arrival_span, seed=args.seed + 1))
    return scale_sizes(base, args.scale) if args.scale != 1.0 else base


def _run_sim_workload(args: argparse.Namespace) -> int:
    errors = args.size_error or args.arrival_error
    if errors and not args.predicted_out:
        raise InputError("--size-error/--arrival-error make what runs differ from the prediction: give --predicted-out for the prediction")
    predicted = _base_workload(args)
    actual = perturb(predicted, args.size_error, args.arrival_error, args.error_fraction, seed=args.seed) if errors else predicted
    io.write_together({args.out: io.to_json(actual), **({args.predicted_out: io.to_json(predicted)} if args.predicted_out else {})})
    adhoc = sum(1 for j in actual.jobs if j.recurring_key is None)
    print(f"wrote {len(actual.jobs)} jobs ({adhoc} ad hoc, bytes x {args.scale:g}) to {args.out}"
          + (f", the prediction to {args.predicted_out}" if args.predicted_out else ""))
    return 0


def _add_sim_workload(subparsers: argparse._SubParsersAction) -> None:
    w = subparsers.add_parser("sim-workload", help="write a workload for the simulator: W1-like or SWIM, ad hoc mix, prediction errors",
                              description="Write the jobs that run (--out) and, with errors injected, the prediction they came from (--predicted-out), for 'corral simulate --workload ... --predicted ...' (thesis §4.5.3-4.5.6).")
    w.add_argument("--out", required=True, type=Path, metavar="W.json", help="the jobs that actually run (corral-yarn/jobs/v1)")
    w.add_argument("--predicted-out", type=Path, metavar="P.json", help="the prediction (before --size-error/--arrival-error)")
    w.add_argument("--source", choices=("w1", "swim"), default="w1", help="w1: W1-like recurring jobs (default); swim: replay of the SWIM FB-2009 trace")
    w.add_argument("--jobs", type=positive_int, default=200, metavar="N", help="W1-like jobs (default 200)")
    w.add_argument("--arrival-span", type=non_negative_float, default=900.0, metavar="S", help="arrivals spread over S seconds; with swim, the trace window's length (default 900)")
    w.add_argument("--swim", type=Path, metavar="FILE", help="the SWIM trace (TSV), e.g. ../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv")
    w.add_argument("--swim-start", type=non_negative_float, default=0.0, metavar="S", help="second of the trace the window starts at (default 0)")
    w.add_argument("--cluster", type=Path, metavar="C.json", help="with swim: the cluster the trace's bytes are scaled to (machines / 600)")
    w.add_argument("--adhoc", type=non_negative_int, default=0, metavar="N", help="add N W1-like ad hoc jobs (no recurring key: the plan ignores them; §4.5.5)")
    w.add_argument("--scale", type=positive_float, default=DEFAULT_SCALE, metavar="F",
                   help="every job's bytes x F, same task counts (default 8: the thesis's cluster load, §4.5.6; 1: W1-like as generated)")
    w.add_argument("--size-error", type=_share, default=0.0, metavar="X", help="what runs has each job's sizes off by a uniform factor in [1-X, 1+X] (§4.5.6)")
    w.add_argument("--arrival-error", type=non_negative_float, default=0.0, metavar="T", help="... and arrivals off by a uniform [-T, T] seconds")
    w.add_argument("--error-fraction", type=_fraction, default=1.0, metavar="F", help="share of the jobs whose arrival is off (default 1)")
    w.add_argument("--seed", type=non_negative_int, default=0, metavar="N", help="random seed (default 0)")
    w.set_defaults(func=_run_sim_workload)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add simulate, compare and sim-workload to the ``corral`` parser."""
    _add_sim_workload(subparsers)
    p = subparsers.add_parser("simulate", help="simulate a workload on a cluster under one job scheduler and one network sharing policy",
                              description="Run the flow-level simulator (thesis §4.5.7) and write the per-job and summary metrics as JSON.")
    _common(p)
    p.add_argument("--scheduler", required=True, choices=SCHEDULERS, help="the job scheduler (thesis §4.5.2)")
    p.add_argument("--network", choices=sorted(SHARING), default="tcp", help="tcp: max-min fair sharing (default); varys: SEBF + MADD coflow scheduling")
    p.add_argument("--out", required=True, type=Path, metavar="RESULT.json", help="where to write the result (written whole or not at all)")
    p.add_argument("--report", type=Path, metavar="DIR", help="also write an HTML report with completion-time CDFs there")
    p.set_defaults(func=_run_simulate)

    c = subparsers.add_parser("compare", help="simulate several scheduler/network combinations on the same workload and seed",
                              description="Run every scheduler x network combination on the same workload and seed; write all results and one report. The first combination is the baseline of the reductions.")
    _common(c)
    c.add_argument("--schedulers", type=_names(SCHEDULERS), default=list(SCHEDULERS), metavar="S[,S...]", help=f"comma-separated, first is the baseline (default {','.join(SCHEDULERS)})")
    c.add_argument("--networks", type=_names(tuple(sorted(SHARING))), default=["tcp"], metavar="N[,N...]", help="comma-separated: tcp, varys (default tcp)")
    c.add_argument("--out", required=True, type=Path, metavar="RESULTS.json", help="where to write all results (written whole or not at all)")
    c.add_argument("--report", type=Path, metavar="DIR", help="write an HTML report with completion-time CDFs (like thesis Figs. 4.12, 4.19) there")
    c.set_defaults(func=_run_compare)


def _inputs(args: argparse.Namespace):
    cluster = io.load_cluster(args.cluster)
    workload = io.load_workload(args.workload)
    predicted = io.load_workload(args.predicted) if args.predicted else workload
    if args.plan:
        plan = io.load_plan(args.plan)
        if plan.scenario != args.scenario:
            raise InputError(f"the plan is for the {plan.scenario} scenario, not {args.scenario}", field="--plan")
    else:
        plan = None
    return cluster, workload, predicted, plan


def _spec(args: argparse.Namespace, scheduler: str, network: str) -> RunSpec:
    return RunSpec(scheduler, network, args.scenario, args.seed, args.background_share, args.output_replication)


def _offered(args: argparse.Namespace, cluster, workload) -> OfferedLoad:
    """Print what the workload asks of the cluster before it runs (every run's output starts with it)."""
    load = offered_load(workload, cluster, args.scenario, args.background_share, args.output_replication)
    if load.slot_load is None:
        print(f"offered load: {load.jobs} jobs at 0 s (batch), {load.task_hours:.1f} task-hours, "
              f"{load.spread_cross_rack_bytes / 1e12:.3f} TB across the core if spread over every rack")
    else:
        print(f"offered load: {load.jobs} jobs over {load.span_s:.0f} s ({load.jobs_per_hour:.0f} jobs/h): "
              f"slot load {100 * load.slot_load:.1f} %, core load {100 * load.core_load:.1f} % of the rack uplinks left by the background")
    return load


def _run_simulate(args: argparse.Namespace) -> int:
    cluster, workload, predicted, plan = _inputs(args)
    _offered(args, cluster, workload)
    result = simulate(cluster, workload, _spec(args, args.scheduler, args.network), plan=plan, predicted=predicted)
    report = {args.report: render([result], title=f"Simulation: {result.label}")} if args.report else {}
    io.write_together({args.out: io.to_json(result), **report})  # the result and its report, or neither
    _print_summary([result])
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    cluster, workload, predicted, plan = _inputs(args)
    load = _offered(args, cluster, workload)
    specs = [_spec(args, s, n) for s in args.schedulers for n in args.networks]
    results = run_all(cluster, workload, tqdm(specs, desc="simulating", unit="run", disable=None), predicted=predicted, plan=plan)
    doc = {"schema_version": COMPARE_SCHEMA, "offered_load": load.model_dump(mode="json"), "runs": [r.model_dump(mode="json") for r in results]}
    report = {args.report: render(results, title="Simulation: comparison")} if args.report else {}
    io.write_together({args.out: json.dumps(doc, indent=2) + "\n", **report})  # the results and their report, or neither
    _print_summary(results)
    return 0


def _print_summary(results) -> None:
    base = results[0].summary
    for r in results:
        s = r.summary
        gain = reduction(s.mean_completion_s, base.mean_completion_s)
        print(f"{r.label:24s} makespan {s.makespan_s:9.1f} s  mean {s.mean_completion_s:8.1f} s  median {s.median_completion_s:8.1f} s  "
              f"p90 {s.p90_completion_s:8.1f} s  cross-rack {s.cross_rack_bytes / 1e12:8.3f} TB  "
              f"slot load {100 * s.mean_slot_load:5.1f} %  core load {100 * s.mean_core_load:5.1f} %  mean vs first {100 * gain:+.1f} %")
