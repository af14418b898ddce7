"""Reproduction of thesis §4.5.3 (Figs. 4.10-4.12) on the testbed's shape: 7 racks x 30 machines,
10 Gbps NICs, 5:1, background traffic on 50 % of the core; W1-like jobs as a batch (makespan) and
arriving over 60 minutes (median and mean completion time); Corral, LocalShuffle and ShuffleWatcher
against Yarn-CS over TCP-like sharing, with job output written by HDFS (3 replicas) and, as MRCute
assumes, locally (1 replica). One JSON line of reductions (1 - run / Yarn-CS) beside the paper's.

``--full`` uses 100 jobs and adds the W1 data x 4 variant (a more network-bound load); ``--scale``
chooses the data factors.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from corral_yarn.sim.experiments import run_all, summary_row
from corral_yarn.sim.run import RunSpec, plan_for
from corral_yarn.sim.schedulers import SCHEDULERS
from corral_yarn.sim.workloads import scale_sizes, testbed_cluster
from corral_yarn.workloads import w1_like

PAPER = {"batch_makespan_reduction": "10-33 %", "online_median_reduction": "30-56 %", "online_mean_reduction": "26-36 %",
         "cross_rack_reduction": "20-90 %", "compute_hours_reduction": "up to 20 %", "corral_rack_data_cov": "<= 0.004",
         "localshuffle": "worse than Corral (worse than Yarn-CS on W2, W3)", "shufflewatcher": "makespan worse than Yarn-CS"}
ONLINE_SPAN_S = 3600.0
BACKGROUND = 0.5


def over_seeds(jobs: int, seeds: list[int], scale: float, scenario: str, replication: int) -> dict[str, object]:
    """Each scheduler's figures averaged over the seeds (workload and placement), with the three
    reductions per seed, so that the spread shows."""
    per_seed = [experiment(jobs, seed, scale, scenario, replication) for seed in seeds]
    out: dict[str, object] = {}
    for scheduler in SCHEDULERS:
        rows = [run[scheduler] for run in per_seed]
        mean = {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0] if rows[0][k] is not None}
        for k in ("makespan_reduction", "mean_reduction", "median_reduction"):
            mean[f"{k}_by_seed"] = [r[k] for r in rows]
        out[scheduler] = mean
    out["corral_plan_by_seed"] = [run["corral_plan"] for run in per_seed]
    return out


def experiment(jobs: int, seed: int, scale: float, scenario: str, replication: int) -> dict[str, object]:
    cluster = testbed_cluster()
    workload = scale_sizes(w1_like(jobs, seed=seed, arrival_span_s=ONLINE_SPAN_S if scenario == "online" else 0.0), scale)
    specs = [RunSpec(s, "tcp", scenario, seed, BACKGROUND, replication) for s in SCHEDULERS]
    plan = plan_for(workload, cluster, scenario, BACKGROUND)
    results = run_all(cluster, workload, specs, plan=plan)
    rows: dict[str, object] = {r.scheduler: summary_row(r, results[0]) for r in results}
    # what the planner expected (MRCute, racks used one job at a time) beside what the simulation gives
    rows["corral_plan"] = {"objective_s": round(plan.objective_s, 1), "rack_counts": dict(Counter(len(j.racks) for j in plan.jobs))}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="100 jobs, plus the data x 4 variant")
    parser.add_argument("--jobs", type=int, help="number of W1-like jobs (default 60, 100 with --full)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1, each a different workload and placement (default 3)")
    parser.add_argument("--scale", type=float, action="append", help="multiply every job's bytes by this (repeatable; default 1, with --full 1 and 4)")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    jobs = args.jobs or (100 if args.full else 60)
    t = time.perf_counter()
    runs = {}
    for scale in args.scale or ((1.0, 4.0) if args.full else (1.0,)):
        for scenario in ("batch", "online"):
            for replication in (3, 1):
                runs[f"{scenario}/x{scale:g}/replication{replication}"] = over_seeds(jobs, seeds, scale, scenario, replication)
    print(json.dumps({"benchmark": "sim_paper", "cluster": "testbed 7x30, 10 Gbps, 5:1, background 50 % of core", "workload": "w1_like",
                      "jobs": jobs, "seeds": seeds, "online_arrivals_s": ONLINE_SPAN_S, "network": "tcp", "baseline": "yarn-cs",
                      "runs": runs, "paper": PAPER, "wall_s": round(time.perf_counter() - t, 1)}))


if __name__ == "__main__":
    main()
