"""Heterogeneous racks in Corral (issue 19 item 4, docs/paragon.md), one JSON line, side by side in one run.

A cluster of two node classes that really differ: ``new`` racks run CPU-bound tasks ``--cpu-speedup``
times faster than ``old`` racks (and have ``--new-disk`` disks, 3x the old ones, so the speedup is not
capped by B_D), and I/O-bound tasks at the same speed. Half of
the jobs are CPU-bound, half I/O-bound (their per-class speedups, as the history store gives them).
Three runs of the same jobs on the same simulated heterogeneous cluster (corral_yarn.sim, TCP):
  - corral_hetero: Corral's plan made with the node classes (each job in the class where the objective, as
    the work-conserving run-time executes the plan, is best; docs/paragon.md);
  - corral_identical: Corral's plan made as today, for identical machines: every job at its mean rate
    over the cluster's racks (what a class-blind history would give);
  - yarn_cs: stock YARN (capacity scheduler, HDFS placement), no plan.
Batch (makespan) and online (mean and median job completion time) scenarios. In batch, each Corral plan
also reports ``alone_over_planned`` (every job simulated alone on its R_j over its planned latency: the
model's error apart from co-location) and ``replay_alone_makespan_s`` (the plan replayed with those
latencies in its order, without the run-time's work conservation).

The planner's model is MRCute+ (``--model mrcute+``, unfitted: scale 1, no start-up costs) by default: the
simulator writes three replicas of every output over the rack uplinks, which the thesis's model (``--model
paper``) leaves out; that term does not shrink on the faster class, so without it the planner over-loads it.
``--task-startup S`` gives MRCute+ a per-task start-up of S seconds at speedup 1, S / speedup on each class, both
planned and simulated; ``--task-startup-planned mean`` shows the planners one figure, the mean over the racks,
while the simulator still runs each class's (docs/paragon.md, Session 18).

Usage: nice -n 10 .venv/bin/python benchmarks/bench_hetero.py [--jobs N] [--racks-per-class N] [--seed N] [--sim-seeds N] [--model M]

``--testbed`` (root): the same comparison on real Hadoop, on the shaped testbed with racks of two node
classes that really differ (``--rack-cpus``: each rack's nodes held to their cores by CFS quotas). Two
history runs first (the workload of other seeds under stock YARN, so each job's tasks land on both
classes); before each seed, JobHistory (every run so far) is ingested into a history store and the
estimator sizes the jobs and learns their per-class speedups from it (``corral estimate --new-jobs
--cluster``'s path: fit_job, then estimator/classes.py with the Paragon classifier filling unseen
classes); the jobs are planned with node classes (hetero) and as identical machines at their mean
rates, and both plans run for real, side by side, in alternating order. One JSON line; docs/paragon.md and docs/testbed.md.

    sudo nice -n 5 flock /work/notes/testbed.lock .venv/bin/python benchmarks/bench_hetero.py --testbed --seeds 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from corral_yarn.cli.types import non_negative_float, non_negative_int, positive_float, positive_int
from corral_yarn.cluster.connect import Cluster
from corral_yarn.errors import InputError
from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, Plan, Workload
from corral_yarn.io import parse
from corral_yarn.model.classes import STARTUPS, identical_machines, mean_startup, startup
from corral_yarn.planner.build import build_plan
from corral_yarn.sim.run import RunSpec, simulate
from corral_yarn.testbed import control, cpu, experiment
from corral_yarn.testbed.experiment import MB, TestbedJob
from corral_yarn.testbed.shaping import Network
from corral_yarn.workloads import example_cluster, w1_like
from estimator.classes import with_class_speedups
from estimator.estimate import EstimateOptions, estimate
from estimator.fit import fit_cluster, observed_runs
from estimator.newjobs import NewJob
from estimator.records import JobRun
from estimator.store import HistoryStore

LOG = logging.getLogger("bench_hetero")
HISTORY_SEEDS = (1000, 1001)  # the history runs' workloads: the same recurring jobs, other sizes and data


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=positive_int, default=30)
    p.add_argument("--racks-per-class", type=positive_int, default=3)
    p.add_argument("--machines-per-rack", type=positive_int, default=10)
    p.add_argument("--cpu-speedup", type=positive_float, default=2.5, help="CPU-bound tasks on new racks against old racks")
    p.add_argument("--new-disk", type=positive_float, default=3e8, help="B_D of the new racks, bytes/s (old racks: the cluster's 1e8)")
    p.add_argument("--span", type=non_negative_float, default=600.0, help="online arrivals spread over this many seconds")
    p.add_argument("--seed", type=non_negative_int, default=0, help="first workload seed (simulator)")
    p.add_argument("--sim-seeds", type=positive_int, default=1, help="simulator: seeds --seed .. --seed + N - 1, ratios and their median (default 1)")
    p.add_argument("--model", choices=("mrcute+", "paper"), default="mrcute+",
                   help="the planner's latency model: MRCute+ (default; it has the output-write term the simulator runs) or the thesis's")
    p.add_argument("--task-startup", type=non_negative_float, default=0.0,
                   help="MRCute+'s per-task start-up at speedup 1, seconds: S / speedup on each class, planned and simulated (default 0)")
    p.add_argument("--task-startup-planned", choices=("per-class", "mean"), default="per-class",
                   help="what the planners see of --task-startup: each class's figure (default) or one figure, the mean over racks")
    t = p.add_argument_group("--testbed: real Hadoop on the shaped testbed (root)")
    t.add_argument("--testbed", action="store_true", help="run on the testbed instead of the simulator")
    t.add_argument("--seeds", type=positive_int, default=1, help="workload seeds, each run under both plans (default 1)")
    t.add_argument("--rack-cpus", default="a=0.6,b=0.2,c=0.2", help="cores per node of each rack (default a=0.6,b=0.2,c=0.2)")
    t.add_argument("--node-mbit", type=positive_float, default=40.0, help="NIC rate of a node, Mbit/s (default 40)")
    t.add_argument("--oversubscription", type=positive_float, default=5.0, help="core oversubscription O (default 5)")
    t.add_argument("--home", type=Path, default=Path(".corral/bench-hetero"), help="testbed state (default .corral/bench-hetero)")
    args = p.parse_args()
    if not args.testbed:
        try:
            cluster(args)  # the node classes' bounds (speedup, B_D, start-ups) checked before any run
        except InputError as e:
            p.error(str(e))
    return args


def cluster(args: argparse.Namespace) -> ClusterSpec:
    """Two node classes, racks interleaved."""
    base = example_cluster(racks=2 * args.racks_per_class, machines_per_rack=args.machines_per_rack, name="hetero")
    data = base.model_dump()
    for i, rack in enumerate(data["racks"]):
        rack["node_class"] = "new" if i % 2 == 0 else "old"  # interleaved: rack order gives no hint
    model = MRCutePlus() if args.model == "mrcute+" else "paper"  # MRCute+ unfitted: scale 1, no start-up (unless --task-startup), 3 replicas written
    old_startup = {"task_startup_s": args.task_startup} if args.task_startup and args.model == "mrcute+" else {}
    new_startup = {"task_startup_s": args.task_startup / args.cpu_speedup} if old_startup else {}
    return parse(ClusterSpec, {**data, "model": model,
                               "node_classes": {"new": {"speedup": args.cpu_speedup, "disk_bandwidth_bytes_per_s": args.new_disk, **new_startup},
                                                "old": {"speedup": 1.0, **old_startup}}}, source="the cluster of the options")


def planned_cluster(args: argparse.Namespace, hetero: ClusterSpec) -> ClusterSpec:
    """The cluster the planners see: ``hetero``, or with ``--task-startup-planned mean`` one per-task start-up
    for every class, the mean over the racks (a class-blind figure, as before session 18)."""
    if args.task_startup_planned == "per-class" or hetero.model == "paper":
        return hetero
    classes = {c: n.model_copy(update={"task_startup_s": None}) for c, n in hetero.node_classes.items()}
    model = hetero.model.model_copy(update={"task_startup_s": mean_startup(hetero, "task_startup_s")})
    return hetero.model_copy(update={"node_classes": classes, "model": model})


def workload(args: argparse.Namespace, span: float) -> Workload:
    """W1-like jobs; odd ones I/O-bound (speedup 1 on both classes), even ones CPU-bound (class defaults)."""
    jobs = w1_like(args.jobs, seed=args.seed, arrival_span_s=span).jobs
    return Workload(jobs=[j if k % 2 == 0 else j.model_copy(update={"class_speedups": {"new": 1.0, "old": 1.0}}) for k, j in enumerate(jobs)])


def identical(jobs: Workload, hetero: ClusterSpec) -> tuple[Workload, ClusterSpec]:
    """Each job at its mean rate over the racks, no per-class data: the class-blind planner's input."""
    flat_jobs, flat = identical_machines(jobs.jobs, hetero)
    return Workload(jobs=flat_jobs), flat


