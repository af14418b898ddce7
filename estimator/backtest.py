"""Rolling backtest of the predictors: every instance of every recurring job is predicted from the
instances before its day only, by each predictor, and by ``auto``, which picks per job the predictor
with the lowest byte-weighted input-size error on that job's points of earlier days (``last`` until
it has MIN_POINTS_TO_CHOOSE of them). Each point also carries a prediction interval from the job's
earlier residuals (split-conformal quantiles of actual / predicted), so its coverage is measured.

Errors are summarised robustly (a trace mixes 1-byte and terabyte runs): median absolute percentage
error, byte-weighted error (sum |error| / sum actual), a trimmed mean, and per-job medians. The thesis
(§2.2) reports 6.5 % average input-size error over twenty Cosmos jobs.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from scipy.stats import trim_mean
from tqdm import tqdm

from estimator.predictors import LAST, PREDICTORS, QUANTITIES, Context, History, Instance, Season, predict, predict_offset

AUTO = "auto"
DEFAULT_PREDICTOR = LAST
TIE_PREDICTOR = "paper"
MIN_POINTS_TO_CHOOSE = 3
COVERAGE = 0.8
TRIM = 0.1  # trimmed mean: 10 % cut at each end
FIRST_RUN = "first run of its job (nothing earlier to predict from)"


@dataclass(frozen=True)
class Point:
    """One backtest prediction: an instance of ``key`` at ``time`` predicted by ``predictor``; ``interval``
    is its input-size prediction interval from earlier residuals (None with too few of them)."""

    key: str
    time: datetime
    predictor: str
    matches: int
    actual: tuple[float, float, float]
    predicted: tuple[float, float, float]
    arrival_error_s: float
    interval: tuple[float, float] | None = None

    def error(self, quantity: str = "input_bytes") -> float | None:
        """|predicted - actual| / actual, or None when the actual is 0 (no relative error)."""
        q = QUANTITIES.index(quantity)
        return abs(self.predicted[q] - self.actual[q]) / self.actual[q] if self.actual[q] > 0 else None

    @property
    def covered(self) -> bool | None:
        return None if self.interval is None else self.interval[0] <= self.actual[0] <= self.interval[1]


def conformal(ratios: Sequence[float], coverage: float) -> tuple[float, float] | None:
    """The interval of actual / predicted from n earlier ratios: their quantiles at the plotting positions
    (n+1)(1-c)/2 and (n+1)(1+c)/2 (numpy's "weibull" method, linear between order statistics). For
    exchangeable ratios the order statistic at position p holds the next one below it with probability
    p / (n+1), so the interval's expected coverage is c (split-conformal prediction, without its
    rounding up, which over-covers a short history by up to 2 / (n+1)); None while a position is outside
    [1, n] (n < 2 / (1-c) - 1: 9 ratios for 80 %)."""
    n = len(ratios)
    if (n + 1) * (1 - coverage) / 2 < 1 - 1e-9:
        return None
    lo, hi = np.quantile(np.asarray(ratios, dtype=np.float64), [(1 - coverage) / 2, (1 + coverage) / 2], method="weibull")
    return float(lo), float(hi)


class _Record:
    """One job's settled backtest (points of days before the one being predicted): errors and residuals."""

    def __init__(self) -> None:
        self.abs_error: dict[str, float] = defaultdict(float)
        self.ratios: dict[str, list[float]] = defaultdict(list)
        self.points = 0

    def add(self, points: Sequence[Point]) -> None:
        self.points += 1
        for p in points:
            self.abs_error[p.predictor] += abs(p.predicted[0] - p.actual[0])
            if p.predicted[0] > 0:
                self.ratios[p.predictor].append(p.actual[0] / p.predicted[0])

    def best(self) -> str:
        """Lowest byte-weighted input error (the thesis's ``paper`` on an exact tie); ``last``, the naive
        predictor, until MIN_POINTS_TO_CHOOSE points."""
        if self.points < MIN_POINTS_TO_CHOOSE:
            return DEFAULT_PREDICTOR
        return min(PREDICTORS, key=lambda name: (self.abs_error[name], name != TIE_PREDICTOR))

    def interval(self, predictor: str, value: float, coverage: float) -> tuple[float, float] | None:
        ratio = conformal(self.ratios[predictor], coverage)
        return (value * ratio[0], value * ratio[1]) if ratio and value > 0 else None


def choose(points: Sequence[Point]) -> str:
    """The predictor with the lowest byte-weighted input error on ``points`` (one job's), ``paper`` on a
    tie, ``last`` with fewer than MIN_POINTS_TO_CHOOSE points."""
    record = _Record()
    by_time: dict[datetime, list[Point]] = defaultdict(list)
    for p in points:
        if p.predictor != AUTO:
            by_time[p.time].append(p)
    for group in by_time.values():
        record.add(group)
    return record.best()


