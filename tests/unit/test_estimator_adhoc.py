"""Ad hoc and new jobs as an arrival rate per size class, and the per-period totals backtest."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from estimator.adhoc import class_rates, deficit, earlier_windows, size_class
from estimator.backtest import backtest
from estimator.estimate import EstimateOptions, estimate
from estimator.horizons import horizon_backtest, summarize_horizons
from estimator.predictors import Season, instances
from estimator.records import JobRun

T0 = datetime(2026, 1, 5, tzinfo=UTC)
SEASON = Season(split_weekend=False)


def adhoc_history(days: int, per_day: int = 40, seed: int = 0) -> list[JobRun]:
    """Two recurring jobs a day at 06:00, and ``per_day`` one-off jobs (never seen again) spread over the
    day, input log-uniform 1e6-1e10 bytes, a third of them map-only."""
    rng = np.random.default_rng(seed)
    runs = []
    for d in range(days):
        day = T0 + timedelta(days=d)
        runs += [JobRun(run_id=f"etl{k}-{d}", recurring_key=f"etl{k}", name=f"etl{k}", source="t", submit_time=day + timedelta(hours=6),
                        input_bytes=10**9 * (k + 1), shuffle_bytes=10**8, output_bytes=10**7) for k in range(2)]
        for j in range(per_day):
            size = int(10 ** rng.uniform(6, 10))
            runs.append(JobRun(run_id=f"q{d}-{j}", recurring_key=f"query-{d}-{j}", name="q", source="t",
                               submit_time=day + timedelta(seconds=float(rng.uniform(0, 86400))),
                               input_bytes=size, shuffle_bytes=0 if j % 3 == 0 else size // 2, output_bytes=size // 10))
    return runs


def test_size_class_is_the_input_decade_map_only_apart():
    assert size_class(5e9, 1.0) == "in1e9" and size_class(5e9, 0.0) == "in1e9-maponly" and size_class(0.0, 0.0) == "in1e0-maponly"


def test_earlier_windows_are_the_same_time_on_previous_days_or_previous_periods():
    at = T0 + timedelta(days=10, hours=3)
    hourly = earlier_windows(at, timedelta(hours=1), SEASON, T0)
    assert [w[0] for w in hourly] == [at - timedelta(days=k) for k in range(1, 6)]
    weekly = earlier_windows(at, timedelta(days=7), SEASON, T0)
    assert [w[0] for w in weekly] == [at - timedelta(days=7)]  # the one before starts before the history


def test_deficit_fills_the_rate_the_slots_leave_largest_gap_first():
    rates = class_rates(instances(adhoc_history(6))["etl0"], T0 + timedelta(days=6), timedelta(days=1), SEASON)
    assert rates.total == 1 and deficit(rates, Counter({"in1e9": 1})).jobs == Counter()
    many = class_rates(sorted((i for v in instances(adhoc_history(6)).values() for i in v), key=lambda i: i.time),
                       T0 + timedelta(days=6), timedelta(days=1), SEASON)
    assert many.total == pytest.approx(42)
    add = deficit(many, Counter({"in1e9": 2})).jobs
    assert sum(add.values()) == 40 and all(many.rate[c] >= n - 1 for c, n in add.items())


def test_estimate_adds_the_one_off_jobs_as_class_rates_so_the_period_total_is_right():
    runs = adhoc_history(8)
    at, day = T0 + timedelta(days=7), timedelta(days=1)
    actual = [r for r in runs if at <= r.submit_time < at + day]
    recurring = estimate(runs, EstimateOptions(at=at, horizon=day, adhoc=False))
    assert len(recurring.workload.jobs) == 2  # the one-off jobs never recur: no slot predicts them
    full = estimate(runs, EstimateOptions(at=at, horizon=day, adhoc=True))
    assert len(full.workload.jobs) == len(actual) == 42
    adhoc = [d for d in full.details if d["predictor"] == "class_rate"]
    assert len(adhoc) == 40 and all(0 <= j.arrival_s < 86400 for j in full.workload.jobs)
    predicted, real = sum(j.input_bytes for j in full.workload.jobs), sum(r.input_bytes for r in actual)
    assert predicted == pytest.approx(real, rel=0.6)  # 40 log-uniform sizes: a noisy total, but the right order
    assert sum(j.input_bytes for j in recurring.workload.jobs) < 0.5 * real


def test_horizon_backtest_compares_totals_with_the_naive_rate():
    runs = adhoc_history(8)
    by_key = instances(runs)
    periods = horizon_backtest(runs, SEASON, timedelta(days=1), backtest(by_key, SEASON))
    assert [h.start for h in periods] == [T0 + timedelta(days=d) for d in range(2, 8)]  # two earlier days needed
    assert all(h.actual["jobs"] == 42 and h.estimated["jobs"] == 42 and h.naive["jobs"] == 42 for h in periods)
    summary = summarize_horizons(periods)
    assert summary["jobs"]["estimated_median_ape"] == 0 and summary["jobs"]["naive_within_20pct"] == 1
    assert summary["input_bytes"]["estimated_median_ape"] < 0.6


def test_added_jobs_carry_the_expected_bytes_of_classes_too_rare_for_a_whole_job():
    rates = class_rates(sorted((i for v in instances(adhoc_history(6)).values() for i in v), key=lambda i: i.time),
                        T0 + timedelta(days=6), timedelta(days=1), SEASON)
    add = deficit(rates, Counter({"in1e9": 2}))
    expected = sum(g * rates.sizes[c]["input_bytes"] for c, g in rates.rate.items()) - 2 * rates.sizes["in1e9"]["input_bytes"]
    scale = add.scale(rates)
    carried = sum(n * rates.sizes[c]["input_bytes"] * scale["input_bytes"] for c, n in add.jobs.items())
    assert carried == pytest.approx(add.expected["input_bytes"]) and add.expected["input_bytes"] == pytest.approx(expected, rel=0.05)


def test_weekend_periods_compare_with_earlier_weekend_days():
    saturday = T0 + timedelta(days=19)  # T0 is a Monday
    windows = earlier_windows(saturday, timedelta(hours=2), Season(), T0)
    assert [w[0].weekday() for w in windows] == [6, 5, 6, 5]  # Sun, Sat of the week before, then the first weekend
