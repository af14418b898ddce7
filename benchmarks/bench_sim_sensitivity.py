"""Sensitivity of Corral's gain over Yarn-CS (thesis §4.5.6, Figs. 4.17a, 4.18) on the testbed's
shape (7 x 30, 10 Gbps, 5:1, background 50 %), W1-like jobs online over one hour:
- job-size error: the plan is built from the predicted jobs, the simulation runs them with every
  job's bytes off by a uniform factor in [1 - x, 1 + x] (paper: gains stay 25-35 % up to x = 50 %);
- start-time error: a fraction f of jobs start off by a uniform [-4 min, 4 min] (paper: 40 % -> 25 %);
- load: 50, 100, 200 and 300 jobs per hour, Yarn-CS / Corral ratios of the median and p90 (paper: ~1
  at 50, ~2x median and ~1.5x p90 at 200), and Yarn-CS's mean slot load;
- ad hoc mix (§4.5.5, Fig. 4.15): 100 recurring jobs over the hour plus 50 ad hoc jobs as a batch
  (paper: recurring mean -33 %, median -27 %; ad hoc p90 -37 %, makespan -28 %).
One JSON line. ``--full`` adds more error points; ``--seeds N`` averages N workloads (figures per seed
under ``by_seed``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from corral_yarn.sim.experiments import reduction
from corral_yarn.sim.run import RunSpec, plan_for, simulate
from corral_yarn.sim.workloads import perturb, scale_sizes, testbed_cluster, with_adhoc
from corral_yarn.workloads import w1_like

SPAN_S, BACKGROUND, START_ERROR_S = 3600.0, 0.5, 240.0
LOADS = (50, 100, 200, 300)  # jobs per hour (Fig. 4.17a)


def pair(predicted, actual, seed, replication):
    cluster = testbed_cluster()
    plan = plan_for(predicted, cluster, "online", BACKGROUND)
    yarn = simulate(cluster, actual, RunSpec("yarn-cs", "tcp", "online", seed, BACKGROUND, replication)).summary
    corral = simulate(cluster, actual, RunSpec("corral", "tcp", "online", seed, BACKGROUND, replication), plan=plan).summary
    return yarn, corral


def adhoc_mix(seed: int, scale: float, replication: int) -> dict[str, float]:
    cluster = testbed_cluster()
    mix = scale_sizes(with_adhoc(w1_like(100, seed=seed, arrival_span_s=SPAN_S), w1_like(50, seed=seed + 100)), scale)
    yarn = simulate(cluster, mix, RunSpec("yarn-cs", "tcp", "online", seed, BACKGROUND, replication))
    corral = simulate(cluster, mix, RunSpec("corral", "tcp", "online", seed, BACKGROUND, replication))

    def stat(result, adhoc: bool, what) -> float:
        return float(what(np.array(result.completions(adhoc=adhoc))))

    def gain(adhoc: bool, what) -> float:
        return round(reduction(stat(corral, adhoc, what), stat(yarn, adhoc, what)), 4)

    adhoc_makespan = {r.label: max(j.finish_s for j in r.jobs if j.adhoc) for r in (yarn, corral)}
    return {"recurring_mean_reduction": gain(False, np.mean), "recurring_median_reduction": gain(False, np.median),
            "adhoc_p90_reduction": gain(True, lambda x: np.percentile(x, 90)),
            "adhoc_makespan_reduction": round(reduction(adhoc_makespan["corral+tcp"], adhoc_makespan["yarn-cs+tcp"]), 4)}


def sweep(seed: int, jobs: int, sizes: tuple[float, ...], fractions: tuple[float, ...], scale: float, replication: int) -> dict[str, dict]:
    """Every sweep of the benchmark for one seed (workload, errors and placement)."""
    base = scale_sizes(w1_like(jobs, seed=seed, arrival_span_s=SPAN_S), scale)
    size_error = {}
    for x in sizes:
        yarn, corral = pair(base, perturb(base, size_error=x, seed=seed + 1), seed, replication)
        size_error[f"{x:g}"] = round(reduction(corral.mean_completion_s, yarn.mean_completion_s), 4)
    start_error = {}
    for f in fractions:
        yarn, corral = pair(base, perturb(base, arrival_error_s=START_ERROR_S, fraction=f, seed=seed + 2), seed, replication)
        start_error[f"{f:g}"] = round(reduction(corral.mean_completion_s, yarn.mean_completion_s), 4)
    load = {}
    for n in LOADS:
        w = scale_sizes(w1_like(n, seed=seed, arrival_span_s=SPAN_S), scale)
        yarn, corral = pair(w, w, seed, replication)
        load[str(n)] = {"median_ratio": round(yarn.median_completion_s / corral.median_completion_s, 3),
                        "p90_ratio": round(yarn.p90_completion_s / corral.p90_completion_s, 3),
                        "mean_reduction": round(reduction(corral.mean_completion_s, yarn.mean_completion_s), 4),
                        "yarn_mean_slot_load": round(yarn.mean_slot_load, 4)}  # thesis: ~8 % at 50 jobs/h
    return {"mean_reduction_by_size_error": size_error, "mean_reduction_by_start_error_fraction": start_error,
            "load_jobs_per_hour": load, "adhoc_mix_100_recurring_50_adhoc": adhoc_mix(seed, scale, replication)}


def mean_over(runs: list[dict]) -> dict:
    """The seeds' figures averaged leaf by leaf (same keys in every run)."""
    return {k: mean_over([r[k] for r in runs]) if isinstance(v, dict) else round(sum(r[k] for r in runs) / len(runs), 4)
            for k, v in runs[0].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="more size and start-time error points")
    parser.add_argument("--jobs", type=int, default=100, help="jobs per hour for the error sweeps (default 100)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1, each a different workload and placement; figures are their mean (default 1)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every job's bytes (default 1)")
    parser.add_argument("--replication", type=int, choices=(1, 2, 3), default=3, help="HDFS replication of job output (default 3)")
    args = parser.parse_args()
    t = time.perf_counter()
    sizes, fractions = ((0.0, 0.1, 0.25, 0.5), (0.0, 0.25, 0.5)) if args.full else ((0.0, 0.5), (0.5,))
    runs = [sweep(seed, args.jobs, sizes, fractions, args.scale, args.replication) for seed in range(args.seeds)]
    print(json.dumps({
        "benchmark": "sim_sensitivity", "cluster": "testbed 7x30, 10 Gbps, 5:1, background 50 %", "jobs_per_hour": args.jobs,
        "seeds": list(range(args.seeds)), "scale": args.scale, "output_replication": args.replication, "start_error_s": START_ERROR_S,
        **mean_over(runs), "by_seed": runs if args.seeds > 1 else None,
        "paper": {"size_error_up_to_50pct": "25-35 %", "start_error_f_0_to_50pct": "40 % -> 25 %", "load_200_per_hour": "median x2, p90 x1.5", "load_50_per_hour": "~1",
                  "adhoc_mix": "recurring mean -33 %, median -27 %; ad hoc p90 -37 %, makespan -28 %"},
        "wall_s": round(time.perf_counter() - t, 1),
    }))


if __name__ == "__main__":
    main()