def run(args: argparse.Namespace, scenario: str) -> dict[str, object]:
    hetero = cluster(args)
    planned = planned_cluster(args, hetero)
    jobs = workload(args, args.span if scenario == "online" else 0.0)
    t0 = time.perf_counter()
    aware = build_plan(jobs, planned, scenario, with_bound=False)
    plan_s = time.perf_counter() - t0
    blind = build_plan(*identical(jobs, planned), scenario, with_bound=False)
    out: dict[str, object] = {"planning_s": {"hetero": round(plan_s, 3)},
                              "planned_objective_s": {"corral_hetero": round(aware.objective_s, 1), "corral_identical": round(blind.objective_s, 1)},
                              "jobs_per_class": {str(c): sum(p.node_class == c for p in aware.jobs) for c in (*hetero.class_names, None)}}
    for label, scheduler, plan in (("corral_hetero", "corral", aware), ("corral_identical", "corral", blind), ("yarn_cs", "yarn-cs", None)):
        t0 = time.perf_counter()
        result = simulate(hetero, jobs, RunSpec(scheduler, scenario=scenario, seed=args.seed), plan=plan)
        summary = result.summary
        out[label] = {"makespan_s": round(summary.makespan_s, 1), "mean_completion_s": round(summary.mean_completion_s, 1),
                      "median_completion_s": round(summary.median_completion_s, 1), "sim_s": round(time.perf_counter() - t0, 1)}
    out["makespan_ratio_hetero_over_identical"] = round(out["corral_hetero"]["makespan_s"] / out["corral_identical"]["makespan_s"], 3)
    out["mean_completion_ratio_hetero_over_identical"] = round(out["corral_hetero"]["mean_completion_s"] / out["corral_identical"]["mean_completion_s"], 3)
    if scenario == "batch":
        for label, plan in (("corral_hetero", aware), ("corral_identical", blind)):
            out[label].update(alone_figures(hetero, jobs, plan, args.seed))
    return out


