"""Heterogeneous racks in Corral (issue 19 item 4, docs/paragon.md), one JSON line, side by side in one run.

A cluster of two node classes that really differ: ``new`` racks run CPU-bound tasks ``--cpu-speedup``
times faster than ``old`` racks (and have ``--new-disk`` disks, 3x the old ones, so the speedup is not
capped by B_D), and I/O-bound tasks at the same speed. Half of
the jobs are CPU-bound, half I/O-bound (their per-class speedups, as the history store gives them).
Three runs of the same jobs on the same simulated heterogeneous cluster (corral_yarn.sim, TCP):
  - corral_hetero: Corral's plan made with the node classes (each job in the class where the planned
    objective is best, docs/paragon.md);
  - corral_identical: Corral's plan made as today, for identical machines: every job at its mean rate
    over the cluster's racks (what a class-blind history would give);
  - yarn_cs: stock YARN (capacity scheduler, HDFS placement), no plan.
Batch (makespan) and online (mean and median job completion time) scenarios.

Usage: nice -n 10 .venv/bin/python benchmarks/bench_hetero.py [--jobs N] [--racks-per-class N] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from corral_yarn.contracts import ClusterSpec, JobSpec, Workload
from corral_yarn.model.classes import identical_machines
from corral_yarn.planner.build import build_plan
from corral_yarn.sim.run import RunSpec, simulate
from corral_yarn.workloads import example_cluster, w1_like


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=30)
    p.add_argument("--racks-per-class", type=int, default=3)
    p.add_argument("--machines-per-rack", type=int, default=10)
    p.add_argument("--cpu-speedup", type=float, default=2.5, help="CPU-bound tasks on new racks against old racks")
    p.add_argument("--new-disk", type=float, default=3e8, help="B_D of the new racks, bytes/s (old racks: the cluster's 1e8)")
    p.add_argument("--span", type=float, default=600.0, help="online arrivals spread over this many seconds")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def cluster(args: argparse.Namespace) -> ClusterSpec:
    """Two node classes, racks interleaved."""
    base = example_cluster(racks=2 * args.racks_per_class, machines_per_rack=args.machines_per_rack, name="hetero")
    data = base.model_dump()
    for i, rack in enumerate(data["racks"]):
        rack["node_class"] = "new" if i % 2 == 0 else "old"  # interleaved: rack order gives no hint
    hetero = ClusterSpec.model_validate({**data, "node_classes": {"new": {"speedup": args.cpu_speedup, "disk_bandwidth_bytes_per_s": args.new_disk},
                                                                    "old": {"speedup": 1.0}}})
    return hetero


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
    jobs = workload(args, args.span if scenario == "online" else 0.0)
    t0 = time.perf_counter()
    aware = build_plan(jobs, hetero, scenario, with_bound=False)
    plan_s = time.perf_counter() - t0
    blind = build_plan(*identical(jobs, hetero), scenario, with_bound=False)
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
    return out


def main() -> int:
    args = _args()
    figures = {"benchmark": "bench_hetero", "jobs": args.jobs, "racks": {"new": args.racks_per_class, "old": args.racks_per_class},
               "machines_per_rack": args.machines_per_rack, "cpu_speedup": args.cpu_speedup, "new_disk": args.new_disk, "seed": args.seed}
    for scenario in ("batch", "online"):
        figures[scenario] = run(args, scenario)
    json.dump(figures, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
