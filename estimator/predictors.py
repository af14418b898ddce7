"""Predictors of the next instances of a recurring job (thesis §2.2), and the naive and robust ones
that a real trace needs beside them.

The paper predicts a job submitted at a time of day (e.g. 2 PM) by averaging the same job at the same
time of day over several previous days, weekdays and weekends apart. The "seasonal" predictors share
that matching — the same job, nearest to the same time of day within ``window_s``, on each of the
previous ``lookback_days`` days of the same day type — and differ in how they aggregate the matches:

* ``paper``:  the mean of the matches (thesis §2.2);
* ``median``: their median, robust to one odd day;
* ``ses``:    simple exponential smoothing over the matches, oldest to newest (follows a trend);
* ``seasonal_last``: the newest match (yesterday's run at this time);
* ``trend``:  a Huber-weighted linear trend of the matches over their days, extrapolated to the
  target's day (a growing input, robust to an odd day; needs 3 matches).

Two more ignore the time of day and use the job's latest instances before the cutoff:

* ``last``: the last instance's value, the naive predictor a real trace must be compared with;
* ``median_last``: the median of the last ``lookback_days`` instances.

A seasonal predictor with fewer than ``min_history`` matches (or ``trend`` with fewer than 3)
predicts as ``last`` does, so every instance with an earlier one is predicted by all of them.

A "day" is ``period_s`` long (86,400 s; the SWIM benchmark uses one-hour pseudo-days) and starts at
UTC midnight; weekday/weekend is the UTC calendar day's.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime


from corral_yarn.errors import InputError
from estimator.records import SUCCEEDED, JobRun

QUANTITIES = ("input_bytes", "shuffle_bytes", "output_bytes")


@dataclass(frozen=True)
class Instance:
    """One successful, sized, non-profiling run of a recurring job."""

    time: datetime
    input_bytes: float
    shuffle_bytes: float
    output_bytes: float
    run: JobRun


def instances(runs: Sequence[JobRun]) -> dict[str, list[Instance]]:
    """The instances of each recurring job, oldest first (failed, unsized and profiling runs left out)."""
    by_key: dict[str, list[Instance]] = defaultdict(list)
    for r in sorted(runs, key=lambda r: r.submit_time):
        if r.outcome == SUCCEEDED and r.has_sizes and not r.is_profile:
            by_key[r.recurring_key].append(Instance(r.submit_time, float(r.input_bytes), float(r.shuffle_bytes), float(r.output_bytes), r))
    return dict(by_key)


@dataclass(frozen=True)
class Season:
    """What "the same time on previous days" means."""

    period_s: float = 86_400.0
    window_s: float = 1_800.0
    lookback_days: int = 5
    split_weekend: bool = True
    min_history: int = 2

    def __post_init__(self) -> None:
        if self.period_s <= 0 or self.window_s <= 0:
            raise InputError(f"period and window must be positive (got {self.period_s} s, {self.window_s} s)", field="period")
        if not 1 <= self.min_history <= self.lookback_days:
            raise InputError(f"need 1 <= min_history <= lookback_days (got {self.min_history}, {self.lookback_days})", field="lookback")

    def day(self, t: datetime) -> int:
        return math.floor(t.timestamp() / self.period_s)

    def offset(self, t: datetime) -> float:
        """Seconds since the start of t's day (its "time of day")."""
        return t.timestamp() - self.day(t) * self.period_s

    def start(self, day: int) -> datetime:
        return datetime.fromtimestamp(day * self.period_s, tz=UTC)

    def day_type(self, day: int) -> str:
        if not self.split_weekend:
            return "all"
        return "weekend" if self.start(day).weekday() >= 5 else "weekday"

    def previous_days(self, day: int, before: datetime | None = None) -> list[int]:
        """The ``lookback_days`` days of ``day``'s type before it, newest first; with ``before``, only
        days that ended by the start of ``before``'s day (history is whole days up to the cutoff)."""
        last = day - 1 if before is None else min(day - 1, self.day(before) - 1)
        kind, days, d = self.day_type(day), [], last
        while len(days) < self.lookback_days and d > last - 7 * self.lookback_days - 7:
            if self.day_type(d) == kind:
                days.append(d)
            d -= 1
        return days


class History:
    """The instances of one recurring job, indexed by day and time of day for matching."""

    def __init__(self, items: Sequence[Instance], season: Season) -> None:
        self.season = season
        by_day: dict[int, list[tuple[float, Instance]]] = defaultdict(list)
        for i in items:
            by_day[season.day(i.time)].append((season.offset(i.time), i))
        self.by_day = {d: sorted(v, key=lambda pair: pair[0]) for d, v in by_day.items()}
        self.offsets = {d: [o for o, _ in v] for d, v in self.by_day.items()}

    def on_day(self, day: int) -> list[Instance]:
        return [i for _, i in self.by_day.get(day, ())]

    def _nearest(self, day: int, offset: float) -> Instance | None:
        """The instance of ``day`` nearest to ``offset`` within the window (one of its two neighbours)."""
        pairs, offsets, window = self.by_day.get(day, []), self.offsets.get(day, []), self.season.window_s
        k = bisect.bisect_left(offsets, offset)
        near = [pairs[j] for j in (k - 1, k) if 0 <= j < len(pairs) and abs(offsets[j] - offset) <= window]
        return min(near, key=lambda pair: abs(pair[0] - offset))[1] if near else None

    def matches(self, day: int, offset: float, before: datetime | None = None) -> list[Instance]:
        """Per previous same-type day (see Season.previous_days), the instance nearest to ``offset``
        within the window; oldest first."""
        found = [i for d in self.season.previous_days(day, before) if (i := self._nearest(d, offset)) is not None]
        return found[::-1]


