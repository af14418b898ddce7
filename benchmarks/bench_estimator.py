"""Estimator benchmark: prediction error of each predictor, side by side, on one JSON line.

(a) SWIM FB-2009: 24 one-hour samples of a Facebook trace concatenated into one "day". It has no job
    names and no real days, so (documented in docs/estimator.md) a "recurring job" is a size class
    (estimator.sources.swim.swim_key) and a "day" is one one-hour sample, without weekday/weekend split:
    - per_job: each job predicted from the nearest-in-minute job of its class in the previous 5 samples;
    - class_hourly_volume: each class's total input per sample predicted from the previous 5 samples.
(b) Synthetic 4-week recurring history with known truth and Normal noise (estimator.synthetic): the
    paper's predictor against the truth and the observations, next to the noise floor and the 6.5 %.
(c) Dirty inputs: a corrupted SWIM copy and a skewed/duplicated CSV, every row accounted for.
(d) Estimation of the next day on the synthetic history: jobs found, arrival and size errors.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

from estimator.backtest import backtest, summarize
from estimator.estimate import EstimateOptions, estimate
from estimator.identity import RecurringKey
from estimator.predictors import PREDICTORS, Season, instances
from estimator.records import IngestReport, JobRun
from estimator.sources.swim import read_swim
from estimator.sources.tabular import read_csv
from estimator.store import HistoryStore
from estimator.synthetic import SyntheticSpec, synthetic_history

SWIM = Path(__file__).resolve().parents[1].parent / "shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv"
SWIM_SEASON = Season(period_s=3600.0, window_s=3600.0, lookback_days=5, split_weekend=False)
NAMES = [*PREDICTORS, "auto"]


def _r(x: float) -> float:
    return round(float(x), 4)


def _errors(points, quantities=("input_bytes",)) -> dict:
    s = summarize(points)
    return {n: {"points": int(s[n]["points"]), **{f"{q.removesuffix('_bytes')}_{m}": _r(s[n][f"{q}_{m}"]) for q in quantities for m in ("mape", "median_ape", "weighted_ape")}} for n in NAMES}


def _class_volumes(runs: list[JobRun]) -> list[JobRun]:
    """One run per (size class, one-hour sample): the class's total bytes in that sample."""
    totals: dict[tuple[str, int], list[float]] = {}
    for r in runs:
        k = (r.recurring_key, SWIM_SEASON.day(r.submit_time))
        t = totals.setdefault(k, [0.0, 0.0, 0.0])
        t[0] += r.input_bytes
        t[1] += r.shuffle_bytes
        t[2] += r.output_bytes
    return [
        JobRun(run_id=f"{key}:{day}", recurring_key=key, name=key, source="swim-volume", submit_time=SWIM_SEASON.start(day),
               input_bytes=int(a), shuffle_bytes=int(b), output_bytes=int(c))
        for (key, day), (a, b, c) in sorted(totals.items())
    ]


def swim_figures() -> dict:
    report = IngestReport()
    runs = read_swim(SWIM, report)
    per_job = backtest(instances(runs), SWIM_SEASON)
    volumes = backtest(instances(_class_volumes(runs)), SWIM_SEASON)
    return {
        "jobs": len(runs),
        "size_classes": len({r.recurring_key for r in runs}),
        "samples": len({SWIM_SEASON.day(r.submit_time) for r in runs}),
        "per_job": _errors(per_job, ("input_bytes", "shuffle_bytes", "output_bytes")),
        "class_hourly_volume": _errors(volumes),
    }


def synthetic_figures(spec: SyntheticSpec) -> dict:
    runs, truth = synthetic_history(spec)
    points = backtest(instances(runs), Season())
    run_id = {(r.recurring_key, r.submit_time): r.run_id for r in runs}
    vs_truth = {}
    for n in NAMES:
        mine = [p for p in points if p.predictor == n]
        vs_truth[n] = _r(np.mean([abs(p.predicted[0] - truth[run_id[p.key, p.time]][0]) / truth[run_id[p.key, p.time]][0] for p in mine]))
    matches = np.mean([p.matches for p in points if p.predictor == "paper"])
    return {
        "noise_sigma": spec.noise,
        "growth_per_day": spec.growth_per_day,
        "outlier_rate": spec.outlier_rate,
        "runs": len(runs),
        "noise_floor_mape": _r(spec.noise * math.sqrt(2 / math.pi)),  # E|e| of one observation's noise
        "mean_days_averaged": _r(matches),
        "vs_observed": {n: e["input_mape"] for n, e in _errors(points).items()},
        "vs_truth": vs_truth,
    }


