"""Benchmark of NoMora (paper 000/001, §6) at cluster scale (docs/nomora.md). Prints ONE JSON line.

Random and load-spreading (Firmament's baselines) against NoMora (p_m = 105, p_r = 110) without
preemption, with preemption and β = 0, and with preemption and β > 0 (``--beta`` per second run), all on
the same workload and the same moving fat-tree latencies: 12,500 machines in racks of 48 and pods of 16
racks, a workload generated from published Google-trace statistics (or ``--trace`` task_events files of
the public 2011 Google trace). Figures as published: average application performance, algorithm runtime
per round (the OR-Tools solver; median, p99), task placement latency, share of tasks migrated per round.
PNG figures go to --out.

About 30-45 minutes on the shared 2 cores (the preempting runs dominate); ``--quick`` (1,536 machines,
15 simulated minutes) about 2-3 minutes.

Usage: .venv/bin/python benchmarks/bench_nomora.py [--quick] [--machines N] [--hours H] [--round-s S]
       [--beta B] [--seed N] [--trace FILE ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from corral_yarn.nomora import simulation, workload

PAPER = {  # NoMora journal Table 2 and preprint §6 (Google trace, 12,500 machines, 24 h)
    "avg_app_perf": {"random": 0.472, "load_spreading": 0.468, "nomora": 0.602, "nomora_preempt": 0.896,
                     "nomora_preempt_beta": 0.59},
    "algorithm_runtime_ms": {"random": {"median": 108, "p99": 661}, "load_spreading": {"median": 109, "p99": 974},
                             "nomora": {"median": 93, "p99": 248}, "nomora_preempt": {"median": 1532000, "p99": 6610000},
                             "nomora_preempt_beta": {"median": 373, "p99": 511000}},
    "placement_latency_s_median": {"random": 0.436, "load_spreading": 0.498, "nomora": 0.278,
                                   "nomora_preempt": 4812, "nomora_preempt_beta": 519},
    "migrated_per_round_pct": {"nomora_preempt": {"mean": 7.1, "p99": 10.07},
                               "nomora_preempt_beta": {"mean": 0.022, "p99": 0.5}},
}
LABELS = {"random": "random", "load_spreading": "load spreading", "nomora": "NoMora",
          "nomora_preempt": "NoMora, preempt, β = 0", "nomora_preempt_beta": "NoMora, preempt, β > 0"}


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1,536 machines (2 pods), 15 simulated minutes")
    p.add_argument("--machines", type=int, default=None, help="cluster size (default 12,500; --quick 1,536)")
    p.add_argument("--hours", type=float, default=None, help="simulated hours (default 0.25)")
    p.add_argument("--round-s", type=float, default=10.0, help="seconds between scheduling rounds")
    p.add_argument("--beta", type=float, default=1.0, help="β per second run for the β > 0 preempting run")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--trace", nargs="*", default=None, help="Google 2011 task_events files to replay instead")
    p.add_argument("--out", default="out/bench_nomora", help="directory of the PNG figures")
    return p.parse_args()


def figures(out: str, results: dict[str, simulation.SimResult]) -> list[str]:
    os.makedirs(out, exist_ok=True)
    panels = [("nomora_app_perf.png", "average application performance per job", "job_perf", False),
              ("nomora_runtime.png", "algorithm runtime per round (ms)", "solver_ms", True),
              ("nomora_placement_latency.png", "task placement latency (s)", "placement_latency_s", True)]
    names = []
    for name, xlabel, attribute, log in panels:
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        for policy, result in results.items():
            values = np.sort(np.asarray(getattr(result, attribute), dtype=float))
            if len(values):
                ax.plot(values, np.arange(1, len(values) + 1) / len(values), label=LABELS[policy])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("CDF")
        if log:
            ax.set_xscale("log")
        ax.legend(fontsize=8)
        fig.tight_layout()
        FigureCanvasAgg(fig).print_png(os.path.join(out, name))
        names.append(name)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for policy in ("nomora_preempt", "nomora_preempt_beta"):
        ax.plot(100 * np.asarray(results[policy].migrated_share), label=LABELS[policy])
    ax.set_xlabel("scheduling round")
    ax.set_ylabel("running tasks migrated (%)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    FigureCanvasAgg(fig).print_png(os.path.join(out, "nomora_migrated.png"))
    return [*names, "nomora_migrated.png"]


def main() -> None:
    args = _args()
    machines = args.machines or (1536 if args.quick else 12_500)
    hours = args.hours or 0.25
    topology = simulation.Topology(machines)
    if args.trace:
        jobs = workload.load_task_events(args.trace, hours, seed=args.seed)
    else:
        jobs = workload.generate(hours, machines, topology.slots, seed=args.seed)
    config = simulation.SimConfig(hours=hours, round_s=args.round_s, beta=args.beta, seed=args.seed)
    results, wall = {}, {}
    for policy in simulation.POLICIES:
        start = time.monotonic()
        results[policy] = simulation.simulate(jobs, topology, policy, config)
        wall[policy] = round(time.monotonic() - start, 1)
        print(f"{policy}: {wall[policy]} s {json.dumps(results[policy].summary())}", file=sys.stderr, flush=True)
    pngs = figures(args.out, results)
    figures_of = {p: r.summary() for p, r in results.items()}
    print(json.dumps({
        "machines": machines, "racks": topology.racks, "hosts_per_rack": topology.hosts_per_rack,
        "racks_per_pod": topology.racks_per_pod, "slots_per_machine": topology.slots, "hours": hours,
        "round_s": args.round_s, "beta_per_s": args.beta, "seed": args.seed,
        "workload": "google_trace" if args.trace else "generated", "jobs": len(jobs),
        "tasks": int(sum(len(j.durations_s) for j in jobs)),
        **{metric: {p: f[metric] for p, f in figures_of.items()}
           for metric in ("avg_app_perf", "algorithm_runtime_ms", "algorithm_cpu_ms", "round_ms", "round_cpu_ms",
                          "placement_latency_s")},
        "gain_points_over_random": {p: round(100 * (r.avg_app_perf - results["random"].avg_app_perf), 1)
                                    for p, r in results.items() if p.startswith("nomora")},
        "migrated_per_round_pct": {p: figures_of[p]["migrated_per_round_pct"] for p in ("nomora_preempt", "nomora_preempt_beta")},
        "max_running_over_slots": {p: f["max_running_over_slots"] for p, f in figures_of.items()},
        "wall_s": wall, "paper": PAPER, "figures": [os.path.join(args.out, p) for p in pngs],
    }))


if __name__ == "__main__":
    main()
