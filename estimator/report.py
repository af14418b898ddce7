"""The backtest report: robust errors per predictor, interval coverage, unscored instances, per-period
totals against the naive rate, and error per job over time (HTML + PNG + CSV), built from the shared
report blocks of ``corral_yarn.report``."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from corral_yarn.report.charts import Panel, comparison_png
from corral_yarn.report.html import figure, fmt_bytes, fmt_percent, page, paragraph, section, table
from estimator.backtest import AUTO, COVERAGE, TRIM, Point, choose
from estimator.horizons import AGGREGATES, Horizon
from estimator.predictors import LAST, PREDICTORS, QUANTITIES

PAPER_ERROR = 0.065  # thesis §2.2: 6.5 % average input-size error over twenty Cosmos jobs
MAX_JOBS_PLOTTED = 12
NAMES = [*PREDICTORS, AUTO]
PLOTTED = ["paper", LAST, AUTO]  # the thesis's, the naive one and the per-job choice


def errors_over_time_png(points: Sequence[Point]) -> bytes:
    """One panel per predictor; a line per job (the MAX_JOBS_PLOTTED with most points) of its input-size error."""
    by_job: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        by_job[p.key].append(p)
    jobs = sorted(by_job, key=lambda k: -len(by_job[k]))[:MAX_JOBS_PLOTTED]
    fig = Figure(figsize=(12.0, 2.6 * len(PLOTTED)), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(PLOTTED), 1, sharex=True, sharey=True)
    for ax, name in zip(axes, PLOTTED, strict=True):
        for job in jobs:
            mine = [(p.time, e) for p in by_job[job] if p.predictor == name and (e := p.error()) is not None]
            if mine:
                ax.plot([t for t, _ in mine], [e for _, e in mine], marker=".", linewidth=0.8, markersize=3, label=job)
        ax.axhline(PAPER_ERROR, color="black", linestyle="--", linewidth=1.0, label="thesis 6.5 %")
        ax.set_title(f"{name}: input-size error per job", fontsize=10)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(color="#ddd", linewidth=0.6)
    axes[0].legend(fontsize=7, ncol=4, loc="upper right")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def points_csv(points: Sequence[Point]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["recurring_key", "time", "predictor", "matches", *(f"actual_{q}" for q in QUANTITIES), *(f"predicted_{q}" for q in QUANTITIES),
                     "arrival_error_s", "input_interval_low", "input_interval_high"])
    for p in points:
        writer.writerow([p.key, p.time.isoformat(), p.predictor, p.matches, *p.actual, *p.predicted, f"{p.arrival_error_s:.1f}",
                         *(p.interval or ("", ""))])
    return out.getvalue().encode()


def _job_rows(points: Sequence[Point]) -> list[list[object]]:
    by_job: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        by_job[p.key].append(p)
    rows = []
    for job, mine in sorted(by_job.items()):
        errors = {n: [e for p in mine if p.predictor == n and (e := p.error()) is not None] for n in NAMES}
        median = {n: float(np.median(v)) if v else None for n, v in errors.items()}
        rows.append([job, len(errors[LAST]), *(fmt_percent(median[n]) for n in NAMES), choose([p for p in mine if p.predictor != AUTO])])
    return rows


def _overall_rows(summary: dict[str, dict[str, float]]) -> tuple[list[str], list[list[object]]]:
    headers = ["predictor", "points", "input median", "input byte-weighted", "input trimmed mean", "input mean",
               "shuffle median", "shuffle byte-weighted", "output median", "output byte-weighted",
               "per-job median p25 / p50 / p75", f"{COVERAGE:.0%} interval coverage (points)", "arrival |err| s"]
    rows = []
    for n in NAMES:
        r = summary[n]
        rows.append([n, int(r["points"]), *(fmt_percent(r[f"input_bytes_{m}"]) for m in ("median_ape", "weighted_ape", "trimmed_mape", "mape")),
                     *(fmt_percent(r[f"{q}_{m}"]) for q in ("shuffle_bytes", "output_bytes") for m in ("median_ape", "weighted_ape")),
                     " / ".join(fmt_percent(r[f"job_median_ape_p{k}"]) for k in (25, 50, 75)),
                     f"{fmt_percent(r['interval_coverage'])} ({int(r['interval_points'])})", f"{r['arrival_mean_abs_error_s']:.0f}"])
    return headers, rows


def _fmt(aggregate: str, value: float) -> str:
    return f"{value:.0f}" if aggregate == "jobs" else fmt_bytes(value)


def _horizon_section(horizons: Sequence[Horizon], summary: dict[str, dict[str, float]]) -> str:
    if not horizons:
        return section("Per-period totals", paragraph("No period has enough earlier windows to compare with."))
    headers = ["total", "periods (actual 0)", *(f"{m} {s}" for m in ("estimate", "naive rate") for s in ("median |err|", "sum error", "bias", "within ±20 %"))]
    rows = [[a, f"{int(r['periods'])} ({int(r['zero_actual_periods'])})",
             *(fmt_percent(r[f"{m}_{s}"]) for m in ("estimated", "naive") for s in ("median_ape", "weighted_ape", "bias", "within_20pct"))]
            for a, r in summary.items()]
    per = [[h.start.isoformat(), *(f"{_fmt(a, h.actual[a])} / {_fmt(a, h.estimated[a])} / {_fmt(a, h.naive[a])}" for a in AGGREGATES)] for h in horizons]
    return section(
        "Per-period totals: corral estimate against the naive rate",
        paragraph("For each period, the totals of what 'corral estimate' predicts from the runs before it (recurring slots plus the size "
                  "classes' arrival rates) and of the naive rate (the median of the same totals over the earlier windows) against the "
                  "actual. Sum error = sum |error| / sum actual; bias = sum predicted / sum actual - 1."),
        table(headers, rows, numeric=range(1, len(headers))),
        table(["period start", *(f"{a}: actual / estimate / naive" for a in AGGREGATES)], per, numeric=range(1, 1 + len(AGGREGATES))),
    )


def render(points: Sequence[Point], summary: dict[str, dict[str, float]], subtitle: str, unscored: Counter[str] | None = None,
           horizons: Sequence[Horizon] = (), horizon_summary: dict[str, dict[str, float]] | None = None) -> dict[str, bytes]:
    """The report files: index.html, overall_error.png, error_over_time.png, points.csv."""
    overall = comparison_png([Panel("input median error", NAMES, [summary[n]["input_bytes_median_ape"] for n in NAMES], fmt_percent),
                              Panel("input byte-weighted error", NAMES, [summary[n]["input_bytes_weighted_ape"] for n in NAMES], fmt_percent),
                              Panel("shuffle byte-weighted error", NAMES, [summary[n]["shuffle_bytes_weighted_ape"] for n in NAMES], fmt_percent)])
    over_time = errors_over_time_png(points)
    headers, overall_rows = _overall_rows(summary)
    lost = ", ".join(f"{n} {reason}" for reason, n in sorted((unscored or Counter()).items())) or "none"
    html = page(
        "Backtest of the recurring-job predictors",
        subtitle,
        [
            section(
                "Error per predictor",
                paragraph("Relative error |predicted - actual| / actual of each instance predicted from the instances of earlier days only. "
                          "Median: robust to the 1-byte runs next to terabyte ones; byte-weighted: sum |error| / sum actual, what the "
                          f"planner's load sees; trimmed mean: {TRIM:.0%} cut at each end. auto picks per job the predictor with the lowest "
                          "byte-weighted error on earlier days (last until 3 points). Intervals: split-conformal from the job's earlier "
                          f"residuals, nominal {COVERAGE:.0%}. The thesis reports 6.5 % average input-size error (§2.2)."),
                paragraph(f"Instances not scored: {lost}. Points with an actual of 0 have no relative error "
                          f"(input: {int(summary[LAST]['input_bytes_zero_actual'])} per predictor)."),
                table(headers, overall_rows, numeric=range(1, len(headers))),
                figure(overall, "overall_error.png", "median and byte-weighted error per predictor"),
            ),
            _horizon_section(horizons, horizon_summary or {}),
            section(
                "Error per job (median input error)",
                table(["recurring job", "points", *NAMES, "chosen"], _job_rows(points), numeric=range(1, 2 + len(NAMES))),
                figure(over_time, "error_over_time.png", f"input-size error over time (the {MAX_JOBS_PLOTTED} jobs with most points)"),
            ),
        ],
    )
    return {"index.html": html.encode(), "overall_error.png": overall, "error_over_time.png": over_time, "points.csv": points_csv(points)}