def alone_figures(hetero: ClusterSpec, jobs: Workload, plan: Plan, seed: int) -> dict[str, object]:
    """Each planned job simulated alone on its R_j: over its planned latency (the model's error, apart from
    co-location), and the plan replayed with those latencies in its order without work conservation
    (T_j = the latest free time of R_j's racks, Fig. 4.2), to set against the work-conserving run (§4.1)."""
    ratios, free = [], {}
    for planned in sorted(plan.jobs, key=lambda p: p.order):
        job = next(j for j in jobs.jobs if j.name == planned.name)
        alone = simulate(hetero, Workload(jobs=[job]), RunSpec("corral", scenario="batch", seed=seed), plan=plan).jobs[0].completion_s
        ratios.append(alone / (planned.planned_finish_s - planned.planned_start_s))
        start = max(free.get(r, 0.0) for r in planned.racks)
        free.update({r: start + alone for r in planned.racks})
    return {"alone_over_planned": {"min": round(min(ratios), 2), "median": round(statistics.median(ratios), 2), "max": round(max(ratios), 2)},
            "replay_alone_makespan_s": round(max(free.values()), 1)}


def main() -> int:
    args = _args()
    if args.testbed:
        print(json.dumps(testbed(args)))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    logging.getLogger("corral_yarn").setLevel(logging.WARNING)
    figures: dict[str, Any] = {"benchmark": "bench_hetero", "jobs": args.jobs, "racks": {"new": args.racks_per_class, "old": args.racks_per_class},
                               "machines_per_rack": args.machines_per_rack, "cpu_speedup": args.cpu_speedup, "new_disk": args.new_disk,
                               "model": args.model, "seeds": list(range(args.seed, args.seed + args.sim_seeds)),
                               **({"task_startup": args.task_startup, "task_startup_planned": args.task_startup_planned} if args.task_startup else {})}
    runs = []
    for seed in figures["seeds"]:
        args.seed = seed
        runs.append({"seed": seed, **{scenario: run(args, scenario) for scenario in ("batch", "online")}})
        LOG.info("seed %d: batch makespan ratio %s, online mean JCT ratio %s", seed, runs[-1]["batch"]["makespan_ratio_hetero_over_identical"],
                 runs[-1]["online"]["mean_completion_ratio_hetero_over_identical"])
    for scenario, key in (("batch", "makespan_ratio_hetero_over_identical"), ("online", "mean_completion_ratio_hetero_over_identical"),
                          ("online", "makespan_ratio_hetero_over_identical")):
        ratios = [r[scenario][key] for r in runs]
        figures[f"{scenario}_{key}"] = ratios
        figures[f"{scenario}_median_{key}"] = statistics.median(ratios)
    figures["per_seed"] = runs
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")
    return 0


