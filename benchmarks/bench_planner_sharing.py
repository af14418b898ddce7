"""Slot-aware rack sharing against whole racks (issue 13 item 2), one JSON line, side by side in one run.

For each workload, both sharing modes plan it with build_plan (fast planner, docs/planner.md): batch
makespan and online mean JCT in seconds, and the planning time of each (wall-clock, whole build_plan
without the LP bound); in slots mode the reference planner plans it too, side by side, with its time
and whether its plan is the fast one's (same_plan: equal jobs, racks, starts and objective).
  - readme_7x30_50_jobs: the README's W1-like 50-job example on the thesis testbed (7 x 30); online over 300 s
    as `corral plan-demo`;
  - small_jobs_4x10_<seed>: generated jobs small relative to racks (1..40 map tasks, 0..20 reduce tasks,
    on 4 racks x 10 machines x 8 map slots = 80 map slots per rack), 30 jobs, online over 120 s, 3 seeds.

Usage: nice -n 10 python benchmarks/bench_planner_sharing.py
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from corral_yarn.contracts import ClusterSpec, JobSpec, StageSpec, Workload
from corral_yarn.planner.build import build_plan
from corral_yarn.planner.schedule import SCENARIOS, SHARING
from corral_yarn.workloads import example_cluster, w1_like


def small_jobs(n_jobs: int, seed: int, span_s: float) -> Workload:
    rng = np.random.default_rng(seed)
    jobs = []
    for j in range(n_jobs):
        maps, reduces = int(rng.integers(1, 41)), int(rng.integers(0, 21))
        stage = StageSpec(name="main", input_bytes=maps * 128e6, map_tasks=maps, reduce_tasks=reduces,
                          shuffle_bytes=maps * 64e6 if reduces else 0.0, output_bytes=maps * 32e6 if reduces else 0.0,
                          map_rate_bytes_per_s=50e6, reduce_rate_bytes_per_s=50e6)
        jobs.append(JobSpec(name=f"s{j}", arrival_s=float(rng.uniform(0, span_s)), stages=[stage]))
    return Workload(jobs=jobs)


def compare(make: Any, cluster: ClusterSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scenario in SCENARIOS:
        for sharing in SHARING:
            t0, c0 = time.perf_counter(), time.process_time()
            plan = build_plan(make(scenario), cluster, scenario, sharing=sharing, with_bound=False)
            out[f"{scenario}_{sharing}_s"] = round(plan.objective_s, 2)
            out[f"{scenario}_{sharing}_plan_s"] = round(time.perf_counter() - t0, 3)
            out[f"{scenario}_{sharing}_plan_cpu_s"] = round(time.process_time() - c0, 3)
        t0, c0 = time.perf_counter(), time.process_time()
        reference = build_plan(make(scenario), cluster, scenario, sharing="slots", with_bound=False, implementation="reference")
        out[f"{scenario}_slots_reference_plan_s"] = round(time.perf_counter() - t0, 3)
        out[f"{scenario}_slots_reference_plan_cpu_s"] = round(time.process_time() - c0, 3)
        out[f"{scenario}_slots_same_plan"] = reference.jobs == plan.jobs and reference.objective_s == plan.objective_s
        out[f"{scenario}_slots_over_whole_rack"] = round(out[f"{scenario}_slots_s"] / out[f"{scenario}_whole-rack_s"], 4)
    return out


def main() -> None:
    result: dict[str, Any] = {"benchmark": "planner_sharing", "objective": "batch: makespan, online: mean JCT"}
    result["readme_7x30_50_jobs"] = compare(lambda sc: w1_like(50, seed=0, arrival_span_s=300.0 if sc == "online" else 0.0), example_cluster())
    small = example_cluster(racks=4, machines_per_rack=10)
    for seed in range(3):
        result[f"small_jobs_4x10_{seed}"] = compare(lambda sc, s=seed: small_jobs(30, s, 120.0 if sc == "online" else 0.0), small)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