@dataclass(frozen=True)
class Context:
    """What the prediction of one instance on ``day`` may use: the matches (same time of day on previous
    same-type days, oldest first) and the job's instances before the cutoff (oldest first)."""

    matched: Sequence[Instance]
    recent: Sequence[Instance]
    day: int
    season: Season


def _values(items: Sequence[Instance], quantity: str) -> list[float]:
    return [getattr(i, quantity) for i in items]


def mean(x: Sequence[float]) -> float:
    # thesis §2.2: the average over the same time of day on previous days of the same day type
    return sum(x) / len(x)


def median(x: Sequence[float]) -> float:
    return statistics.median(x)  # plain Python: these are a handful of values, numpy's overhead dominates


def ses(x: Sequence[float], alpha: float = 0.5) -> float:
    """Simple exponential smoothing, level := alpha x + (1 - alpha) level, oldest to newest."""
    level = float(x[0])
    for v in x[1:]:
        level = alpha * float(v) + (1.0 - alpha) * level
    return level


def huber_line(x: Sequence[float], y: Sequence[float], at: float, k: float = 1.345, iterations: int = 10) -> float:
    """The value at ``at`` of a line fitted to (x, y) by iteratively reweighted least squares with Huber
    weights (residuals beyond k robust sigmas, sigma = 1.4826 MAD, weigh k sigma / |r|). Plain Python:
    a job has a handful of matches."""
    w = [1.0] * len(y)
    slope, intercept = 0.0, median(y)
    for _ in range(iterations):
        sw = sum(w)
        xm, ym = sum(wi * xi for wi, xi in zip(w, x, strict=True)) / sw, sum(wi * yi for wi, yi in zip(w, y, strict=True)) / sw
        sxx = sum(wi * (xi - xm) ** 2 for wi, xi in zip(w, x, strict=True))
        slope = sum(wi * (xi - xm) * (yi - ym) for wi, xi, yi in zip(w, x, y, strict=True)) / sxx if sxx > 0 else 0.0
        intercept = ym - slope * xm
        r = [yi - intercept - slope * xi for xi, yi in zip(x, y, strict=True)]
        mid = median(r)
        sigma = 1.4826 * median([abs(ri - mid) for ri in r])
        if sigma <= 0:
            break
        w = [k * sigma / max(abs(ri), k * sigma) for ri in r]  # min(1, k sigma / |r|)
    return intercept + slope * at


def _seasonal(aggregate: Callable[[Sequence[float]], float]) -> Callable[[Context, str], float | None]:
    def predict_seasonal(ctx: Context, quantity: str) -> float | None:
        return aggregate(_values(ctx.matched, quantity)) if len(ctx.matched) >= ctx.season.min_history else None
    return predict_seasonal


def _trend(ctx: Context, quantity: str) -> float | None:
    if len(ctx.matched) < max(3, ctx.season.min_history):
        return None
    days = [float(ctx.season.day(i.time)) for i in ctx.matched]
    return max(0.0, huber_line(days, _values(ctx.matched, quantity), float(ctx.day)))


def _last(ctx: Context, quantity: str) -> float | None:
    return float(getattr(ctx.recent[-1], quantity)) if ctx.recent else None


def _median_last(ctx: Context, quantity: str) -> float | None:
    return median(_values(ctx.recent[-ctx.season.lookback_days:], quantity)) if ctx.recent else None


Predictor = Callable[[Context, str], "float | None"]
LAST = "last"
PREDICTORS: dict[str, Predictor] = {
    "paper": _seasonal(mean), "median": _seasonal(median), "ses": _seasonal(ses), "seasonal_last": _seasonal(lambda x: x[-1]),
    "trend": _trend, LAST: _last, "median_last": _median_last,
}


def predict(ctx: Context, predictor: str, quantity: str) -> float:
    """One quantity of the next instance (as ``last`` does when ``predictor`` lacks the matches it needs)."""
    value = PREDICTORS[predictor](ctx, quantity)
    return value if value is not None else float(_last(ctx, quantity) or 0.0)


def predict_offset(ctx: Context, predictor: str) -> float:
    """The time of day of the next instance: the matches' median (their newest for ``seasonal_last``),
    or the last instance's when there are fewer than ``min_history`` matches."""
    season = ctx.season
    if len(ctx.matched) < season.min_history:
        return season.offset(ctx.recent[-1].time) if ctx.recent else 0.0
    offsets = [season.offset(i.time) for i in ctx.matched]
    return offsets[-1] if predictor == "seasonal_last" else median(offsets)


def slots(history: History, day: int, before: datetime) -> list[list[Instance]]:
    """The recurring submission slots of ``day``: times of day the job ran at on at least half of
    the previous same-type days ended by ``before`` (and at least ``min_history`` of them), each as
    its instances on those days, oldest first.

    Instances are grouped greedily in time-of-day order, each into the first group it fits, a group
    spanning at most ``window_s`` and holding at most one instance a day (two runs on one day are two slots, however close); the
    groups partition the instances, so no run feeds two slots.
    """
    season = history.season
    days = season.previous_days(day, before)
    seen = sorted((i for d in days for i in history.on_day(d)), key=lambda i: season.offset(i.time))
    groups: list[list[Instance]] = []
    for i in seen:
        offset, day_of = season.offset(i.time), season.day(i.time)
        open_groups = (g for g in groups if offset - season.offset(g[0].time) <= season.window_s)
        if (group := next((g for g in open_groups if day_of not in {season.day(j.time) for j in g}), None)) is not None:
            group.append(i)
        else:
            groups.append([i])
    need = max(season.min_history, math.ceil(len(days) / 2))
    return [sorted(group, key=lambda i: i.time) for group in groups if len(group) >= need]