def demo_jobs(seed: int) -> list[TestbedJob]:
    """Batch: two shuffle-heavy sorts and four map-heavy wordcounts / greps, small blocks so that every
    job has several tasks (and the history run sees most jobs on both classes)."""
    rng = random.Random(seed)
    jobs = [TestbedJob(f"sort-{i}", "sort", int(rng.uniform(10, 14) * MB), 2 * MB, 2, 0.0) for i in range(2)]
    jobs += [TestbedJob(f"{'wordcount' if i % 2 == 0 else 'grep'}-{i}", "wordcount" if i % 2 == 0 else "grep",
                        int(rng.uniform(3, 5) * MB), MB, 1, 0.0) for i in range(4)]
    return jobs


def _run(state: dict[str, Any], description: dict[str, Any], net: Network, jobs: list[TestbedJob], scheduler: str, seed: int,
         label: str, plan: Any = None) -> dict[str, Any]:
    namespace = state["namespace"]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {j.name: experiment.write_input(j, Path(tmp), seed) for j in jobs}
        LOG.info("seed %d: %s ...", seed, label)
        figures: dict[str, Any] = control.in_namespace(namespace, lambda: experiment.run(
            Cluster.from_description(description, progress=False), description, net, namespace, jobs,
            scheduler, "batch", inputs, f"hetero-{label}-s{seed}-{int(time.time())}", plan=plan))  # type: ignore[arg-type]
    LOG.info("  %s: makespan %.1f s, mean JCT %.1f s", label, figures["makespan_s"], figures["mean_jct_s"])
    return figures


def _history(state: dict[str, Any], description: dict[str, Any], home: Path) -> list[JobRun]:
    """The testbed's JobHistory (the history run) into a fresh history store, as 'corral history ingest' does."""
    store = home / "history"
    shutil.rmtree(store, ignore_errors=True)
    control.run([sys.executable, "-m", "corral_yarn.cli", "history", "ingest", "--jobhistory", description["jobhistory"],
                 "--store", str(store)], state["namespace"])
    return HistoryStore(store).runs()


def _estimated(jobs: list[TestbedJob], runs: list[JobRun], spec: ClusterSpec) -> tuple[Workload, dict[str, Any]]:
    """'corral estimate --new-jobs --cluster': each job's input as it is, its selectivities, task rates and
    per-class speedups from its history (filled by classification where it never ran on a class)."""
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    declared = [NewJob(recurring_key=j.name, arrival=at, input_bytes=j.input_bytes, map_tasks=j.maps) for j in jobs]
    result = estimate(runs, EstimateOptions(at=at, horizon=timedelta(hours=1), adhoc=False), declared)
    named = Workload(jobs=[j.model_copy(update={"name": j.recurring_key}) for j in result.workload.jobs])
    workload, classes = with_class_speedups(named, runs, spec)
    return workload, {"speedups": {k: {c: round(v, 3) for c, v in s.items()} for k, s in classes.speedups.items()},
                      "filled_by_classification": classes.filled, "defaults_used": dict(result.defaults_used)}


def _fitted(runs: list[JobRun], spec: ClusterSpec) -> tuple[ClusterSpec, dict[str, Any]]:
    """'corral model fit' on the history so far: MRCute+ with a job and a per-task start-up per node class; the thesis's
    model when the runs do not separate its parameters."""
    try:
        fitted = fit_cluster(observed_runs(runs, spec)[0], spec)
    except InputError as error:
        LOG.warning("MRCute+ not fitted (%s): planning with the thesis's model", error)
        return spec, {"name": "paper"}
    return fitted, {"name": "mrcute+", "scale": round(fitted.model.scale, 3),
                    **{kind: {c: round(startup(fitted, c, kind), 2) for c in fitted.class_names} for kind in STARTUPS}}


