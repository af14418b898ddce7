"""Estimator benchmark: prediction error of each predictor and per-period totals, side by side, on one JSON line.

(a) SWIM FB-2009 (bundled): 24 one-hour samples of a Facebook trace concatenated into one "day". It has no
    job names and no real days, so (docs/estimator.md) a "recurring job" is a size class and a "day" one
    one-hour sample, without weekday/weekend split; the periods compared are its hours.
(b) Generated traces with known ground truth (estimator.synthetic), not tuned to (a):
    - recurring: 20 jobs on fixed slots, Normal noise 5 %;
    - trend_odd_days: the same with 2 %/day growth and 5 % odd days (x3);
    - real_like: 20 scheduled and 20 irregular recurring jobs (once a day at a random time), 60 one-off
      jobs a day (1 kB-1 TB), noise 10 %, 1 %/day growth, 3 % odd days.
    Periods compared: days (the last 14).
For each: per predictor the median, byte-weighted and trimmed-mean input error and the median and
byte-weighted shuffle error, the 80 % interval's coverage, instances not scored; auto against last (the
goal: auto <= last on median and byte-weighted input error); per-period totals (jobs, input, shuffle,
output) of `corral estimate` (slots + ad hoc class rates) and of the naive rate (median of the earlier
windows) against the actual; on the generated traces also the errors against the noiseless truth.
(c) Dirty inputs: a corrupted SWIM copy and a skewed/duplicated CSV, every row accounted for; the
    inputs that must be one error (value >= 2^63, empty file, column typo) and a renamed copy.
"""

from __future__ import annotations

import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from corral_yarn.errors import CorralError
from estimator.backtest import AUTO, COVERAGE, backtest, summarize, unscored
from estimator.horizons import horizon_backtest, summarize_horizons
from estimator.identity import RecurringKey
from estimator.predictors import LAST, PREDICTORS, Season, instances
from estimator.records import IngestReport
from estimator.sources.swim import read_swim
from estimator.sources.tabular import read_csv
from estimator.store import HistoryStore
from estimator.synthetic import SyntheticSpec, synthetic_history

SWIM = Path(__file__).resolve().parents[1].parent / "shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv"
SWIM_SEASON = Season(period_s=3600.0, window_s=3600.0, lookback_days=5, split_weekend=False)
NAMES = [*PREDICTORS, AUTO]
GENERATED = {
    "recurring": SyntheticSpec(jobs=20, weeks=4, noise=0.05, seed=0),
    "trend_odd_days": SyntheticSpec(jobs=20, weeks=4, noise=0.05, growth_per_day=0.02, outlier_rate=0.05, seed=0),
    "real_like": SyntheticSpec(jobs=20, irregular_jobs=20, adhoc_per_day=60, weeks=4, noise=0.10, growth_per_day=0.01, outlier_rate=0.03, seed=1),
}


def _r(x: float) -> float | None:
    return None if x != x else round(float(x), 4)  # NaN -> null


def _predictors(points) -> dict:
    s = summarize(points)
    out = {n: {"points": int(s[n]["points"]),
               **{f"input_{m}": _r(s[n][f"input_bytes_{m}"]) for m in ("median_ape", "weighted_ape", "trimmed_mape", "mape")},
               **{f"shuffle_{m}": _r(s[n][f"shuffle_bytes_{m}"]) for m in ("median_ape", "weighted_ape")},
               "interval_coverage": _r(s[n]["interval_coverage"]), "interval_points": int(s[n]["interval_points"])} for n in NAMES}
    out["auto_le_last"] = {m: s[AUTO][f"input_bytes_{m}"] <= s[LAST][f"input_bytes_{m}"] for m in ("median_ape", "weighted_ape")}
    out["coverage_nominal"] = COVERAGE
    return out


def _periods(runs, season: Season, horizon: timedelta, points, last: int | None) -> dict:
    summary = summarize_horizons(horizon_backtest(runs, season, horizon, points, last=last))
    out = {a: {k: _r(v) for k, v in row.items()} for a, row in summary.items()}
    out["estimate_no_worse_than_naive_median"] = {a: row["estimated_median_ape"] <= row["naive_median_ape"] for a, row in summary.items()}
    return out


def _vs_truth(points, runs, truth) -> dict:
    run_id = {(r.recurring_key, r.submit_time): r.run_id for r in runs}
    out = {}
    for n in (*PREDICTORS, AUTO):
        pairs = [(p.predicted[0], truth[run_id[p.key, p.time]][0]) for p in points if p.predictor == n]
        errors = [abs(a - t) / t for a, t in pairs if t > 0]
        out[n] = {"median_ape": _r(statistics.median(errors)) if errors else None,
                  "weighted_ape": _r(sum(abs(a - t) for a, t in pairs) / sum(t for _, t in pairs)) if pairs else None}
    return out


