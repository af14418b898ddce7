"""The backtest of whole periods: for each period [s, s + H) of the history, what ``corral estimate`` would
have predicted from the runs before s (recurring slots and the size classes' arrival rates), in total,
against what ran: job count and input, shuffle and output bytes; next to the naive rate, the median of
the same totals over the earlier windows (estimator/adhoc.py). Single jobs may be unpredictable where
the period's load is not; the planner needs the load right.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from estimator.adhoc import earlier_windows, in_window, totals
from estimator.backtest import AUTO, Point
from estimator.errors import EstimateError
from estimator.estimate import EstimateOptions, estimate
from estimator.predictors import QUANTITIES, Season, instances
from estimator.records import JobRun

AGGREGATES = ("jobs", *QUANTITIES)
WITHIN = 0.2  # "within ±20 %" of the actual


@dataclass(frozen=True)
class Horizon:
    """One period's totals: actual, estimated (``corral estimate``) and naive (median of earlier windows)."""

    start: datetime
    actual: dict[str, float]
    estimated: dict[str, float]
    naive: dict[str, float]


def _estimated(runs: Sequence[JobRun], start: datetime, horizon: timedelta, season: Season, points: dict[str, list[Point]], predictor: str) -> dict[str, float]:
    try:
        result = estimate(runs, EstimateOptions(at=start, horizon=horizon, predictor=predictor, season=season, adhoc=True), points=points)
    except EstimateError:  # nothing predicted at all
        return dict.fromkeys(AGGREGATES, 0.0)
    return {"jobs": float(len(result.details)), **{q: float(sum(d["predicted"][q] for d in result.details)) for q in QUANTITIES}}


def horizon_backtest(runs: Sequence[JobRun], season: Season, horizon: timedelta, points: Sequence[Point],
                     last: int | None = None, predictor: str = AUTO) -> list[Horizon]:
    """The periods of length ``horizon`` starting at each day of the history that has ``min_history``
    earlier windows with data before it and ends by the end of the history's last day (the ``last`` latest)."""
    items = sorted((i for v in instances(runs).values() for i in v), key=lambda i: i.time)
    if not items:
        return []
    times = [i.time for i in items]
    by_key: dict[str, list[Point]] = {}
    for p in points:
        by_key.setdefault(p.key, []).append(p)
    end = season.start(season.day(items[-1].time) + 1)
    starts = [season.start(d) for d in range(season.day(items[0].time) + 1, season.day(items[-1].time) + 1)]
    starts = [s for s in starts if s + horizon <= end and len(earlier_windows(s, horizon, season, items[0].time)) >= season.min_history]
    out = []
    for s in starts[-last:] if last else starts:
        earlier = [totals(in_window(items, times, w)) for w in earlier_windows(s, horizon, season, items[0].time)]
        naive = {a: statistics.median(t[a] for t in earlier) for a in AGGREGATES}
        actual = totals(in_window(items, times, (s, s + horizon)))
        out.append(Horizon(s, actual, _estimated(runs, s, horizon, season, by_key, predictor), naive))
    return out


def summarize_horizons(horizons: Sequence[Horizon]) -> dict[str, dict[str, float]]:
    """Per aggregate and per model (estimated, naive): the median |relative error| over the periods, the
    error of the sum (sum |error| / sum actual), the bias (sum predicted / sum actual - 1) and the share of
    periods within ±20 %; periods with an actual of 0 have no relative error and are counted apart."""
    out: dict[str, dict[str, float]] = {}
    for a in AGGREGATES:
        row: dict[str, float] = {"periods": float(len(horizons))}
        scored = [h for h in horizons if h.actual[a] > 0]
        row["zero_actual_periods"] = float(len(horizons) - len(scored))
        total = sum(h.actual[a] for h in scored)
        for model in ("estimated", "naive"):
            errors = [abs(getattr(h, model)[a] - h.actual[a]) / h.actual[a] for h in scored]
            row[f"{model}_median_ape"] = statistics.median(errors) if errors else float("nan")
            row[f"{model}_weighted_ape"] = sum(abs(getattr(h, model)[a] - h.actual[a]) for h in scored) / total if total else float("nan")
            row[f"{model}_bias"] = sum(getattr(h, model)[a] for h in scored) / total - 1.0 if total else float("nan")
            row[f"{model}_within_20pct"] = sum(e <= WITHIN for e in errors) / len(errors) if errors else float("nan")
        out[a] = row
    return out
