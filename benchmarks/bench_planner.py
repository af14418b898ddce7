"""Planner benchmark: the fast planner against the reference and the issue's targets, one JSON line.

Workloads are W1-like (corral_yarn.workloads.w1_like, seeded) on example_cluster(racks, 40 machines
per rack); the planner gets the penalized table L'_j(r) (alpha = 1 / rack-to-core bandwidth). Online
arrivals are uniform over one hour, as in the thesis's online experiments (§4.5); batch arrivals are 0.
Times are seconds of ``plan`` alone (the latency table is built beforehand): wall-clock, and the
process's CPU time next to it, steadier when other work shares the 2 cores (see the load averages).

  (a) target_500x100: fast planner, 500 jobs x 100 racks (target <= 1 s), median of --repeats runs (3);
  (b) vs_reference: fast and reference on the same smaller instances (the reference is O(J^2 R^2)),
      with the plans checked equal, and the reference time at 500 x 100 extrapolated as J^2 R^2;
  (c) target_2000x400: fast planner, 2000 jobs x 400 racks (issue 13: <= 1 s batch, <= 2 s online);
  (d) lp_gap: build_plan's gap to the lower bound, batch and online, on the testbed (7 racks x 30
      machines, 100 jobs, 5 seeds), at 500 x 100, and on the README's and plan-demo's 50-job examples
      (paper: within 3 % batch, 15 % online);
  (e) scaling: time and peak RSS per (jobs, racks, scenario), each cell in a fresh process
      (peak_rss_mb: peak RSS while ``plan`` ran, counting the interpreter, libraries and latency
      table; planner_rss_mb: that peak minus the RSS just before ``plan``);
      ``--full`` runs J in {100,500,1000,2000,5000} x R in {10,100,400,1000}, the default a subset.
      Cells predicted (from the cells measured so far) to exceed ``--cap`` seconds are skipped;
  (f) large_10000x1000_online: one more cell, 10,000 jobs x 1,000 racks online (goal <= 60 s), with
      its peak RSS (``--skip-large`` leaves it out).
Every plan uses the scenario's default prioritization order (thesis for batch, shortest-work online).
Every figure of (a), (b), (c), (e) and (f) is measured in both sharing modes side by side: whole racks
(thesis §4.3) and slot-aware sharing (``--sharing slots``, d_j(r) from build.slot_demand on racks of
40 machines x 8 map slots = 320 slots); the slots-mode reference is slower still, so it is compared
at smaller sizes (SLOT_REFERENCE_SIZES).

``--only`` runs some of them (e.g. ``--only target_2000x400 large`` for the issue's targets on a busy machine).

Usage: python benchmarks/bench_planner.py [--full] [--cap SECONDS] [--skip-reference] [--skip-large] [--only SECTION ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from corral_yarn.model import default_alpha, latency_table
from corral_yarn.planner import fast, reference
from corral_yarn.planner.build import build_plan, slot_demand
from corral_yarn.planner.schedule import DEFAULT_ORDER, SCENARIOS, SHARING, Scenario, SlotDemand
from corral_yarn.workloads import example_cluster, w1_like

MACHINES_PER_RACK = 40
ONLINE_SPAN_S = 3600.0
REFERENCE_SIZES = [(100, 20), (200, 40)]
SLOT_REFERENCE_SIZES = [(50, 10), (100, 20)]
FULL_GRID = ([100, 500, 1000, 2000, 5000], [10, 100, 400, 1000])
DEFAULT_GRID = ([100, 500, 1000, 2000], [10, 100, 400])
SECTIONS = ("target_500x100", "vs_reference", "target_2000x400", "lp_gap", "scaling", "large")


def instance(n_jobs: int, n_racks: int, scenario: Scenario, sharing: str = "whole-rack", seed: int = 0) -> tuple[np.ndarray, np.ndarray, SlotDemand | None]:
    """(L'_j(r), A_j, d_j(r) in slots mode) for a W1-like workload on racks of 40 machines."""
    cluster = example_cluster(racks=n_racks, machines_per_rack=MACHINES_PER_RACK)
    jobs = w1_like(n_jobs, seed=seed, arrival_span_s=ONLINE_SPAN_S if scenario == "online" else 0.0).jobs
    slots = slot_demand(jobs, cluster) if sharing == "slots" else None
    return latency_table(jobs, cluster, default_alpha(cluster))[1], np.array([j.arrival_s for j in jobs]), slots


def timed(planner: Any, scenario: Scenario, latency: np.ndarray, arrival: np.ndarray, slots: SlotDemand | None) -> tuple[float, float, Any]:
    """(wall-clock s, CPU s of this process, schedule): on a shared machine the CPU time is the steadier."""
    wall, cpu = time.perf_counter(), time.process_time()
    schedule = planner(scenario, latency, arrival, DEFAULT_ORDER[scenario], slots=slots)
    return time.perf_counter() - wall, time.process_time() - cpu, schedule


def target(n_jobs: int, n_racks: int, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {"jobs": n_jobs, "racks": n_racks, "machines_per_rack": MACHINES_PER_RACK}
    for scenario in SCENARIOS:
        for sharing in SHARING:
            problem = instance(n_jobs, n_racks, scenario, sharing)
            runs = [timed(fast.plan, scenario, *problem) for _ in range(repeats)]
            out[f"{scenario}_{sharing}"] = {
                "fast_s": round(statistics.median(r[0] for r in runs), 3),
                "fast_cpu_s": round(statistics.median(r[1] for r in runs), 3),
                "objective_s": round(runs[0][2].objective, 3),
            }
    return out


def vs_reference() -> dict[str, Any]:
    rows = []
    for sharing, sizes in (("whole-rack", REFERENCE_SIZES), ("slots", SLOT_REFERENCE_SIZES)):
        for n_jobs, n_racks in sizes:
            for scenario in SCENARIOS:
                rows.append(_vs_reference(n_jobs, n_racks, scenario, sharing))
    whole = [r for r in rows if r["sharing"] == "whole-rack"]
    largest = whole[-2:]  # both scenarios at the largest size
    scale = (500 / REFERENCE_SIZES[-1][0]) ** 2 * (100 / REFERENCE_SIZES[-1][1]) ** 2
    estimate = {r["scenario"]: round(r["reference_s"] * scale, 1) for r in largest}
    return {"instances": rows, "reference_s_at_500x100_extrapolated_J2R2": estimate}


def _vs_reference(n_jobs: int, n_racks: int, scenario: Scenario, sharing: str) -> dict[str, Any]:
    problem = instance(n_jobs, n_racks, scenario, sharing)
    ref_s, ref_cpu_s, expected = timed(reference.plan, scenario, *problem)
    fast_s, fast_cpu_s, got = min((timed(fast.plan, scenario, *problem) for _ in range(3)), key=lambda r: r[0])
    return {
        "jobs": n_jobs, "racks": n_racks, "scenario": scenario, "sharing": sharing,
        "reference_s": round(ref_s, 3), "fast_s": round(fast_s, 4), "speedup": round(ref_s / fast_s, 1),
        "reference_cpu_s": round(ref_cpu_s, 3), "fast_cpu_s": round(fast_cpu_s, 4), "cpu_speedup": round(ref_cpu_s / fast_cpu_s, 1),
        "same_plan": got.same_as(expected),
    }


def lp_gaps() -> dict[str, Any]:
    out: dict[str, Any] = {}
    # (racks, machines per rack, jobs, seeds, arrival span online, and in batch): the examples plan one
    # workload in both scenarios, as `corral plan-demo` does (the README's has every job at 0)
    cases = {"testbed_7x30_100_jobs": (7, 30, 100, range(5), ONLINE_SPAN_S, 0.0), "500_jobs_100x40": (100, 40, 500, range(1), ONLINE_SPAN_S, 0.0),
             "readme_example_7x30_50_jobs_at_0": (7, 30, 50, range(1), 0.0, 0.0), "plan_demo_7x30_50_jobs_over_300s": (7, 30, 50, range(1), 300.0, 300.0)}
    for name, (n_racks, machines, n_jobs, seeds, online_span, batch_span) in cases.items():
        cluster = example_cluster(racks=n_racks, machines_per_rack=machines)
        for scenario in SCENARIOS:
            span = online_span if scenario == "online" else batch_span
            gaps = [build_plan(w1_like(n_jobs, seed=s, arrival_span_s=span), cluster, scenario).gap for s in seeds]
            out[f"{name}_{scenario}"] = {"seeds": len(gaps), "gap_mean": round(statistics.mean(gaps), 4), "gap_max": round(max(gaps), 4)}
    return out


def _status_kb(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+)", status).group(1))  # type: ignore[union-attr]


def cell(n_jobs: int, n_racks: int, scenario: Scenario, sharing: str) -> dict[str, Any]:
    """One scaling cell in its own process: time of ``plan`` and the peak RSS while it ran (Linux)."""
    problem = instance(n_jobs, n_racks, scenario, sharing)
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS (VmHWM) to the current RSS
    before = _status_kb("VmRSS")
    seconds, cpu_seconds, _ = timed(fast.plan, scenario, *problem)
    peak = _status_kb("VmHWM")
    return {"time_s": round(seconds, 3), "cpu_s": round(cpu_seconds, 3), "peak_rss_mb": round(peak / 1024), "planner_rss_mb": round((peak - before) / 1024)}


def predicted_seconds(measured: list[dict[str, Any]], n_jobs: int, n_racks: int, scenario: str, sharing: str) -> float:
    """Scale the largest smaller cell measured by (J R)^1.2 (J(R-1)+1 candidates, with a margin)."""
    smaller = [m for m in measured if m["scenario"] == scenario and m["sharing"] == sharing and "time_s" in m and m["jobs"] <= n_jobs and m["racks"] <= n_racks]
    if not smaller:
        return 0.0
    nearest = max(smaller, key=lambda m: (m["jobs"] * m["racks"], m["time_s"]))
    return float(nearest["time_s"] * (n_jobs * n_racks / (nearest["jobs"] * nearest["racks"])) ** 1.2)


def run_cell(n_jobs: int, n_racks: int, scenario: Scenario, sharing: str, timeout: float | None = None) -> dict[str, Any]:
    """``cell`` in a fresh process, so its peak RSS is its own."""
    args = [sys.executable, __file__, "--cell", str(n_jobs), str(n_racks), scenario, sharing]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True, timeout=timeout).stdout)