def swim_figures() -> dict:
    runs = read_swim(SWIM, IngestReport())
    by_key = instances(runs)
    points = backtest(by_key, SWIM_SEASON)
    return {"jobs": len(runs), "size_classes": len(by_key), "not_scored": dict(unscored(by_key, SWIM_SEASON)),
            "predictors": _predictors(points), "periods_1h": _periods(runs, SWIM_SEASON, timedelta(hours=1), points, None)}


def generated_figures(spec: SyntheticSpec) -> dict:
    runs, truth = synthetic_history(spec)
    season = Season()
    by_key = instances(runs)
    points = backtest(by_key, season)
    return {"runs": len(runs), "keys": len(by_key), "noise_sigma": spec.noise, "not_scored": dict(unscored(by_key, season)),
            "predictors": _predictors(points), "vs_truth": _vs_truth(points, runs, truth),
            "periods_1d": _periods(runs, season, timedelta(days=1), points, 14)}


def _one_error(read) -> str:
    try:
        read()
    except CorralError as exc:
        return str(exc).split(": ", 1)[-1][:80]
    return "NO ERROR"


def dirty_figures(tmp: Path) -> dict:
    lines = SWIM.read_text().splitlines()
    corrupt = tmp / "corrupt.tsv"
    bad = ["job9999\t1\t1\tNaN-bytes\t0\t0", "garbage line", "job9998\t5\t1\t-100\t0\t0"]
    corrupt.write_text("\n".join(lines[:1000] + bad + lines[:10] + [lines[1000][:7]]))  # + duplicates + a cut-off last line
    swim_report = IngestReport()
    HistoryStore(tmp / "s1").append(read_swim(corrupt, swim_report), swim_report)
    shutil.copy(corrupt, tmp / "renamed copy.tsv")
    copy_report = IngestReport()
    HistoryStore(tmp / "s1").append(read_swim(tmp / "renamed copy.tsv", copy_report), copy_report)
    csv_file = tmp / "skew.csv"
    rows = ["name,submit_time,start_time,finish_time,input_bytes,shuffle_bytes,output_bytes"]
    rows += [f"etl-{d},2026-01-0{d}T02:00:00Z,2026-01-0{d}T02:00:03Z,2026-01-0{d}T02:30:00Z,100,50,10" for d in range(1, 6)]
    rows += ["etl-6,2026-01-06T02:00:00Z,2026-01-06T01:59:58Z,2026-01-06T02:30:00Z,100,50,10"]  # 2 s skew: clamped
    rows += ["etl-7,2026-01-07T02:00:00Z,2026-01-07T02:00:00Z,2026-01-07T01:00:00Z,100,50,10"]  # 1 h skew: skipped
    rows += [rows[1], "etl-8,2026-01-08T02:00:00Z,,,100"]  # a duplicate, a cut-off row
    csv_file.write_text("\n".join(rows) + "\n")
    csv_report = IngestReport()
    HistoryStore(tmp / "s2").append(read_csv(csv_file, RecurringKey(), csv_report), csv_report)
    (tmp / "big.tsv").write_text("job0\t1\t1\t9223372036854775808\t0\t5\n")
    (tmp / "empty.tsv").write_text("")
    (tmp / "typo.csv").write_text("name,submit_time,input_byts\nx,2026-01-05T00:00:00Z,5\n")
    figures = {
        name: {"read": r.read, "written": r.written, "duplicates": r.duplicates, "clamped": r.clamped, "skipped": dict(r.skipped),
               "accounted": r.read == r.written + r.duplicates + sum(r.skipped.values())}
        for name, r in (("swim_corrupt", swim_report), ("swim_renamed_copy", copy_report), ("csv_skew_dup", csv_report))
    }
    figures["errors"] = {
        "value_2_63": _one_error(lambda: read_swim(tmp / "big.tsv", IngestReport())),
        "empty_file": _one_error(lambda: read_swim(tmp / "empty.tsv", IngestReport())),
        "column_typo": _one_error(lambda: read_csv(tmp / "typo.csv", RecurringKey(), IngestReport())),
    }
    return figures


def main() -> None:
    logging.disable(logging.WARNING)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        figures = {
            "bench": "estimator",
            "paper_reported_input_error": 0.065,
            "swim_fb2009": swim_figures(),
            "generated": {name: generated_figures(spec) for name, spec in GENERATED.items()},
            "dirty_inputs": dirty_figures(Path(tmp)),
            "wall_s": None,
        }
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    json.dump(figures, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
