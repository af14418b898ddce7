"""New and ad hoc jobs as an arrival rate per size class, so a period's total load is right where single
recurring jobs are not predicted (thesis §2.2 predicts recurring jobs only; §3.3 leaves ad hoc jobs to
the cluster's other share).

The earlier windows of a period [at, at + H) are the ``lookback_days`` windows of length H ending
whole multiples of max(period, H) before it: the same time on previous days for H shorter than a day,
the previous windows of length H otherwise. The period's arrival rate is the median job count of the
earlier windows; a size class (the decade of the input bytes, map-only apart) gets the share of it that
its instances have among all the earlier windows' instances. The jobs a period gets on top of its
recurring slots are the deficit of that rate against the slots: the classes whose rate exceeds the slot
jobs predicted in them, the largest deficit first, until the slots and these jobs reach the rate (none
when the slots reach it). Each such job has its class's mean sizes over the earlier windows (the mean,
as the period's total is what it must get right; a decade bounds the spread), scaled so that together
they carry the expected bytes of the whole deficit (classes too rare for a whole job included), and
the jobs arrive evenly spread over the period. For periods of at most a day, the earlier windows are
on days of the period's type (weekday or weekend), as the seasonal predictors' matches are.

The same windows give the naive baseline of the horizon backtest: the median of their totals.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from estimator.predictors import QUANTITIES, Instance, Season


def size_class(input_bytes: float, shuffle_bytes: float) -> str:
    """``in1e<d>`` (d: decade of the input bytes), ``-maponly`` for a job without shuffle."""
    return f"in1e{int(math.log10(max(input_bytes, 1.0)))}{'-maponly' if shuffle_bytes <= 0 else ''}"


def earlier_windows(at: datetime, horizon: timedelta, season: Season, first: datetime) -> list[tuple[datetime, datetime]]:
    """The earlier windows of [at, at + horizon) that start on or after the day of ``first`` (the history's
    start); for a horizon of at most a day, only days of ``at``'s type (weekday or weekend, thesis §2.2)."""
    days = math.ceil(horizon.total_seconds() / season.period_s)
    shift, start = timedelta(seconds=season.period_s * days), season.start(season.day(first))
    windows: list[tuple[datetime, datetime]] = []
    k = 1
    while len(windows) < season.lookback_days and at - k * shift >= start:
        w = (at - k * shift, at - k * shift + horizon)
        if days > 1 or season.day_type(season.day(w[0])) == season.day_type(season.day(at)):
            windows.append(w)
        k += 1
    return windows


def in_window(items: Sequence[Instance], times: Sequence[datetime], window: tuple[datetime, datetime]) -> Sequence[Instance]:
    return items[bisect.bisect_left(times, window[0]):bisect.bisect_left(times, window[1])]


def totals(items: Sequence[Instance]) -> dict[str, float]:
    """Job count and input, shuffle and output bytes of ``items``."""
    return {"jobs": float(len(items)), **{q: float(sum(getattr(i, q) for i in items)) for q in QUANTITIES}}


@dataclass(frozen=True)
class ClassRates:
    """Per size class: its share of the median job count of the earlier windows, and its mean sizes."""

    rate: dict[str, float]
    sizes: dict[str, dict[str, float]]
    windows: int

    @property
    def total(self) -> float:
        return sum(self.rate.values())


def class_rates(items: Sequence[Instance], at: datetime, horizon: timedelta, season: Season) -> ClassRates:
    """The size classes' arrival rates of [at, at + horizon) from ``items`` (every instance, time order)."""
    times = [i.time for i in items]
    windows = earlier_windows(at, horizon, season, items[0].time) if items else []
    counts: list[Counter[str]] = []
    members: dict[str, list[Instance]] = defaultdict(list)
    for w in windows:
        mine = in_window(items, times, w)
        counts.append(Counter(size_class(i.input_bytes, i.shuffle_bytes) for i in mine))
        for i in mine:
            members[size_class(i.input_bytes, i.shuffle_bytes)].append(i)
    pooled = sum(len(v) for v in members.values())
    jobs = statistics.median([sum(n.values()) for n in counts]) if counts else 0.0
    rate = {c: jobs * len(v) / pooled for c, v in members.items()}
    sizes = {c: {q: statistics.fmean([getattr(i, q) for i in v]) for q in QUANTITIES} for c, v in members.items()}
    return ClassRates(rate, sizes, len(windows))


@dataclass(frozen=True)
class Deficit:
    """The jobs to add per class, and the bytes they must carry in all: the expected bytes of the missing
    jobs (the classes' gaps, scaled to the missing count, times their mean sizes), so that a class too rare
    to get a whole job (often the largest inputs) still counts in the period's total."""

    jobs: Counter[str]
    expected: dict[str, float]

    def scale(self, rates: ClassRates) -> dict[str, float]:
        """Per quantity, the factor taking the added jobs' class-mean sizes to the expected bytes."""
        allocated = {q: sum(n * rates.sizes[c][q] for c, n in self.jobs.items()) for q in QUANTITIES}
        return {q: self.expected[q] / allocated[q] if allocated[q] > 0 else 1.0 for q in QUANTITIES}


def deficit(rates: ClassRates, slot_classes: Counter[str]) -> Deficit:
    """The jobs to add: the classes' deficits against the slot jobs, largest first, up to the total rate's
    deficit (rounded)."""
    missing = round(rates.total) - sum(slot_classes.values())
    gaps = {c: r - slot_classes[c] for c, r in rates.rate.items() if r - slot_classes[c] > 0}
    share = min(1.0, missing / sum(gaps.values())) if missing > 0 and gaps else 0.0
    expected = {q: share * sum(g * rates.sizes[c][q] for c, g in gaps.items()) for q in QUANTITIES}
    out: Counter[str] = Counter()
    while missing > 0 and gaps:
        c = max(gaps, key=lambda k: (gaps[k], k))
        out[c] += 1
        missing -= 1
        gaps[c] -= 1
        if gaps[c] <= 0:
            del gaps[c]
    return Deficit(out, expected)