def context(history: History, items: Sequence[Instance], times: Sequence[datetime], target: Instance) -> Context:
    """The context of predicting ``target`` from the job's instances of earlier days."""
    season = history.season
    day = season.day(target.time)
    cut = bisect.bisect_left(times, season.start(day))
    return Context(history.matches(day, season.offset(target.time)), items[max(0, cut - season.lookback_days):cut], day, season)


def _points(key: str, target: Instance, ctx: Context, record: _Record, coverage: float) -> list[Point]:
    actual = tuple(getattr(target, q) for q in QUANTITIES)
    offset = ctx.season.offset(target.time)
    out = []
    for name in PREDICTORS:
        predicted = tuple(predict(ctx, name, q) for q in QUANTITIES)
        out.append(Point(key, target.time, name, len(ctx.matched), actual, predicted,
                         abs(predict_offset(ctx, name) - offset), record.interval(name, predicted[0], coverage)))
    return out


def backtest_job(key: str, items: Sequence[Instance], season: Season, coverage: float = COVERAGE) -> list[Point]:
    """The backtest points of one recurring job, ``auto`` included, in time order: every instance with an
    instance on an earlier day. Choice and intervals use only points of earlier days."""
    history, times = History(items, season), [i.time for i in items]
    record, pending, points = _Record(), [], []
    for target in items:
        ctx = context(history, items, times, target)
        while pending and season.day(pending[0][0].time) < ctx.day:  # settle the points of earlier days
            record.add(pending.pop(0))
        if not ctx.recent:
            continue
        new = _points(key, target, ctx, record, coverage)
        chosen = next(p for p in new if p.predictor == record.best())
        auto = replace(chosen, predictor=AUTO, interval=record.interval(AUTO, chosen.predicted[0], coverage))  # auto's own residuals
        points += [*new, auto]
        pending.append([*new, auto])
    return points


def backtest(by_key: dict[str, list[Instance]], season: Season, coverage: float = COVERAGE) -> list[Point]:
    """The backtest points of every recurring job."""
    return [p for key in tqdm(sorted(by_key), desc="backtest", unit="job", leave=False) for p in backtest_job(key, by_key[key], season, coverage)]


def unscored(by_key: dict[str, list[Instance]], season: Season) -> Counter[str]:
    """Instances the backtest cannot score, by reason (today: the first day a job is seen)."""
    out: Counter[str] = Counter()
    for items in by_key.values():
        first = season.day(items[0].time)
        out[FIRST_RUN] += sum(1 for i in items if season.day(i.time) == first)
    return out


def _quantity_errors(mine: Sequence[Point], q: str) -> dict[str, float]:
    i = QUANTITIES.index(q)
    errors = np.array([e for p in mine if (e := p.error(q)) is not None])
    actual = sum(p.actual[i] for p in mine)
    nan = float("nan")
    return {
        f"{q}_mape": float(errors.mean()) if errors.size else nan,
        f"{q}_median_ape": float(np.median(errors)) if errors.size else nan,
        f"{q}_trimmed_mape": float(trim_mean(errors, TRIM)) if errors.size else nan,
        f"{q}_weighted_ape": sum(abs(p.predicted[i] - p.actual[i]) for p in mine) / actual if actual else nan,
        f"{q}_zero_actual": float(len(mine) - errors.size),
    }


def summarize(points: Sequence[Point]) -> dict[str, dict[str, float]]:
    """Per predictor: points; per quantity the mean, median, trimmed-mean and byte-weighted relative error
    and the points with a zero actual (no relative error); the quartiles over jobs of each job's median
    input error; the input interval's coverage and the points that had one; the mean arrival error (s)."""
    out: dict[str, dict[str, float]] = {}
    for name in [*PREDICTORS, AUTO]:
        mine = [p for p in points if p.predictor == name]
        row: dict[str, float] = {"points": len(mine)}
        for q in QUANTITIES:
            row.update(_quantity_errors(mine, q))
        per_job: dict[str, list[float]] = defaultdict(list)
        for p in mine:
            if (e := p.error()) is not None:
                per_job[p.key].append(e)
        medians = [float(np.median(v)) for v in per_job.values()]
        row.update(zip(("job_median_ape_p25", "job_median_ape_p50", "job_median_ape_p75"),
                       (float(x) for x in np.quantile(medians, [0.25, 0.5, 0.75])) if medians else [float("nan")] * 3, strict=True))
        covered = [c for p in mine if (c := p.covered) is not None]
        row["interval_points"] = len(covered)
        row["interval_coverage"] = float(np.mean(covered)) if covered else float("nan")
        row["arrival_mean_abs_error_s"] = float(np.mean([p.arrival_error_s for p in mine])) if mine else float("nan")
        out[name] = row
    return out
