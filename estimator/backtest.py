"""Rolling backtest of the predictors: every instance of every recurring job is predicted from the
instances before its day only, by each predictor, and by ``auto``, which picks per job the predictor
with the lowest mean input-size error on that job's earlier backtest points (thesis §2.2 measures
input-size error; 6.5 % on average over twenty Cosmos jobs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from tqdm import tqdm

from estimator.predictors import PREDICTORS, QUANTITIES, History, Instance, Season, predict, predict_offset

AUTO = "auto"
DEFAULT_PREDICTOR = "paper"
MIN_POINTS_TO_CHOOSE = 3


@dataclass(frozen=True)
class Point:
    """One backtest prediction: an instance of ``key`` at ``time`` predicted by ``predictor``."""

    key: str
    time: datetime
    predictor: str
    matches: int
    actual: tuple[float, float, float]
    predicted: tuple[float, float, float]
    arrival_error_s: float

    def error(self, quantity: str = "input_bytes") -> float | None:
        """|predicted - actual| / actual, or None when the actual is 0 (no relative error)."""
        q = QUANTITIES.index(quantity)
        return abs(self.predicted[q] - self.actual[q]) / self.actual[q] if self.actual[q] > 0 else None


def _best(errors: dict[str, list[float]], counts: dict[str, int]) -> str:
    if any(counts.get(name, 0) < MIN_POINTS_TO_CHOOSE for name in PREDICTORS):
        return DEFAULT_PREDICTOR

    def mean(name: str) -> float:
        return float(np.mean(errors[name])) if errors.get(name) else float("inf")

    return min(PREDICTORS, key=lambda name: (mean(name), name != DEFAULT_PREDICTOR))


def choose(points: Sequence[Point]) -> str:
    """The predictor with the lowest mean input-size error on ``points`` (one job's), ``paper`` on a tie
    or with fewer than MIN_POINTS_TO_CHOOSE points each."""
    errors: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for p in points:
        counts[p.predictor] += 1
        if (e := p.error()) is not None:
            errors[p.predictor].append(e)
    return _best(errors, counts)


def _points(key: str, target: Instance, matched: Sequence[Instance], season: Season) -> list[Point]:
    actual = tuple(getattr(target, q) for q in QUANTITIES)
    offset = season.offset(target.time)
    return [
        Point(
            key, target.time, name, len(matched), actual,
            tuple(predict(matched, name, q) for q in QUANTITIES),
            abs(predict_offset(matched, name, season) - offset),
        )
        for name in PREDICTORS
    ]


def backtest_job(key: str, items: Sequence[Instance], season: Season) -> list[Point]:
    """The backtest points of one recurring job, ``auto`` included, in time order."""
    history = History(items, season)
    points: list[Point] = []
    errors: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for target in items:
        matched = history.matches(season.day(target.time), season.offset(target.time))
        if len(matched) < season.min_history:
            continue
        new = _points(key, target, matched, season)
        chosen = _best(errors, counts)  # from the points before this instance only: an honest rolling choice
        auto = next(p for p in new if p.predictor == chosen)
        points += new + [Point(key, auto.time, AUTO, auto.matches, auto.actual, auto.predicted, auto.arrival_error_s)]
        for p in new:
            counts[p.predictor] += 1
            if (e := p.error()) is not None:
                errors[p.predictor].append(e)
    return points


def backtest(by_key: dict[str, list[Instance]], season: Season) -> list[Point]:
    """The backtest points of every recurring job."""
    return [p for key in tqdm(sorted(by_key), desc="backtest", unit="job", leave=False) for p in backtest_job(key, by_key[key], season)]


def summarize(points: Sequence[Point]) -> dict[str, dict[str, float]]:
    """Per predictor: points, and per quantity the mean, median and byte-weighted relative error;
    the mean arrival (time of day) error in seconds."""
    out: dict[str, dict[str, float]] = {}
    for name in [*PREDICTORS, AUTO]:
        mine = [p for p in points if p.predictor == name]
        row: dict[str, float] = {"points": len(mine)}
        for q in QUANTITIES:
            i = QUANTITIES.index(q)
            errors = np.array([e for p in mine if (e := p.error(q)) is not None])
            actual = sum(p.actual[i] for p in mine)
            row[f"{q}_mape"] = float(errors.mean()) if errors.size else float("nan")
            row[f"{q}_median_ape"] = float(np.median(errors)) if errors.size else float("nan")
            row[f"{q}_weighted_ape"] = sum(abs(p.predicted[i] - p.actual[i]) for p in mine) / actual if actual else float("nan")
        row["arrival_mean_abs_error_s"] = float(np.mean([p.arrival_error_s for p in mine])) if mine else float("nan")
        out[name] = row
    return out


def ratio_interval(points: Sequence[Point], quantity: str, coverage: float) -> tuple[float, float] | None:
    """The central ``coverage`` interval of actual / predicted over ``points``, or None if too few."""
    i = QUANTITIES.index(quantity)
    ratios = [p.actual[i] / p.predicted[i] for p in points if p.predicted[i] > 0]
    if len(ratios) < 5:
        return None
    tail = (1.0 - coverage) / 2.0
    lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
    return float(lo), float(hi)
