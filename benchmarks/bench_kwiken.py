"""Benchmark of Kwiken (thesis ch. 5) on synthetic DAGs shaped after the thesis's (docs/kwiken.md). Prints ONE JSON line.

Per generated DAG (45 by default, like the thesis's 45 production DAGs; 10,000 training and 10,000
test requests each): every reissue policy at budgets 1-20 % and 100 % (Fig. 5.5, §5.4.2), the
brute-force searches on the nine smallest DAGs of three or more stages (10,000 random allocations,
direct p99 descent), the partial-answer policies on every fan-out stage (Fig. 5.6) and reissues with
partial answers together (Fig. 5.8b). Policies are trained on the training trace and measured on the
test trace, which is another "day" (drifted). The PNG figures and an index.html go to --out.

About 15 minutes on the shared 2 cores (the random search on the nine small DAGs is most of it); ``--quick`` (12 DAGs, 1,000 random allocations, 5,000
requests) about a minute.

Usage: .venv/bin/python benchmarks/bench_kwiken.py [--quick] [--dags N] [--seed N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from corral_yarn.kwiken import experiments, synthetic
from corral_yarn.kwiken.partial import Responders
from corral_yarn.report import kwiken as kwiken_report
from corral_yarn.report.html import publish

PAPER = {
    "reissue.p99_reduction_at_5pct": 0.29,
    "reissue.p99_reduction_at_5pct_over_100pct": "over half (§5.4.2: 'almost half' in the text, 'over half' in the summary)",
    "sumvar_vs_best_random": "SumVar better by 2 % on average; in 95 % of (DAG, budget) cases >= 94 % of the best random's reduction",
    "partial.p99_reduction_at_0_1pct_loss": "about 0.50 (p95: about 0.25), mean over the web, image and video stages",
    "partial.policies": "Kwiken better than time-then-fraction, better than fixed-timeout, better than wait-for-fraction (Fig. 5.6b)",
    "partial.wait_for_fraction_at_1pct_loss": "Table 5.2, real stages, first ceil(0.99 n) responders: p95 -43 / -43 / -31 %, p99 -78 / -81 / -51 % (web / image / video)",
    "combined": "1 % reissues + 0.1 % partial answers beat 10 % reissues alone (Fig. 5.8b, one 150-stage DAG)",
    "catchup": "3 % budget, 1/30 or 1/6 of it to global reissues: about 3 % lower p99 than all local, 37 of 45 DAGs gain (Fig. 5.7b)",
    "production_reissues": "Bing's own conservative timeouts: 0.2 % extra cost, -3 % p99 (not reproducible: timeouts not published)",
}


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="12 DAGs, 1,000 random allocations, 5,000 requests per trace")
    p.add_argument("--dags", type=int, default=None, help="DAGs to generate (default 45; --quick 12)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/bench_kwiken", help="directory of the PNG figures and index.html")
    return p.parse_args()


def main() -> None:
    args = _args()
    start = time.monotonic()
    dags = args.dags or (12 if args.quick else 45)
    requests = 5_000 if args.quick else synthetic.REQUESTS
    random_allocations = 1_000 if args.quick else 10_000
    small = experiments.small_dags([len(synthetic.workload(k, args.seed, requests=100).dag.stages) for k in range(dags)])
    reissue, stages, combined, shapes, catch_up = [], [], [], [], []
    for k in range(dags):
        w = synthetic.workload(k, args.seed, requests=requests)
        shapes.append(synthetic.shape_of(w))
        reissue.append(experiments.reissue_dag(w, k in small, seed=k, random_allocations=random_allocations))
        for name in (w.dag.names[s] for s in w.fanout_stages):
            stages.append(experiments.partial_stage(*(Responders.of(m) for m in w.responders[name])))
        if w.fanout_stages:
            combined.append(experiments.combined_dag(w, seed=k))
        catch_up.append(experiments.catchup_dag(w, seed=k))
        print(f"dag {k + 1}/{dags}: {len(w.dag.stages)} stages, {len(w.fanout_stages)} fan-out, {time.monotonic() - start:.0f} s", file=sys.stderr)
    figures = experiments.reissue_figures(reissue)
    partial = experiments.partial_figures(stages)
    together = experiments.combined_figures(combined)
    means = figures["p99_reduction_mean"]
    over_random = figures["small_dags"]["sumvar_over"].get("random-best", {})
    pngs = {**kwiken_report.reissue_pngs(figures, reissue), **kwiken_report.partial_pngs(partial), **kwiken_report.combined_pngs(together)}
    report = publish(args.out, kwiken_report.render(pngs, [
        "Synthetic DAGs generated from the thesis's published shapes (corral_yarn/kwiken/synthetic.py); the production traces are not public.",
        "Policies trained on each DAG's training trace and measured on its test trace (another, drifted 'day').",
    ]))
    print(json.dumps({
        "benchmark": "kwiken", "quick": args.quick, "dags": dags, "seed": args.seed, "requests_per_trace": requests,
        "random_allocations": random_allocations,
        "reissue": {
            "p99_reduction_at_5pct": means["sumvar"]["0.05"],
            "p99_reduction_at_100pct": means["sumvar"]["1"],
            "p99_reduction_at_5pct_over_100pct": means["sumvar"]["0.05"] / means["sumvar"]["1"],
            "p99_reduction_at_5pct_by_policy": {p: v["0.05"] for p, v in means.items()},
            "test_budget_spent_at_5pct": figures["train_vs_test"]["0.05"]["spent_test"],
            "train_p99_reduction_at_5pct": figures["train_vs_test"]["0.05"]["train_p99_reduction"],
        },
        "sumvar_vs_best_random": over_random.get("mean"),
        "sumvar_at_least_0_94_of_best_random": over_random.get("share_at_least_0_94"),
        "partial": {
            "p99_reduction_at_0_1pct_loss": partial["kwiken"]["p99"].get("0.001"),
            "p95_reduction_at_0_1pct_loss": partial["kwiken"]["p95"].get("0.001"),
            "p99_reduction_at_0_1pct_loss_by_policy": {p: v.get("0.001") for p, v in partial["p99_by_policy"].items()},
            "test_loss_at_0_1pct": partial["kwiken"]["loss"].get("0.001"),
            "wait_for_fraction_at_1pct_loss": {k: partial[f"{k}_by_policy"]["wait-for-fraction"].get("0.01") for k in ("p95", "p99")},
            "fanout_stages": partial["stages"],
        },
        "combined": together,
        "catchup": experiments.catchup_figures(catch_up),
        "yarn": {"p99_jct_ratio_vs_default_speculation": None, "note": "measured by benchmarks/bench_kwiken_yarn.py on the embedded cluster, not here (docs/kwiken.md)"},
        "figures": {"reissue": figures, "partial": partial},
        "workload_shape": synthetic.shape_check(shapes),
        "paper": PAPER,
        "wall_s": round(time.monotonic() - start, 1),
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "report": str(report),
    }))


if __name__ == "__main__":
    main()
