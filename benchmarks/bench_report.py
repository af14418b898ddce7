"""Plan report rendering time (HTML + 3 PNGs, in memory) for growing plans; prints one JSON line.

Plans come from the fast planner without the LP bound; only rendering is timed (wall and CPU seconds,
best of a few runs).
"""

from __future__ import annotations

import json
import os
import time

from corral_yarn.planner.build import build_plan
from corral_yarn.report import render_plan_report
from corral_yarn.workloads import example_cluster, w1_like

SIZES = [(50, 7, 3), (500, 100, 2), (2000, 400, 1)]  # jobs, racks, repetitions


def main() -> None:
    figures: dict[str, float | int] = {}
    for jobs, racks, repeat in SIZES:
        cluster, workload = example_cluster(racks=racks, machines_per_rack=40), w1_like(jobs, seed=0, arrival_span_s=0.0)
        plan = build_plan(workload, cluster, "batch", with_bound=False)
        wall, cpu, size = [], [], 0
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            files = render_plan_report(plan, cluster, workload)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            size = sum(len(b) for b in files.values())
        figures[f"render_s_{jobs}j_{racks}r"] = round(min(wall), 3)
        figures[f"render_cpu_s_{jobs}j_{racks}r"] = round(min(cpu), 3)
        figures[f"bytes_{jobs}j_{racks}r"] = size
    figures["load_avg_1min"] = round(os.getloadavg()[0], 2)  # the machine is shared: wall time depends on it
    print(json.dumps({"bench": "report", **figures}))


if __name__ == "__main__":
    main()