def testbed(args: argparse.Namespace) -> dict[str, Any]:
    """History run, learning, then per seed the hetero and the identical-machines plan run for real."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    for noisy in ("hdfs", "corral_yarn.cluster", "urllib3", "corral_yarn.planner", "estimator"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    started = time.perf_counter()
    net = Network(node_mbit_s=args.node_mbit, oversubscription=args.oversubscription)
    rack_cpus = cpu.parse_rack_cpus(args.rack_cpus, net.racks)
    home = args.home.resolve()
    namespace = f"corral-hetero-{hashlib.sha1(str(home).encode()).hexdigest()[:8]}"  # its own, from --home
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # kill PID: the testbed still comes down (finally)
    state = control.up(net, home, namespace, rack_cpus=rack_cpus)
    try:
        description = json.loads(Path(state["cluster_json"]).read_text())
        spec = experiment.cluster_spec(description, net, rack_cpus)
        history = [_run(state, description, net, demo_jobs(seed), "yarn-cs", seed, "history") for seed in HISTORY_SEEDS]
        runs_by_seed = []
        for seed in range(args.seeds):
            runs = _history(state, description, home)  # every run so far: the history runs, then the earlier seeds' runs too
            jobs = demo_jobs(seed)
            workload, learned = _estimated(jobs, runs, spec)
            fitted, learned["model"] = _fitted(runs, spec)
            plans = {"hetero": build_plan(workload, fitted, "batch", with_bound=False),
                     "identical": build_plan(*identical(workload, fitted), "batch", with_bound=False)}
            order = ["hetero", "identical"] if seed % 2 == 0 else ["identical", "hetero"]
            figures = {label: _run(state, description, net, jobs, "corral", seed, label, plans[label]) for label in order}
            runs_by_seed.append({"seed": seed, "history_runs": len(runs), "learned": learned,
                                 **{label: _seed_figures(figures[label], plans[label]) for label in plans}})
        throttled = cpu.throttled(namespace)
    finally:
        control.down(home, namespace)
    return _testbed_summary(args, rack_cpus, spec, state, history, runs_by_seed, throttled, time.perf_counter() - started)


def _seed_figures(figures: dict[str, Any], plan: Any) -> dict[str, Any]:
    return {"makespan_s": figures["makespan_s"], "mean_jct_s": figures["mean_jct_s"], "median_jct_s": figures["median_jct_s"],
            "planned_objective_s": round(plan.objective_s, 1), "cross_rack_bytes": figures["cross_rack_bytes"],
            "jobs": {j["name"]: {"racks": j["racks"], "class": next((p.node_class for p in plan.jobs if p.name == j["name"]), None),
                                 "jct_s": j["jct_s"]} for j in figures["jobs"]}}


def _testbed_summary(args: argparse.Namespace, rack_cpus: dict[str, float], spec: ClusterSpec, state: dict[str, Any], history: list[dict[str, Any]],
                     seeds: list[dict[str, Any]], throttled: dict[str, Any], wall_s: float) -> dict[str, Any]:
    def ratio(key: str) -> list[float]:
        return [round(s["hetero"][key] / s["identical"][key], 3) for s in seeds]

    return {"benchmark": "bench_hetero", "testbed": True, "seeds": args.seeds, "rack_cpus": rack_cpus,
            "node_classes": {c: round(n.speedup, 3) for c, n in (spec.node_classes or {}).items()},
            "node_mbit_s": args.node_mbit, "oversubscription": args.oversubscription,
            "makespan_ratio_hetero_over_identical": ratio("makespan_s"), "mean_jct_ratio_hetero_over_identical": ratio("mean_jct_s"),
            "median_makespan_ratio": statistics.median(ratio("makespan_s")), "median_mean_jct_ratio": statistics.median(ratio("mean_jct_s")),
            "history_runs": [{"seed": seed, "makespan_s": h["makespan_s"], "mean_jct_s": h["mean_jct_s"]} for seed, h in zip(HISTORY_SEEDS, history)],
            "per_seed": seeds, "shaping": state["shaping"],
            "node_cpu_throttled_s": {node: t["throttled_s"] for node, t in throttled.items()},
            "wall_s": round(wall_s, 1), "load_average_1min_at_end": round(os.getloadavg()[0], 2)}


if __name__ == "__main__":
    sys.exit(main())
