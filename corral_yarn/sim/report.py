"""The simulation report: CDFs of job completion times (like thesis Figs. 4.12 and 4.19), summary
tables and reductions against a baseline, as a self-contained HTML page plus PNGs."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from corral_yarn.report.html import figure, fmt_bytes, fmt_percent, fmt_seconds, page, paragraph, section, table
from corral_yarn.sim.experiments import reduction
from corral_yarn.sim.metrics import SimResult

CDF_FILE = "completion_cdf.png"
SLOWDOWN_FILE = "slowdown_cdf.png"


def cdf_png(series: dict[str, Sequence[float]], xlabel: str, title: str, log_x: bool = False) -> bytes:
    """Cumulative fraction of jobs against a per-job value, one line per run."""
    fig = Figure(figsize=(8.0, 4.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for label, values in series.items():
        x = np.sort(np.asarray(values, dtype=float))
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("cumulative fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def render(results: list[SimResult], title: str = "Simulation") -> dict[str, bytes]:
    """The report files: index.html and the CDF PNGs. The first result is the baseline."""
    base = results[0].summary
    completion = cdf_png({r.label: r.completions() for r in results}, "job completion time (s)", "Job completion times", log_x=True)
    slowdown = cdf_png({r.label: [j.slowdown for j in r.jobs] for r in results}, "slowdown (completion / MRCute best time alone)", "Slowdowns", log_x=True)
    rows = [
        (r.label, fmt_seconds(s.makespan_s), fmt_seconds(s.mean_completion_s), fmt_seconds(s.median_completion_s),
         fmt_seconds(s.p90_completion_s), f"{s.median_slowdown:.2f}", fmt_bytes(s.cross_rack_bytes), f"{s.compute_hours:.1f}",
         f"{s.rack_data_cov:.3f}", fmt_percent(s.local_map_fraction))
        for r in results for s in [r.summary]
    ]
    gains = [
        (r.label, fmt_percent(reduction(s.makespan_s, base.makespan_s)), fmt_percent(reduction(s.mean_completion_s, base.mean_completion_s)),
         fmt_percent(reduction(s.median_completion_s, base.median_completion_s)), fmt_percent(reduction(s.p90_completion_s, base.p90_completion_s)),
         fmt_percent(reduction(s.cross_rack_bytes, base.cross_rack_bytes)), fmt_percent(reduction(s.compute_hours, base.compute_hours)))
        for r in results[1:] for s in [r.summary]
    ]
    first = results[0]
    html = page(title, f"{len(first.jobs)} jobs on {first.cluster_name}, {first.scenario} scenario, seed {first.seed}, "
                       f"background {first.background_share:.0%} of the core", [
        section("Job completion times", figure(completion, CDF_FILE, "Cumulative fraction of job completion times (cf. thesis Figs. 4.12, 4.19)"),
                figure(slowdown, SLOWDOWN_FILE, "Cumulative fraction of slowdowns")),
        section("Summary", table(["run", "makespan", "mean", "median", "p90", "median slowdown", "cross-rack bytes",
                                  "compute hours", "rack data CoV", "local maps"], rows, numeric=range(1, 10))),
        section(f"Reduction against {first.label}", table(["run", "makespan", "mean", "median", "p90", "cross-rack bytes", "compute hours"],
                                                          gains, numeric=range(1, 7)),
                paragraph("1 - run / baseline: positive is better than the baseline.")),
    ])
    return {"index.html": html.encode(), CDF_FILE: completion, SLOWDOWN_FILE: slowdown}

