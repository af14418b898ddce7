"""Simulator speed (issue 6): the paper's 2,000-machine cluster (50 racks x 40, 1 Gbps, 5:1) running
200 W1-like jobs arriving over 15 minutes (thesis §4.5.7), online, under all four job schedulers
over TCP-like sharing; wall-clock seconds of each run side by side. One JSON line.

``--full`` adds a scaling table from 50 to 2,000 jobs at the same arrival rate (4.5 s per job).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from corral_yarn.sim.run import RunSpec, plan_for, simulate
from corral_yarn.sim.schedulers import SCHEDULERS
from corral_yarn.sim.workloads import paper_simulation_cluster
from corral_yarn.workloads import w1_like

SECONDS_PER_JOB = 900.0 / 200


def timed_runs(jobs: int, seed: int) -> dict[str, object]:
    cluster = paper_simulation_cluster()
    workload = w1_like(jobs, seed=seed, arrival_span_s=SECONDS_PER_JOB * jobs)
    t = time.perf_counter()
    plan = plan_for(workload, cluster, "online")
    plan_s = time.perf_counter() - t
    wall, cpu, recomputations = {}, {}, {}
    for scheduler in SCHEDULERS:
        t, c = time.perf_counter(), time.process_time()
        result = simulate(cluster, workload, RunSpec(scheduler, "tcp", "online", seed), plan=plan)
        wall[scheduler] = round(time.perf_counter() - t, 2)
        cpu[scheduler] = round(time.process_time() - c, 2)
        recomputations[scheduler] = result.summary.rate_recomputations
    return {"jobs": jobs, "plan_s": round(plan_s, 2), "wall_s": wall, "cpu_s": cpu, "total_sim_s": round(sum(wall.values()), 2),
            "total_cpu_s": round(sum(cpu.values()), 2), "rate_recomputations": recomputations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add the 50-2,000-job scaling table")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main_run = timed_runs(200, args.seed)
    out = {"benchmark": "sim_speed", "machines": 2000, "racks": 50, "scenario": "online", "network": "tcp",
           "arrival_span_s": 900, "seed": args.seed, **main_run, "target_s": 60, "within_target_wall": main_run["total_sim_s"] <= 60,
           "within_target_cpu": main_run["total_cpu_s"] <= 60}
    if args.full:
        out["scaling"] = [timed_runs(n, args.seed) for n in (50, 100, 500, 1000, 2000)]
    out["load_average_1min"] = os.getloadavg()[0]  # other processes on the 2 cores inflate wall_s, not cpu_s
    print(json.dumps(out))


if __name__ == "__main__":
    main()
