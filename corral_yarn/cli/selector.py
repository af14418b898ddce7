"""``corral select-sim``: the resource selector's online simulation (thesis §4.4.1) with every
strategy on one seeded request stream; JSON results and an HTML/PNG report (docs/selector.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from corral_yarn.cli.types import non_negative_float, non_negative_int, options_for_fields, positive_float, positive_int, unit_interval
from corral_yarn.errors import InputError
from corral_yarn.io import write_together
from corral_yarn.report.charts import Panel, comparison_png
from corral_yarn.report.html import fmt_bytes, fmt_percent, fmt_seconds, figure, key_values, page, paragraph, section, table
from corral_yarn.selector import STRATEGIES, CandidateRules, SimulationResult, TreeTopology, WorkloadConfig, simulate
from corral_yarn.selector.candidates import MBPS
from corral_yarn.selector.workload import check_occupancy

# the names TreeTopology, WorkloadConfig and CandidateRules use in their errors -> the options that set them
SELECT_SIM_OPTIONS = {"oversubscription": "--oversubscription/--pod-oversubscription", "mean_vms": "--mean-vms",
                      "candidate rules": "--slack/--max-candidates", "slack": "--slack", "max_candidates": "--max-candidates"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("select-sim", help="simulate the resource selector: rejected requests, goodput, late jobs per strategy")
    dc = p.add_argument_group("datacenter (a three-level tree, thesis §4.4.1)")
    dc.add_argument("--machines-per-rack", type=positive_int, default=40, help="machines per rack (default 40)")
    dc.add_argument("--racks-per-pod", type=positive_int, default=10, help="racks per aggregation switch (default 10)")
    dc.add_argument("--pods", type=positive_int, default=40, help="aggregation switches under the core (default 40: 16,000 machines)")
    dc.add_argument("--vm-slots", type=positive_int, default=4, help="VM slots per machine (default 4)")
    dc.add_argument("--nic-mbps", type=positive_int, default=1000, help="machine NIC in Mbit/s (default 1000)")
    dc.add_argument("--oversubscription", type=positive_float, default=10.0, help="rack uplink oversubscription (default 10)")
    dc.add_argument("--pod-oversubscription", type=positive_float, default=1.0, help="pod uplink oversubscription (default 1)")
    dc.add_argument("--disk-mbps", type=positive_float, default=1000.0, help="disk bandwidth of a VM in Mbit/s (default 1000 = 125 MB/s)")
    wl = p.add_argument_group("requests (thesis §4.4.1-2)")
    wl.add_argument("--requests", type=positive_int, default=15000, help="application requests (default 15000)")
    wl.add_argument("--occupancy", type=float, default=0.75, help="target VM occupancy lambda N T / M, in (0, 1] (default 0.75)")
    wl.add_argument("--mean-vms", type=positive_float, default=50.0, help="mean N_base of the Baseline tuple (default 50)")
    wl.add_argument("--mean-bandwidth-mbps", type=positive_int, default=500, help="mean B_base of the Baseline tuple in Mbit/s (default 500)")
    wl.add_argument("--task-rate-mbps", type=positive_int, default=500, help="mean map/reduce processing rate B^P in Mbit/s (default 500)")
    wl.add_argument("--outlier-probability", type=unit_interval(closed=False), default=0.0, help="chance a task is an outlier (default 0: perfect prediction)")
    wl.add_argument("--outlier-slowdown", type=non_negative_float, default=1.0, help="an outlier runs 1 + Exp(this mean) times longer (default 1)")
    wl.add_argument("--history-s", type=non_negative_float, default=20000.0,
                    help="start from the requests still running from this many seconds of earlier arrivals (default 20000; 0: start empty)")
    wl.add_argument("--seed", type=non_negative_int, default=0, help="random seed (default 0)")
    sel = p.add_argument_group("selection")
    sel.add_argument("--strategies", default=",".join(STRATEGIES), help=f"comma-separated, of {', '.join(STRATEGIES)} (default all)")
    sel.add_argument("--slack", type=non_negative_float, default=0.0, help="tuples must finish by deadline / (1 + slack) (default 0)")
    sel.add_argument("--max-candidates", type=positive_int, default=24, help="frontier tuples tried per request (default 24)")
    sel.add_argument("--warmup-fraction", type=unit_interval(closed=False), default=0.0, help="leave the first fraction of requests out of the metrics (default 0)")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=Path, help="write the results JSON here (default: print it)")
    out.add_argument("--report", type=Path, help="write an HTML/PNG report into this directory")
    out.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_select_sim)


def _strategies(text: str) -> list[str]:
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    if not chosen or (unknown := sorted(set(chosen) - set(STRATEGIES))):
        raise InputError(f"unknown strategies {unknown if chosen else text!r}; choose from {', '.join(STRATEGIES)}", field="--strategies")
    return chosen


def _select_sim(args: argparse.Namespace) -> int:
    strategies = _strategies(args.strategies)
    check_occupancy(args.occupancy, field="--occupancy")
    with options_for_fields(SELECT_SIM_OPTIONS):
        topology = TreeTopology(
            fanout=(args.machines_per_rack, args.racks_per_pod, args.pods),
            vm_slots=args.vm_slots,
            nic_bytes_per_s=args.nic_mbps * MBPS,
            oversubscription=(args.oversubscription, args.pod_oversubscription),
        )
        config = WorkloadConfig(
            requests=args.requests, occupancy=args.occupancy, mean_vms=args.mean_vms,
            mean_bandwidth=args.mean_bandwidth_mbps * MBPS, mean_task_rate=args.task_rate_mbps * MBPS,
            max_bandwidth=args.nic_mbps * MBPS, outlier_probability=args.outlier_probability,
            outlier_mean_slowdown=args.outlier_slowdown, history_s=args.history_s, seed=args.seed,
        )
        rules = CandidateRules(slack=args.slack, max_bandwidth=args.nic_mbps * MBPS, max_candidates=args.max_candidates)
    with tqdm(total=args.requests * len(strategies), unit="req", disable=args.no_progress, desc="select-sim", delay=1.0) as bar:
        result = simulate(topology, config, rules, strategies, disk_bytes_per_s=args.disk_mbps * MBPS,
                          warmup_fraction=args.warmup_fraction, progress=bar.update)
    text = result.model_dump_json(indent=2) + "\n"
    files = {**({args.out: text} if args.out else {}), **({args.report: render_report(result)} if args.report else {})}
    write_together(files)  # the results and their report, or neither
    if not files:
        print(text, end="")
    return 0


def render_report(result: SimulationResult) -> dict[str, bytes]:
    """The report page and its chart: per strategy, rejections, goodput and completion times."""
    rows = [
        (r.strategy, fmt_percent(r.occupancy), fmt_percent(r.rejected_fraction), fmt_bytes(r.goodput_bytes), fmt_percent(r.goodput_vs_baseline),
         fmt_percent(r.late_fraction), fmt_seconds(r.completion_s_median or 0.0), f"{r.completion_vs_goal_median or 0.0:.2f}",
         f"{r.mean_vms or 0.0:.1f}", f"{(r.mean_bandwidth_bytes_per_s or 0.0) / MBPS:.0f}", f"{r.select_ms_median:.2f}")
        for r in result.results
    ]
    headers = ["strategy", "occupancy (carried)", "rejected", "goodput", "goodput vs Baseline", "late", "median completion",
               "median completion / goal", "mean N", "mean B (Mbps)", "median select (ms)"]
    labels = [r.strategy for r in result.results]
    png = comparison_png([
        Panel("rejected requests", labels, [100 * r.rejected_fraction for r in result.results], lambda v: f"{v:.1f} %"),
        Panel("goodput vs Baseline", labels, [100 * (r.goodput_vs_baseline or 0.0) for r in result.results], lambda v: f"{v:+.0f} %"),
        Panel("median completion / goal", labels, [r.completion_vs_goal_median or 0.0 for r in result.results], lambda v: f"{v:.2f}"),
    ])
    setup = [("machines", f"{int(result.fanout[0] * result.fanout[1] * result.fanout[2]):,}"),
             ("tree (machines/rack, racks/pod, pods)", " x ".join(map(str, result.fanout))),
             ("VM slots per machine", result.vm_slots), ("oversubscription (rack, pod)", " : ".join(f"{o:g}" for o in result.oversubscription)),
             ("offered occupancy (measured)", fmt_percent(result.offered_occupancy)), ("measured window", fmt_seconds(result.measured_window_s)),
             ("history requests (not measured)", result.history_requests),
             *((k, v) for k, v in result.workload.items()), *((f"rule {k}", v) for k, v in result.rules.items())]
    html = page(
        "Resource selector simulation",
        "Thesis §4.4: Baseline, Corral-R, Corral-I, Corral-T and Strawman on one seeded request stream",
        [
            section("Results", table(headers, rows, numeric=range(1, len(headers))), figure(png, "strategies.png", "per strategy")),
            section("Setup", key_values(setup), paragraph(
                "Rates in bytes/s. Goodput is the input bytes of the accepted requests (§4.4.2). Occupancy is time-averaged "
                "busy VMs / all VMs over the measured window: offered with every request on its Baseline tuple, carried "
                "with the VMs each strategy's accepted jobs held.")),
        ],
    )
    return {"index.html": html.encode(), "strategies.png": png, "result.json": (result.model_dump_json(indent=2) + "\n").encode()}