def large_cell(sharing: str, cap_s: float) -> dict[str, Any]:
    """10,000 x 1,000 online in a fresh process, given up after ``cap_s`` seconds (reported as such)."""
    try:
        return run_cell(10_000, 1_000, "online", sharing, timeout=cap_s)
    except subprocess.TimeoutExpired:
        return {"timed_out_after_s": cap_s}


def scaling(grid: tuple[list[int], list[int]], cap_s: float) -> list[dict[str, Any]]:
    measured: list[dict[str, Any]] = []
    for n_racks in grid[1]:
        for n_jobs in grid[0]:
            for scenario in SCENARIOS:
                for sharing in SHARING:
                    row: dict[str, Any] = {"jobs": n_jobs, "racks": n_racks, "scenario": scenario, "sharing": sharing}
                    guess = predicted_seconds(measured, n_jobs, n_racks, scenario, sharing)
                    if guess > cap_s:
                        row["skipped_predicted_s"] = round(guess)
                    else:
                        row.update(run_cell(n_jobs, n_racks, scenario, sharing))
                    measured.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="scaling table over the full grid (several minutes)")
    parser.add_argument("--cap", type=float, default=120.0, help="skip scaling cells predicted to take longer (s)")
    parser.add_argument("--skip-reference", action="store_true", help="leave out the reference planner (about 2 min)")
    parser.add_argument("--skip-large", action="store_true", help="leave out 10,000 jobs x 1,000 racks online (about a minute, 2 GB, per sharing mode)")
    parser.add_argument("--large-cap", type=float, default=600.0, help="timeout of the 10,000 x 1,000 cell, per sharing mode (s)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    parser.add_argument("--repeats", type=int, default=3, help="runs per target figure (the median is reported)")
    parser.add_argument("--cell", nargs=4, metavar=("JOBS", "RACKS", "SCENARIO", "SHARING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        print(json.dumps(cell(int(args.cell[0]), int(args.cell[1]), args.cell[2], args.cell[3])))
        return
    started = time.perf_counter()
    grid = FULL_GRID if args.full else DEFAULT_GRID
    skipped = {"vs_reference"} if args.skip_reference else set()
    run = set(args.only or SECTIONS) - skipped - ({"large"} if args.skip_large else set())
    figures: dict[str, Any] = {
        "benchmark": "planner",
        "ran": {"full_grid": args.full, "cap_s": args.cap, "reference": "vs_reference" in run, "sections": [s for s in SECTIONS if s in run], "repeats": args.repeats, "grid_jobs": grid[0],
                "grid_racks": grid[1], "cores": os.cpu_count(), "load_average_1min_at_start": round(os.getloadavg()[0], 1)},
    }
    if "target_500x100" in run:
        figures["target_500x100"] = {**target(500, 100, repeats=args.repeats), "target_s": 1.0}
    if "vs_reference" in run:
        figures["vs_reference"] = vs_reference()
    if "target_2000x400" in run:
        figures["target_2000x400"] = {**target(2000, 400, repeats=args.repeats), "target_s": {"batch": 1.0, "online": 2.0}}
    if "lp_gap" in run:
        figures["lp_gap"] = lp_gaps()
    if "scaling" in run:
        figures["scaling"] = scaling(grid, args.cap)
    if "large" in run:
        figures["large_10000x1000_online"] = {sharing: large_cell(sharing, args.large_cap) for sharing in SHARING} | {"jobs": 10_000, "racks": 1_000, "goal_s": 60.0}
    figures["total_s"] = round(time.perf_counter() - started, 1)
    figures["load_average_1min_at_end"] = round(os.getloadavg()[0], 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
