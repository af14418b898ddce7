"""Predictors of the next instances of a recurring job (thesis §2.2).

The paper predicts a job submitted at a time of day (e.g. 2 PM) by averaging the same job at the same
time of day over several previous days, weekdays and weekends apart. Every predictor here shares that
matching — the same job, nearest to the same time of day within ``window_s``, on each of the previous
``lookback_days`` days of the same day type — and differs only in how it aggregates the matches:

* ``paper``:  the mean of the matches (thesis §2.2);
* ``median``: their median, robust to one odd day;
* ``ses``:    seasonal simple exponential smoothing over the matches, oldest to newest, which follows
  a trend (a job whose input grows week over week) that the mean lags behind.

A "day" is ``period_s`` long (86,400 s; the SWIM benchmark uses one-hour pseudo-days) and starts at
UTC midnight; weekday/weekend is the UTC calendar day's.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from corral_yarn.errors import InputError
from estimator.records import SUCCEEDED, JobRun

QUANTITIES = ("input_bytes", "shuffle_bytes", "output_bytes")
Aggregate = Callable[[np.ndarray], float]


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


def mean(x: np.ndarray) -> float:
    # thesis §2.2: the average over the same time of day on previous days of the same day type
    return float(np.mean(x))


def median(x: np.ndarray) -> float:
    return float(np.median(x))


def ses(x: np.ndarray, alpha: float = 0.5) -> float:
    """Simple exponential smoothing, level := alpha x + (1 - alpha) level, oldest to newest."""
    level = float(x[0])
    for v in x[1:]:
        level = alpha * float(v) + (1.0 - alpha) * level
    return level


PREDICTORS: dict[str, Aggregate] = {"paper": mean, "median": median, "ses": ses}


def predict(matched: Sequence[Instance], predictor: str, quantity: str) -> float:
    """One quantity of the next instance from the matched instances (oldest first)."""
    return PREDICTORS[predictor](np.array([getattr(i, quantity) for i in matched], dtype=np.float64))


def predict_offset(matched: Sequence[Instance], predictor: str, season: Season) -> float:
    """The time of day of the next instance, aggregated like the sizes."""
    return PREDICTORS[predictor](np.array([season.offset(i.time) for i in matched], dtype=np.float64))


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
