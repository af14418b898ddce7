"""Predictors (thesis §2.2): same time of day over previous days, weekdays and weekends apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.errors import InputError
from estimator.backtest import AUTO, backtest, backtest_job, choose, conformal, summarize, unscored
from estimator.predictors import PREDICTORS, Context, History, Season, huber_line, instances, predict, ses, slots
from estimator.records import JobRun
from estimator.synthetic import SyntheticSpec, synthetic_history

MONDAY = datetime(2026, 1, 5, tzinfo=UTC)


def run(day: int, hour: float, size: float, key: str = "j", **kw) -> JobRun:
    t = MONDAY + timedelta(days=day, hours=hour)
    return JobRun(run_id=f"{key}:{t.isoformat()}", recurring_key=key, name=key, source="t", submit_time=t,
                  input_bytes=int(size), shuffle_bytes=int(size // 2), output_bytes=int(size // 4), **kw)


def seasonal(matched, season=Season(), day=0):
    return Context(matched, matched, day, season)


def test_paper_predictor_averages_same_time_on_previous_weekdays_only():
    # weekdays at 14:00 are 100, 200, 300, 400, 500 (Mon..Fri); weekend at 14:00 is 9999; 03:00 runs are 7
    runs = [run(d, 14, 100 * (d + 1)) for d in range(5)] + [run(5, 14, 9999), run(6, 14, 9999)]
    runs += [run(d, 3, 7) for d in range(7)]
    history = History(instances(runs)["j"], Season())
    next_monday = Season().day(MONDAY + timedelta(days=7))
    matched = history.matches(next_monday, 14 * 3600)
    assert [i.input_bytes for i in matched] == [100, 200, 300, 400, 500]
    assert predict(seasonal(matched), "paper", "input_bytes") == 300
    assert predict(seasonal(matched), "median", "input_bytes") == 300
    assert predict(seasonal(History(instances(runs)["j"], Season()).matches(next_monday + 5, 14 * 3600)), "paper", "input_bytes") == 9999


def test_window_decides_what_the_same_time_of_day_is():
    runs = [run(0, 14, 100), run(1, 14.75, 200)]
    history = History(instances(runs)["j"], Season(window_s=1800))
    assert [i.input_bytes for i in history.matches(Season().day(MONDAY) + 2, 14 * 3600)] == [100]


def test_lookback_limits_the_days_averaged():
    runs = [run(d, 9, 100 if d < 3 else 200) for d in range(5)]
    history = History(instances(runs)["j"], Season(lookback_days=2))
    assert predict(seasonal(history.matches(Season().day(MONDAY) + 7, 9 * 3600)), "paper", "input_bytes") == 200


def test_ses_follows_a_trend_the_mean_lags():
    x = np.array([100.0, 110.0, 121.0, 133.1])
    assert ses(x, alpha=1.0) == 133.1
    assert np.mean(x) < ses(x) < x[-1]


def test_failed_unsized_and_profile_runs_are_not_instances():
    runs = [run(0, 1, 10), run(1, 1, 10, outcome="FAILED"), run(2, 1, 10, is_profile=True),
            JobRun(run_id="x", recurring_key="j", name="j", source="t", submit_time=MONDAY)]
    assert len(instances(runs)["j"]) == 1


def test_slots_are_times_run_on_most_previous_days():
    runs = [run(d, 2, 10) for d in range(5)] + [run(d, 20, 10) for d in range(5)] + [run(2, 11, 10)]
    history = History(instances(runs)["j"], Season())
    day = Season().day(MONDAY) + 7
    found = slots(history, day, before=Season().start(day))
    hours = sorted(round(np.median([Season().offset(i.time) for i in m]) / 3600) for m in found)
    assert hours == [2, 20]  # the one-off 11:00 run is not a slot


def test_backtest_uses_no_future_instance():
    runs = [run(d, 9, 100 + d) for d in range(14)]
    points = backtest_job("j", instances(runs)["j"], Season(split_weekend=False))
    changed = [run(d, 9, 100 + d if d < 10 else 10**9) for d in range(14)]  # later instances change wildly
    again = backtest_job("j", instances(changed)["j"], Season(split_weekend=False))
    early = [p for p in points if p.time < MONDAY + timedelta(days=10)]
    assert early == [p for p in again if p.time < MONDAY + timedelta(days=10)]


def test_auto_chooses_a_robust_predictor_for_a_job_with_odd_days():
    sizes = [100.0] * 40
    for d in range(0, 40, 4):
        sizes[d] = 1000.0  # one odd day in four
    runs = [run(d, 9, s) for d, s in enumerate(sizes)]
    points = backtest_job("j", instances(runs)["j"], Season(split_weekend=False))
    assert choose([p for p in points if p.predictor != AUTO]) in {"median", "median_last"}


def test_naive_and_robust_predictors():
    # one run a day at 09:00 growing 10 a day, one odd day (x10), and a 20:00 run of another size
    runs = [run(d, 9, 1000 + 10 * d if d != 3 else 10_000) for d in range(7)] + [run(d, 20, 50) for d in range(7)]
    season = Season(split_weekend=False)
    items = instances(runs)["j"]
    day = season.day(MONDAY) + 7
    matched = History(items, season).matches(day, 9 * 3600)
    ctx = Context(matched, items[-5:], day, season)
    assert predict(ctx, "last", "input_bytes") == 50  # the last run, at any time of day
    assert predict(ctx, "seasonal_last", "input_bytes") == 1060  # yesterday's 09:00 run
    assert predict(ctx, "median_last", "input_bytes") == 50  # the last five runs' median
    assert predict(ctx, "trend", "input_bytes") == pytest.approx(1070, rel=0.01)  # the odd day barely moves the Huber line
    assert predict(ctx, "paper", "input_bytes") > 2000  # the mean does not resist it
    few = Context(matched[-1:], items[-5:], day, season)  # fewer matches than min_history: every seasonal one predicts as last
    assert {predict(few, name, "input_bytes") for name in PREDICTORS} == {50}


def test_huber_line_ignores_an_outlier_a_least_squares_line_follows():
    x = np.arange(8.0)
    y = 100 + 5 * x
    y[4] = 1000
    assert huber_line(x, y, 8.0) == pytest.approx(140, rel=0.02)


def test_conformal_interval_holds_its_coverage():
    rng = np.random.default_rng(0)
    assert conformal([1.0] * 8, 0.8) is None  # l = ceil(9 x 0.9) = 9 > 8: too few
    hits = []
    for _ in range(2000):
        past, new = rng.lognormal(0, 0.3, 19), rng.lognormal(0, 0.3)
        lo, hi = conformal(list(past), 0.8)
        hits.append(lo <= new <= hi)
    assert np.mean(hits) == pytest.approx(0.8, abs=0.03)  # (l - k) / (n + 1) = (18 - 2) / 20


def test_every_instance_after_a_jobs_first_day_is_scored_and_the_rest_counted():
    runs = [run(0, 9, 10), run(0, 15, 10), run(1, 3, 12), run(2, 22, 11), run(5, 1, 1, key="once")]
    by_key = instances(runs)
    points = backtest(by_key, Season(split_weekend=False))
    assert len({(p.key, p.time) for p in points}) == 2  # day 1 and day 2 of "j"
    assert sum(unscored(by_key, Season(split_weekend=False)).values()) == 3


@settings(max_examples=30, deadline=None)
@given(noise=st.sampled_from([0.02, 0.05, 0.1]), seed=st.integers(0, 1000))
def test_paper_predictor_recovers_the_truth_within_the_noise(noise, seed):
    """Predicting from k noisy days, the mean's error against the truth is about noise x sqrt(2/pi/k)."""
    runs, truth = synthetic_history(SyntheticSpec(jobs=6, weeks=3, noise=noise, seed=seed))
    season = Season()
    points = [p for p in backtest(instances(runs), season) if p.predictor == "paper" and p.matches >= season.min_history]
    run_at = {(r.recurring_key, r.submit_time): r.run_id for r in runs}
    vs_truth = [abs(p.predicted[0] - truth[run_at[p.key, p.time]][0]) / truth[run_at[p.key, p.time]][0] for p in points]
    vs_observed = summarize(points)["paper"]["input_bytes_mape"]
    expected_floor = noise * np.sqrt(2 / np.pi)  # mean |e| of one observation's noise
    assert np.mean(vs_truth) < expected_floor  # averaging days beats one day's noise
    assert vs_observed == pytest.approx(expected_floor * np.sqrt(1 + 1 / 3.5), rel=0.35)


@pytest.mark.parametrize("kw", [{"lookback_days": 0}, {"min_history": 6}, {"window_s": 0.0}])
def test_impossible_recurrence_settings_are_input_errors(kw):
    with pytest.raises(InputError):
        Season(**kw)
