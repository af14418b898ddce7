"""``corral kwiken example|plan|simulate|yarn-plan``: Kwiken's per-stage reissue budgets (thesis ch. 5, docs/kwiken.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from corral_yarn.cli.types import non_negative_float, non_negative_int, positive_int, unit_interval
from corral_yarn.errors import InputError
from corral_yarn.io import load, save, to_json, write_together
from corral_yarn.kwiken import synthetic
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.plan import KwikenPlan, plan_reissues, replay
from corral_yarn.kwiken.reissue import POLICIES
from corral_yarn.kwiken.trace import Trace, latency_csv, parse_latency_csv
from corral_yarn.pipeline.speculation import plan_from_store


def _trace(path: Path, dag: KwikenDag, option: str) -> Trace:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", field=option) from None
    return parse_latency_csv(text, dag, source=str(path))


def _example(args: argparse.Namespace) -> int:
    w = synthetic.workload(args.index, args.seed, requests=args.requests)
    write_together({args.out / "dag.json": to_json(w.dag), args.out / "train.csv": latency_csv(w.train),
                    args.out / "test.csv": latency_csv(w.test, first_request=w.train.requests)})
    print(f"wrote {args.out}/dag.json ({len(w.dag.stages)} stages), train.csv and test.csv ({args.requests} requests each, latency in ms)")
    return 0


def _plan(args: argparse.Namespace) -> int:
    dag = load(KwikenDag, args.dag)
    plan = plan_reissues(dag, _trace(args.samples, dag, "--samples"), args.budget, args.policy, args.seed, args.random_allocations)
    save(plan, args.out)
    if args.json:
        print(to_json(plan))
        return 0
    print(f"{plan.policy} plan for {plan.dag}: budget {plan.budget:.2%}, planned cost {plan.planned_cost:.2%} of the DAG's resources")
    print(f"{'stage':<24} {'reissue':>8} {'timeout':>12} {'cost':>7} {'variance':>12} {'planned':>12}")
    for s in plan.stages:
        timeout = "never" if s.timeout is None else f"{s.timeout:.4g}"
        print(f"{s.name[:24]:<24} {s.reissue_fraction:>8.2%} {timeout:>12} {s.cost_share:>7.2%} {s.variance:>12.4g} {s.planned_variance:>12.4g}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    dag = load(KwikenDag, args.dag)
    plan = load(KwikenPlan, args.plan)
    plan.check(dag)
    before, after = replay(dag, plan, _trace(args.samples, dag, "--samples"), args.seed)
    b, a = before.percentiles(), after.percentiles()
    result = {"dag": dag.name, "policy": plan.policy, "budget": plan.budget, "requests": int(before.latency.size),
              "spent": float(sum(s.cost_share * f for s, f in zip(plan.stages, after.reissued))),
              "without": b, "with": a, "reduction": {k: 1.0 - a[k] / b[k] if b[k] > 0 else 0.0 for k in b}}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{plan.policy} plan, budget {plan.budget:.2%}: {result['requests']} test requests, {result['spent']:.2%} of the DAG's resources reissued")
    print(f"{'':<10} {'without':>12} {'with plan':>12} {'reduction':>10}")
    for k in b:
        print(f"{k:<10} {b[k]:>12.4g} {a[k]:>12.4g} {result['reduction'][k]:>10.1%}")
    return 0


def _yarn_plan(args: argparse.Namespace) -> int:
    settings = plan_from_store(args.history, args.budget, args.job or (), args.seed, args.match_extra_container_s, args.rule, args.scale)
    save(settings, args.out)
    if args.json:
        print(to_json(settings))
        return 0
    print(f"speculation settings ({settings.rule} rule, {settings.scale} T_s) for {len(settings.jobs)} recurring jobs from {settings.runs} runs: budget {settings.budget:.2%} "
          f"extra task container-seconds (expected {settings.planned_extra_fraction:.2%}; SumVar's budget "
          f"{settings.sumvar_budget:.2%} of {settings.container_seconds:.4g} container-seconds per run of every job, planned {settings.planned_cost:.2%}); "
          f"expected extra container-seconds per run of every job {settings.expected_extra_container_s:.4g}")
    print(f"{'stage':<32} {'tasks':>5} {'samples':>7} {'r_s':>7} {'T_s (s)':>8} {'cost':>7} {'Var (s2)':>10} {'planned':>10}")
    for job in settings.jobs:
        for s in job.stages:
            timeout = "never" if s.timeout_s is None else f"{s.timeout_s:.4g}"
            print(f"{(job.key + '/' + s.type)[:32]:<32} {s.tasks:>5} {s.samples:>7} {s.reissue_fraction:>7.2%} {timeout:>8} "
                  f"{s.cost_share:>7.2%} {s.variance:>10.4g} {s.planned_variance:>10.4g}")
    print(f"wrote {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    kwiken = subparsers.add_parser("kwiken", help="Kwiken: apportion a reissue budget across the stages of a DAG (thesis ch. 5)")
    commands = kwiken.add_subparsers(title="kwiken commands", metavar="COMMAND", required=True)
    example = commands.add_parser("example", help="write a synthetic DAG and its training and test latency logs (docs/kwiken.md)")
    example.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for dag.json, train.csv and test.csv")
    example.add_argument("--index", type=non_negative_int, default=0, help="which generated DAG (default 0)")
    example.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default 0)")
    example.add_argument("--requests", type=positive_int, default=10_000, help="requests per log (default 10000)")
    example.set_defaults(func=_example)
    plan = commands.add_parser("plan", help="learn V_s(r) from a latency log and apportion a reissue budget: r_s and timeout T_s per stage")
    plan.add_argument("--dag", required=True, type=Path, metavar="FILE", help="the DAG (corral-yarn/kwiken-dag/v1)")
    plan.add_argument("--samples", required=True, type=Path, metavar="CSV", help="training log: request_id,stage,latency[,cost]")
    plan.add_argument("--budget", required=True, type=unit_interval(closed=True), help="B: extra resources for reissues, a fraction in [0, 1]")
    plan.add_argument("--policy", choices=POLICIES, default="sumvar", help="how to apportion B (default sumvar, §5.3.1; the rest are §5.4.2's baselines)")
    plan.add_argument("--random-allocations", type=positive_int, default=10_000, help="allocations tried by random-best (default 10000)")
    plan.add_argument("--seed", type=non_negative_int, default=0, help="random seed of the offline resampling (default 0)")
    plan.add_argument("--out", required=True, type=Path, metavar="FILE", help="the plan (corral-yarn/kwiken-plan/v1)")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON instead of the table")
    plan.set_defaults(func=_plan)
    simulate = commands.add_parser("simulate", help="replay a test log with a plan's timeouts (§5.4.1): percentiles with and without")
    simulate.add_argument("--dag", required=True, type=Path, metavar="FILE", help="the DAG the plan was made for")
    simulate.add_argument("--plan", required=True, type=Path, metavar="FILE", help="a plan from 'corral kwiken plan'")
    simulate.add_argument("--samples", required=True, type=Path, metavar="CSV", help="test log: request_id,stage,latency[,cost]")
    simulate.add_argument("--seed", type=non_negative_int, default=0, help="random seed of the reissue draws (default 0)")
    simulate.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    simulate.set_defaults(func=_simulate)
    yarn = commands.add_parser("yarn-plan", help="apportion a budget of speculative copies over the recurring MapReduce jobs' map and "
                                                 "reduce stages from the history store; write their per-job speculation settings")
    yarn.add_argument("--history", required=True, type=Path, metavar="DIR", help="the history store (corral history ingest)")
    budget = yarn.add_mutually_exclusive_group(required=True)
    budget.add_argument("--budget", type=unit_interval(closed=True),
                        help="B: container-seconds of task attempts that do not succeed, a fraction in [0, 1] of the jobs' without copies")
    budget.add_argument("--match-extra-container-s", type=non_negative_float, metavar="S",
                        help="instead of --budget: the B whose copies are expected to spend S extra container-seconds per run of every "
                             "planned job, another policy's measured spend (e.g. default speculation's)")
    yarn.add_argument("--job", action="append", metavar="KEY", help="plan only this recurring key (repeatable; default: every job with task samples)")
    yarn.add_argument("--rule", choices=("progress", "timeout"), default="progress",
                      help="how Kwiken's estimator sees a task that will run past T_s: 'timeout' copies it once it has run T_s (the "
                           "thesis, §5.3.1); 'progress' also once elapsed / progress exceeds T_s, judged from max(0.25 x T_s, one 3 s status interval) on, "
                           "an attempt without progress on its time run (ours; default). Both are planned with copies started at T_s")
    yarn.add_argument("--scale", choices=("relative", "absolute"), default="absolute",
                      help="what T_s is measured against: 'absolute' (default) keeps the history's T_s in ms throughout; 'relative' (ours) carries T_s over the stage's mean past duration and the "
                           "estimator multiplies it by the mean of the job's own succeeded tasks of that type once one has succeeded (the "
                           "history's T_s before; one --quick run measured worse than absolute, docs/kwiken.md)")
    yarn.add_argument("--seed", type=non_negative_int, default=0, help="random seed of the offline resampling (default 0)")
    yarn.add_argument("--out", required=True, type=Path, metavar="FILE",
                      help="the settings file (corral-yarn/kwiken-yarn/v3); the pipeline reads <home>/kwiken-yarn.json")
    yarn.add_argument("--json", action="store_true", help="print the settings as JSON instead of the table")
    yarn.set_defaults(func=_yarn_plan)
