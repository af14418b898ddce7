"""Benchmark of the resource selector (thesis §4.4): the trends of Figs 4.4, 4.5 and 4.9, and the time
to select and allocate one request on a 128,000-VM datacenter (§4.4.3). Prints ONE JSON line.

Default (about six minutes on the shared 2 cores): 16,000 machines x 4 VMs, 10:1 oversubscription, 3,000
requests per point after their history (the requests still running from the 20,000 s of arrivals
before, so the datacenter starts at the stationary load; the first 20 % of the stream are left out
too), occupancy 50/75/90 % at a mean B_base of 500 Mbps, and mean B_base 100/300/500/900 Mbps at
75 %; then 1,000 requests timed per strategy, Corral-I and Corral-T, on 32,000 machines x 4 VMs at
75 %. Every point reports the occupancy measured over its window: offered (every request on its
Baseline tuple for its goal) and, per strategy, carried (the VMs its accepted jobs held).
``--full``: the thesis's 15,000 requests per point, occupancy 10-90 %, B_base 100-900 Mbps, and
10,000 timed requests.

Usage: .venv/bin/python benchmarks/bench_selector.py [--full] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from corral_yarn.selector import CandidateRules, SimulationResult, TreeTopology, WorkloadConfig, simulate
from corral_yarn.selector.candidates import MBPS

FIGURES = ("baseline", "corral-r", "corral-i", "corral-t", "strawman")
PAPER = {
    "fig_4_4": "Corral-I rejects 3-14 % fewer requests than Baseline depending on occupancy; Corral-R 2-5 % more than Corral-I; "
    "at 900 Mbps mean bandwidth Corral-I rejects 19.9 % fewer than Baseline",
    "fig_4_5": "goodput vs Baseline: Corral-I +7..+87 %, Corral-R +0..+66 %; at 75 % and 500 Mbps Corral-I +56 %, Corral-R +39 %",
    "fig_4_9": "Corral-T raises goodput at high occupancy and cuts median completion time by > 50 % (20 % of jobs by 80 %); Strawman performs poorly",
    "select_ms_128k_vms": "median 950.17 ms, p99 983.29 ms over 10,000 requests",
}


def _datacenter(pods: int) -> TreeTopology:
    return TreeTopology(fanout=(40, 10, pods), vm_slots=4, nic_bytes_per_s=1000 * MBPS, oversubscription=(10.0, 1.0))


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _window(result: SimulationResult) -> dict[str, float | int | None]:
    """Where the figures were measured: the history admitted first, the window, the offered occupancy."""
    return {"history_requests": result.history_requests, "measured_window_s": round(result.measured_window_s),
            "offered_occupancy": _rounded(result.offered_occupancy, 3)}


def _point(result: SimulationResult) -> dict[str, object]:
    return {**_window(result), **{
        r.strategy: {
            "occupancy": _rounded(r.occupancy, 3),
            "rejected": round(r.rejected_fraction, 4),
            "goodput_vs_baseline": _rounded(r.goodput_vs_baseline, 4),
            "late": round(r.late_fraction, 4),
            "completion_vs_goal_median": _rounded(r.completion_vs_goal_median, 3),
            "completion_vs_goal_p20": _rounded(r.completion_vs_goal_p20, 3),
            "mean_vms": _rounded(r.mean_vms, 1),
            "mean_bandwidth_mbps": None if r.mean_bandwidth_bytes_per_s is None else round(r.mean_bandwidth_bytes_per_s / MBPS),
            "select_ms_median": round(r.select_ms_median, 2),
        }
        for r in result.results
    }}


def _sweep(requests: int, occupancies: list[float], bandwidths: list[int], seed: int, warmup: float) -> dict[str, object]:
    dc = _datacenter(pods=40)
    runs: dict[tuple[float, int], dict] = {}
    for occupancy, mbps in [(o, 500) for o in occupancies] + [(0.75, b) for b in bandwidths]:
        if (occupancy, mbps) not in runs:
            config = WorkloadConfig(requests=requests, occupancy=occupancy, mean_bandwidth=mbps * MBPS, seed=seed)
            runs[occupancy, mbps] = _point(simulate(dc, config, CandidateRules(), FIGURES, warmup_fraction=warmup))
            print(f"occupancy {occupancy:.2f}, B_base {mbps} Mbps done", file=sys.stderr)
    return {
        "occupancy_sweep_at_500mbps": {f"{o:.2f}": runs[o, 500] for o in occupancies},
        "bandwidth_sweep_at_75pct": {str(b): runs[0.75, b] for b in bandwidths},
    }


def _timing(requests: int, seed: int) -> dict[str, object]:
    """Candidates + selection + allocation per request, at 75 % occupancy on 128,000 VMs (§4.4.3)."""
    dc = _datacenter(pods=80)
    config = WorkloadConfig(requests=requests, occupancy=0.75, seed=seed)
    result = simulate(dc, config, CandidateRules(), ["corral-i", "corral-t"], warmup_fraction=0.2, time_candidates=True)
    timed = {r.strategy: {"median_ms": round(r.select_ms_median, 2), "p99_ms": round(r.select_ms_p99, 2),
                          "occupancy": _rounded(r.occupancy, 3), "rejected": round(r.rejected_fraction, 4)}
             for r in result.results}
    return {"vms": dc.vms, "requests_timed": result.results[0].requests, **_window(result), **timed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the thesis's 15,000 requests and full sweeps (hours)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.full:
        figures = _sweep(15_000, [0.1, 0.3, 0.5, 0.7, 0.75, 0.8, 0.9], [100, 300, 500, 700, 900], args.seed, warmup=0.1)
        timed = 12_500
    else:
        figures = _sweep(3_000, [0.5, 0.75, 0.9], [100, 300, 500, 900], args.seed, warmup=0.2)
        timed = 1_250
    line = {
        "bench": "selector",
        "mode": "full" if args.full else "default",
        "datacenter": {"machines": 16_000, "vms": 64_000, "fanout": [40, 10, 40], "oversubscription": "10:1 at the racks"},
        **figures,
        "select_ms_128k_vms": _timing(timed, args.seed),
        "target_select_ms": 20,
        "paper": PAPER,
        "numpy": np.__version__,
        "wall_s": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
