"""The backtest report: error per job over time and overall error per predictor (HTML + PNG + CSV),
built from the shared report blocks of ``corral_yarn.report``."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from corral_yarn.report.charts import Panel, comparison_png
from corral_yarn.report.html import figure, fmt_percent, page, paragraph, section, table
from estimator.backtest import AUTO, Point, choose
from estimator.predictors import PREDICTORS, QUANTITIES

PAPER_ERROR = 0.065  # thesis §2.2: 6.5 % average input-size error over twenty Cosmos jobs
MAX_JOBS_PLOTTED = 12
NAMES = [*PREDICTORS, AUTO]


def errors_over_time_png(points: Sequence[Point]) -> bytes:
    """One panel per predictor; a line per job (the MAX_JOBS_PLOTTED with most points) of its input-size error."""
    by_job: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        by_job[p.key].append(p)
    jobs = sorted(by_job, key=lambda k: -len(by_job[k]))[:MAX_JOBS_PLOTTED]
    fig = Figure(figsize=(12.0, 2.6 * len(NAMES)), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(NAMES), 1, sharex=True, sharey=True)
    for ax, name in zip(axes, NAMES, strict=True):
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
    writer.writerow(["recurring_key", "time", "predictor", "matches", *(f"actual_{q}" for q in QUANTITIES), *(f"predicted_{q}" for q in QUANTITIES), "arrival_error_s"])
    for p in points:
        writer.writerow([p.key, p.time.isoformat(), p.predictor, p.matches, *p.actual, *p.predicted, f"{p.arrival_error_s:.1f}"])
    return out.getvalue().encode()


def _job_rows(points: Sequence[Point]) -> list[list[object]]:
    by_job: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        by_job[p.key].append(p)
    rows = []
    for job, mine in sorted(by_job.items()):
        errors = {n: [e for p in mine if p.predictor == n and (e := p.error()) is not None] for n in NAMES}
        mean = {n: float(np.mean(v)) if v else None for n, v in errors.items()}
        rows.append([job, len(errors["paper"]), *(fmt_percent(mean[n]) for n in NAMES), choose([p for p in mine if p.predictor != AUTO])])
    return rows


def render(points: Sequence[Point], summary: dict[str, dict[str, float]], subtitle: str) -> dict[str, bytes]:
    """The report files: index.html, overall_error.png, error_over_time.png, points.csv."""
    overall = comparison_png([Panel(f"{q} mean error", NAMES, [summary[n][f"{q}_mape"] for n in NAMES], fmt_percent) for q in QUANTITIES])
    over_time = errors_over_time_png(points)
    overall_rows = [
        [n, int(summary[n]["points"]), *(fmt_percent(summary[n][f"{q}_{m}"]) for q in QUANTITIES for m in ("mape", "median_ape")), f"{summary[n]['arrival_mean_abs_error_s']:.0f}"]
        for n in NAMES
    ]
    headers = ["predictor", "points", *(f"{q.removesuffix('_bytes')} {m}" for q in QUANTITIES for m in ("mean", "median")), "arrival |err| s"]
    html = page(
        "Backtest of the recurring-job predictors",
        subtitle,
        [
            section(
                "Overall error per predictor",
                paragraph("Relative error |predicted - actual| / actual of each instance predicted from the instances on previous days only; "
                          "auto picks per job the predictor with the lowest error so far. The thesis reports 6.5 % average input-size error (§2.2)."),
                table(headers, overall_rows, numeric=range(1, len(headers))),
                figure(overall, "overall_error.png", "mean relative error per predictor"),
            ),
            section(
                "Error per job",
                table(["recurring job", "points", *NAMES, "chosen"], _job_rows(points), numeric=range(1, 6)),
                figure(over_time, "error_over_time.png", f"input-size error over time (the {MAX_JOBS_PLOTTED} jobs with most points)"),
            ),
        ],
    )
    return {"index.html": html.encode(), "overall_error.png": overall, "error_over_time.png": over_time, "points.csv": points_csv(points)}
