"""Reproduction of thesis Fig. 4.19 (§4.5.7): 2,000 machines (50 racks x 40, 1 Gbps, 5:1, 20 tasks
per machine), 200 W1-like jobs arriving over 15 minutes, bytes x 8 by default (the thesis's cluster
load, as `corral sim-workload`'s default; docs/simulator.md); Yarn-CS and Corral, each over TCP-like
max-min sharing and over Varys (SEBF + MADD). One JSON line: the offered load, medians and means of the
four, each run's mean slot and core load, and the three comparisons the thesis makes, beside its figures.
"""

from __future__ import annotations

import argparse
import json
import time

from corral_yarn.sim.experiments import reduction, run_all
from corral_yarn.sim.metrics import offered_load
from corral_yarn.sim.run import RunSpec
from corral_yarn.sim.workloads import DEFAULT_SCALE, paper_simulation_cluster, scale_sizes
from corral_yarn.workloads import w1_like

PAPER = {"yarn_varys_vs_yarn_tcp_median": 0.46, "corral_tcp_vs_yarn_varys_median": 0.45, "corral_varys": "best of the four"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=DEFAULT_SCALE, help="multiply every job's bytes (default 8: the thesis's load; 1: W1-like as generated)")
    parser.add_argument("--replication", type=int, choices=(1, 2, 3), default=3, help="HDFS replication of job output (default 3)")
    args = parser.parse_args()
    t = time.perf_counter()
    cluster = paper_simulation_cluster()
    workload = scale_sizes(w1_like(200, seed=args.seed, arrival_span_s=900.0), args.scale)
    specs = [RunSpec(s, n, "online", args.seed, 0.0, args.replication) for s in ("yarn-cs", "corral") for n in ("tcp", "varys")]
    offered = offered_load(workload, cluster, "online", 0.0, args.replication)
    results = {r.label: r.summary for r in run_all(cluster, workload, specs)}
    median = {k: round(s.median_completion_s, 1) for k, s in results.items()}
    mean = {k: round(s.mean_completion_s, 1) for k, s in results.items()}
    p90 = {k: round(s.p90_completion_s, 1) for k, s in results.items()}

    def gain(a: str, b: str) -> float:
        return round(reduction(results[a].median_completion_s, results[b].median_completion_s), 4)

    print(json.dumps({
        "benchmark": "sim_varys", "machines": 2000, "jobs": 200, "arrival_span_s": 900, "seed": args.seed, "scale": args.scale,
        "output_replication": args.replication,
        "offered_load": {"slot": round(offered.slot_load, 4), "core": round(offered.core_load, 4), "jobs_per_hour": round(offered.jobs_per_hour, 1)},
        "mean_load": {k: {"slot": round(s.mean_slot_load, 4), "core": round(s.mean_core_load, 4)} for k, s in results.items()},
        "median_s": median, "mean_s": mean, "p90_s": p90,
        "yarn_varys_vs_yarn_tcp_median": gain("yarn-cs+varys", "yarn-cs+tcp"),
        "corral_tcp_vs_yarn_varys_median": gain("corral+tcp", "yarn-cs+varys"),
        "corral_varys_vs_corral_tcp_median": gain("corral+varys", "corral+tcp"),
        "corral_varys_vs_yarn_varys_median": gain("corral+varys", "yarn-cs+varys"),
        "best_median": min(median, key=median.get), "paper": PAPER, "wall_s": round(time.perf_counter() - t, 1),
    }))


if __name__ == "__main__":
    main()
