"""Network latency in the planner (issue 18 item 5a), one JSON line, side by side in one run.

The README's W1-like 50 jobs on the thesis testbed (7 racks x 30 machines; online arrivals over 300 s as
`corral plan-demo`), every other job latency-sensitive (NoMora's Memcached function; docs/nomora.md: the
threshold is published, the coefficients are chosen), and a rack-pair matrix with two pods (racks 0-3
and 4-6) at the medians of corral_yarn.nomora.latency.SHAPES: 20 µs inside a rack, 60 µs inside a pod,
150 µs across pods (chosen shapes, the paper publishes none). Per scenario:
  - blind_s: the plan made without the matrix (today's planner), replayed in its order and racks with
    every sensitive job running L_j(r_j) / p_j(d(R_j));
  - aware_s: the plan made with the matrix (its own objective, the same model);
  - sensitive_cross_pod: how many sensitive jobs each plan puts across the two pods; sensitive: their mean
    expected performance p_j(d(R_j)) and how many run on one rack, in each plan;
  - plan times: fast with the matrix, reference with the matrix (the same plan, checked), fast without.

Usage: nice -n 10 python benchmarks/bench_planner_latency.py
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import numpy as np

from corral_yarn.contracts import Plan, Workload
from corral_yarn.nomora.latency import RackLatencyMatrix
from corral_yarn.planner.build import build_plan, network_choice
from corral_yarn.model import default_alpha, latency_table
from corral_yarn.planner.schedule import SCENARIOS
from corral_yarn.workloads import example_cluster, w1_like

POD = [0, 0, 0, 0, 1, 1, 1]


def replay(plan: Plan, workload: Workload, network: Any, names: list[str], online: bool) -> float:
    """The plan's objective when each job runs as long as the network model says, in the plan's order and racks."""
    index = {job.name: j for j, job in enumerate(workload.jobs)}
    free = dict.fromkeys(names, 0.0)
    completions = []
    for planned in sorted(plan.jobs, key=lambda p: p.order):
        j = index[planned.name]
        arrival = workload.jobs[j].arrival_s if online else 0.0
        start = max(max(free[r] for r in planned.racks), arrival)
        finish = start + network.duration(j, [names.index(r) for r in planned.racks])
        free.update(dict.fromkeys(planned.racks, finish))
        completions.append(finish - arrival)
    return math.fsum(completions) / len(completions) if online else max(completions)


def cross_pod(plan: Plan, sensitive: set[str], names: list[str]) -> int:
    return sum(len({POD[names.index(r)] for r in p.racks}) > 1 for p in plan.jobs if p.name in sensitive)


def sensitive_figures(plan: Plan, workload: Workload, network: Any, names: list[str]) -> dict[str, float]:
    """Mean expected performance p_j(d(R_j)) of the sensitive jobs, and how many run on one rack."""
    index = {job.name: j for j, job in enumerate(workload.jobs)}
    mine = [p for p in plan.jobs if workload.jobs[index[p.name]].latency_profile]
    perf = [network.performance(index[p.name], [names.index(r) for r in p.racks]) for p in mine]
    return {"mean_perf": round(sum(perf) / len(perf), 4), "on_one_rack": sum(len(p.racks) == 1 for p in mine)}


def main() -> None:
    cluster = example_cluster()
    names = cluster.rack_names
    rack_us = np.array([[20.0 if a == b else 60.0 if POD[a] == POD[b] else 150.0 for b in range(7)] for a in range(7)])
    matrix = RackLatencyMatrix(tuple(names), rack_us)
    result: dict[str, Any] = {"benchmark": "planner_latency", "objective": "batch: makespan s, online: mean JCT s", "jobs": 50, "racks": 7}
    for scenario in SCENARIOS:
        base = w1_like(50, seed=0, arrival_span_s=300.0 if scenario == "online" else 0.0)
        workload = Workload(jobs=[j.model_copy(update={"latency_profile": "memcached" if i % 2 == 0 else None}) for i, j in enumerate(base.jobs)])
        sensitive = {j.name for j in workload.jobs if j.latency_profile}
        penalized = latency_table(workload.jobs, cluster, default_alpha(cluster))[1]
        network = network_choice(workload.jobs, cluster, penalized, matrix)
        t0 = time.perf_counter()
        blind = build_plan(workload, cluster, scenario, with_bound=False)
        t1 = time.perf_counter()
        aware = build_plan(workload, cluster, scenario, with_bound=False, rack_latency=matrix)
        t2 = time.perf_counter()
        oracle = build_plan(workload, cluster, scenario, with_bound=False, rack_latency=matrix, implementation="reference")
        t3 = time.perf_counter()
        blind_s = replay(blind, workload, network, names, scenario == "online")
        result[scenario] = {
            "blind_s": round(blind_s, 2), "aware_s": round(aware.objective_s, 2), "aware_over_blind": round(aware.objective_s / blind_s, 4),
            "blind_planned_without_latency_s": round(blind.objective_s, 2),
            "sensitive_cross_pod": {"blind": cross_pod(blind, sensitive, names), "aware": cross_pod(aware, sensitive, names), "of": len(sensitive)},
            "sensitive": {"blind": sensitive_figures(blind, workload, network, names), "aware": sensitive_figures(aware, workload, network, names)},
            "plan_s": {"fast_without_matrix": round(t1 - t0, 3), "fast_with_matrix": round(t2 - t1, 3), "reference_with_matrix": round(t3 - t2, 3)},
            "fast_equals_reference": oracle.model_dump() == aware.model_dump(),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
