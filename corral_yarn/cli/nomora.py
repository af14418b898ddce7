"""``corral nomora simulate``: NoMora against random and load-spreading placement at cluster scale (docs/nomora.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from corral_yarn.cli.types import non_negative_float, non_negative_int, positive_float, positive_int
from corral_yarn.nomora import simulation, workload


def _simulate(args: argparse.Namespace) -> int:
    topology = simulation.Topology(args.machines, args.hosts_per_rack, args.racks_per_pod, args.slots)
    if args.trace:
        jobs = workload.load_task_events(args.trace, args.hours, seed=args.seed)
    else:
        jobs = workload.generate(args.hours, args.machines, args.slots, seed=args.seed)
    config = simulation.SimConfig(hours=args.hours, round_s=args.round_s, beta=args.beta, seed=args.seed)
    figures = {policy: simulation.simulate(jobs, topology, policy, config).summary() for policy in args.policy}
    if args.json:
        print(json.dumps({"machines": args.machines, "racks": topology.racks, "jobs": len(jobs), "policies": figures}))
        return 0
    print(f"{len(jobs)} jobs on {args.machines} machines ({topology.racks} racks of {args.hosts_per_rack}, "
          f"{args.racks_per_pod} racks per pod, {args.slots} slots each), {args.hours} h in rounds of {args.round_s} s")
    print(f"{'policy':<20} {'avg perf':>8} {'runtime ms (med/p99)':>21} {'placement s (med/p99)':>22} {'migrated %/round':>16}")
    for policy, f in figures.items():
        runtime, placement = f["algorithm_runtime_ms"], f["placement_latency_s"]
        print(f"{policy:<20} {f['avg_app_perf']:>8.3f} {_pair(runtime['median'], runtime['p99']):>21} "
              f"{_pair(placement['median'], placement['p99']):>22} {f['migrated_per_round_pct']['mean']:>16.3f}")
    return 0


def _pair(a: float | None, b: float | None) -> str:
    return "-" if a is None else f"{a:.4g} / {b:.4g}"


def register(subparsers: argparse._SubParsersAction) -> None:
    nomora = subparsers.add_parser("nomora", help="NoMora: latency-driven, application-performance-aware placement (docs/nomora.md)")
    commands = nomora.add_subparsers(title="nomora commands", metavar="COMMAND", required=True)
    sim = commands.add_parser("simulate", help="simulate random, load-spreading and NoMora placement on a fat-tree cluster")
    sim.add_argument("--machines", type=positive_int, default=1536, help="machines (default 1536; the paper: 12500)")
    sim.add_argument("--hosts-per-rack", type=positive_int, default=48, help="machines per rack (default 48, as the paper)")
    sim.add_argument("--racks-per-pod", type=positive_int, default=16, help="racks per pod (default 16, as the paper)")
    sim.add_argument("--slots", type=positive_int, default=8, help="task slots per machine (default 8)")
    sim.add_argument("--hours", type=positive_float, default=0.25, help="simulated hours (default 0.25)")
    sim.add_argument("--round-s", type=positive_float, default=10.0, help="seconds between scheduling rounds (default 10)")
    sim.add_argument("--policy", nargs="+", choices=simulation.POLICIES, default=list(simulation.POLICIES),
                     help="policies to run (default all)")
    sim.add_argument("--beta", type=non_negative_float, default=1.0,
                     help="β per second already run, for nomora_preempt_beta (default 1)")
    sim.add_argument("--seed", type=non_negative_int, default=1, help="seed of the workload and the latencies (default 1)")
    sim.add_argument("--trace", nargs="+", type=Path, metavar="CSV",
                     help="Google cluster-trace 2011 task_events files (.csv or .csv.gz) to replay instead of generating")
    sim.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    sim.set_defaults(func=_simulate)