def dirty_figures(tmp: Path) -> dict:
    lines = SWIM.read_text().splitlines()
    corrupt = tmp / "corrupt.tsv"
    bad = ["job9999\t1\t1\tNaN-bytes\t0\t0", "garbage line", "job9998\t5\t1\t-100\t0\t0"]
    corrupt.write_text("\n".join(lines[:1000] + bad + lines[:10] + [lines[1000][:7]]))  # + duplicates + a cut-off last line
    swim_report = IngestReport()
    HistoryStore(tmp / "s1").append(read_swim(corrupt, swim_report), swim_report)
    csv_file = tmp / "skew.csv"
    rows = ["name,submit_time,start_time,finish_time,input_bytes,shuffle_bytes,output_bytes"]
    rows += [f"etl-{d},2026-01-0{d}T02:00:00Z,2026-01-0{d}T02:00:03Z,2026-01-0{d}T02:30:00Z,100,50,10" for d in range(1, 6)]
    rows += ["etl-6,2026-01-06T02:00:00Z,2026-01-06T01:59:58Z,2026-01-06T02:30:00Z,100,50,10"]  # 2 s skew: clamped
    rows += ["etl-7,2026-01-07T02:00:00Z,2026-01-07T02:00:00Z,2026-01-07T01:00:00Z,100,50,10"]  # 1 h skew: skipped
    rows += [rows[1], "etl-8,2026-01-08T02:00:00Z,,,100"]  # a duplicate, a cut-off row
    csv_file.write_text("\n".join(rows) + "\n")
    csv_report = IngestReport()
    HistoryStore(tmp / "s2").append(read_csv(csv_file, RecurringKey(), csv_report), csv_report)
    return {
        name: {"read": r.read, "written": r.written, "duplicates": r.duplicates, "clamped": r.clamped, "skipped": dict(r.skipped),
               "accounted": r.read == r.written + r.duplicates + sum(r.skipped.values())}
        for name, r in (("swim_corrupt", swim_report), ("csv_skew_dup", csv_report))
    }


def estimate_figures(spec: SyntheticSpec) -> dict:
    runs, truth = synthetic_history(spec)
    at, horizon = spec.start + timedelta(days=7 * spec.weeks - 7), timedelta(days=7)  # the last week
    result = estimate([r for r in runs if r.submit_time < at], EstimateOptions(at=at, horizon=horizon))
    actual = [r for r in runs if at <= r.submit_time < at + horizon]
    arrival, size = [], []
    for job in result.workload.jobs:
        same = [r for r in actual if r.recurring_key == job.recurring_key]
        real = min(same, key=lambda r: abs((r.submit_time - at).total_seconds() - job.arrival_s))
        arrival.append(abs((real.submit_time - at).total_seconds() - job.arrival_s))
        size.append(abs(job.input_bytes - truth[real.run_id][0]) / truth[real.run_id][0])
    return {
        "horizon_days": 7, "predicted_jobs": len(result.workload.jobs), "actual_runs": len(actual),
        "arrival_mean_abs_error_s": _r(np.mean(arrival)), "input_error_vs_truth_mean": _r(np.mean(size)),
    }


def main() -> None:
    logging.disable(logging.WARNING)
    started = time.perf_counter()
    base = SyntheticSpec(jobs=20, weeks=4, noise=0.05, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        figures = {
            "bench": "estimator",
            "paper_reported_input_error": 0.065,
            "swim_fb2009": swim_figures(),
            "synthetic": [synthetic_figures(SyntheticSpec(jobs=20, weeks=4, noise=s, seed=0)) for s in (0.02, 0.05, 0.10)],
            "synthetic_trend_and_odd_days": synthetic_figures(SyntheticSpec(jobs=20, weeks=4, noise=0.05, growth_per_day=0.02, outlier_rate=0.05, seed=0)),
            "estimate_last_week": estimate_figures(base),
            "dirty_inputs": dirty_figures(Path(tmp)),
            "wall_s": None,
        }
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    json.dump(figures, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
