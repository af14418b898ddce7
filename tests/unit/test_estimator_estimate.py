"""Predicted jobs for a planning period, as the planner's Workload."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from corral_yarn.io import load_workload, save
from corral_yarn.planner.build import build_plan
from corral_yarn.workloads import example_cluster
from estimator.errors import EstimateError
from corral_yarn.errors import InputError
from estimator.estimate import EstimateOptions, estimate
from estimator.newjobs import NewJob
from estimator.records import JobRun, TaskSample
from estimator.synthetic import SyntheticSpec, synthetic_history

SPEC = SyntheticSpec(jobs=8, weeks=4, noise=0.05, seed=3)
AT = SPEC.start + timedelta(days=22)  # a Tuesday in week 4


@pytest.fixture(scope="module")
def history():
    return synthetic_history(SPEC)


def _actual(runs, at, horizon):
    return [r for r in runs if at <= r.submit_time < at + horizon]


def test_predicts_each_instance_of_the_next_day_within_the_noise(history):
    runs, truth = history
    result = estimate(runs, EstimateOptions(at=AT, horizon=timedelta(days=1)))
    actual = _actual(runs, AT, timedelta(days=1))
    assert len(result.workload.jobs) == len(actual)
    errors = []
    for job in result.workload.jobs:
        real = min((r for r in actual if r.recurring_key == job.recurring_key), key=lambda r: abs((r.submit_time - AT).total_seconds() - job.arrival_s))
        assert abs((real.submit_time - AT).total_seconds() - job.arrival_s) < 900  # jitter is 120 s
        errors.append(abs(job.input_bytes - truth[real.run_id][0]) / truth[real.run_id][0])
    assert np.mean(errors) < SPEC.noise


def test_slack_scales_sizes_and_the_jobs_file_is_valid_for_the_planner(history, tmp_path):
    runs, _ = history
    plain = estimate(runs, EstimateOptions(at=AT, horizon=timedelta(hours=12), predictor="paper"))
    slack = estimate(runs, EstimateOptions(at=AT, horizon=timedelta(hours=12), predictor="paper", slack=0.2))
    for a, b in zip(plain.workload.jobs, slack.workload.jobs, strict=True):
        assert b.input_bytes == pytest.approx(1.2 * a.input_bytes) and b.shuffle_bytes == pytest.approx(1.2 * a.shuffle_bytes)
    save(slack.workload, tmp_path / "jobs.json")
    workload = load_workload(tmp_path / "jobs.json")
    assert all(0 <= j.arrival_s < 12 * 3600 for j in workload.jobs)
    plan = build_plan(workload, example_cluster(racks=3, machines_per_rack=4), "online", with_bound=False)
    assert len(plan.jobs) == len(workload.jobs)


def test_details_carry_intervals_that_cover_the_prediction(history):
    runs, _ = history
    result = estimate(runs, EstimateOptions(at=AT, horizon=timedelta(days=1)))
    for d in result.details:
        lo, hi = d["intervals"]["input_bytes"]
        assert lo <= d["predicted"]["input_bytes"] <= hi
        assert d["predictor"] in ("paper", "median", "ses") and len(d["matched_runs"]) >= 2


def test_default_rates_are_counted_and_task_samples_are_used(history):
    runs, _ = history
    result = estimate(runs, EstimateOptions(at=AT, horizon=timedelta(days=1)))
    assert result.defaults_used["map_rate"] == len(result.workload.jobs)
    key = result.workload.jobs[0].recurring_key
    with_tasks = [
        JobRun(**{**r.__dict__, "map_task_samples": (TaskSample(2.0, 80_000_000),), "reduce_task_samples": (TaskSample(4.0, 40_000_000),)})
        if r.recurring_key == key else r
        for r in runs
    ]
    job = next(j for j in estimate(with_tasks, EstimateOptions(at=AT, horizon=timedelta(days=1))).workload.jobs if j.recurring_key == key)
    assert job.stages[0].map_rate_bytes_per_s == 40e6 and job.stages[0].reduce_rate_bytes_per_s == 10e6


def test_no_history_for_the_period_is_a_clear_error(history):
    runs, _ = history
    with pytest.raises(EstimateError, match="no recurring job"):
        estimate(runs, EstimateOptions(at=SPEC.start + timedelta(hours=1), horizon=timedelta(hours=1)))


@pytest.mark.parametrize(("option", "value"), [("slack", math.nan), ("slack", math.inf), ("slack", -0.1),
                                               ("default_map_rate_bytes_per_s", -1.0), ("default_reduce_rate_bytes_per_s", math.nan),
                                               ("default_map_rate_bytes_per_s", math.inf)])
def test_options_refuse_a_nan_infinite_or_negative_figure_naming_it(option, value):
    with pytest.raises(InputError, match=f"^{option}: "):
        EstimateOptions(at=AT, horizon=timedelta(hours=1), **{option: value})


def test_map_only_history_gives_map_only_jobs():
    t0 = datetime(2026, 1, 5, 6, tzinfo=UTC)
    runs = [
        JobRun(run_id=f"m{d}", recurring_key="copy", name="copy", source="t", submit_time=t0 + timedelta(days=d),
               input_bytes=10**9, shuffle_bytes=0, output_bytes=10**9, map_tasks=8, reduce_tasks=0)
        for d in range(4)
    ]
    job = estimate(runs, EstimateOptions(at=t0 + timedelta(days=4) - timedelta(hours=1), horizon=timedelta(hours=2))).workload.jobs[0]
    assert job.stages[0].reduce_tasks == 0 and job.shuffle_bytes == 0 and job.stages[0].map_tasks == 8


def test_recurring_jobs_without_sizes_are_reported_not_dropped_silently(history):
    runs, _ = history
    rm_app = JobRun(run_id="rm:1", recurring_key="spark-etl", name="spark-etl", source="rm", submit_time=AT - timedelta(days=1),
                    application_type="SPARK")
    result = estimate([*runs, rm_app], EstimateOptions(at=AT, horizon=timedelta(days=1)))
    assert result.unsized_jobs == ["spark-etl"]


def test_two_slots_at_the_same_second_get_distinct_names():
    t0 = datetime(2026, 1, 5, 6, tzinfo=UTC)
    runs = [
        JobRun(run_id=f"r{d}{k}", recurring_key="twin", name="twin", source="t", submit_time=t0 + timedelta(days=d),
               input_bytes=10**9 * (k + 1), shuffle_bytes=0, output_bytes=1, map_tasks=8, reduce_tasks=0)
        for d in range(4) for k in range(2)
    ]
    jobs = estimate(runs, EstimateOptions(at=t0 + timedelta(days=4) - timedelta(hours=1), horizon=timedelta(hours=2))).workload.jobs
    assert sorted(j.name for j in jobs) == ["twin@20260109T060000", "twin@20260109T060000-2"]
    assert sum(j.input_bytes for j in jobs) == 3 * 10**9  # runs at the same second: which slot gets which is arbitrary


def test_a_period_starting_mid_day_holds_only_the_slots_after_its_start(history):
    runs, _ = history
    at = AT + timedelta(hours=12)
    jobs = estimate(runs, EstimateOptions(at=at, horizon=timedelta(hours=6))).workload.jobs
    actual = _actual(runs, at, timedelta(hours=6))
    assert len(jobs) == len(actual) and all(0 <= j.arrival_s < 6 * 3600 for j in jobs)


def _profile_run(key: str, when: datetime) -> JobRun:
    """A profiling run on a 64 MB sample: selectivities 4 (map) and 2 (reduce), tasks at 20 / 10 MB/s."""
    return JobRun(run_id=f"p-{key}", recurring_key=key, name=key, source="t", submit_time=when, input_bytes=64e6,
                  shuffle_bytes=16e6, output_bytes=8e6, map_tasks=1, reduce_tasks=3, is_profile=True,
                  map_task_samples=[TaskSample(seconds=3.2, bytes=64e6, node="n1")],
                  reduce_task_samples=[TaskSample(seconds=0.8, bytes=8e6, node="n1")])


def test_a_new_job_is_sized_from_its_declared_input_and_its_profile(history):
    runs, _ = history
    declared = NewJob(recurring_key="new-etl", arrival=AT + timedelta(hours=3), input_bytes=4e9)
    result = estimate([*runs, _profile_run("new-etl", AT - timedelta(days=1))], EstimateOptions(at=AT, horizon=timedelta(days=1)), [declared])
    [job] = [j for j in result.workload.jobs if j.recurring_key == "new-etl"]
    stage = job.stages[0]
    assert job.arrival_s == 3 * 3600 and (stage.input_bytes, stage.shuffle_bytes, stage.output_bytes) == (4e9, 1e9, 5e8)
    assert stage.map_tasks == math.ceil(4e9 / 2**27) and stage.reduce_tasks == 3  # one map per 128 MiB block, not per sample
    assert (stage.map_rate_bytes_per_s, stage.reduce_rate_bytes_per_s) == (20e6, 10e6)
    assert "new-etl" not in result.unsized_jobs and any(d["predictor"] == "declared" for d in result.details)


@pytest.mark.parametrize(("declared", "error"), [
    (NewJob(recurring_key="never-profiled", arrival=AT, input_bytes=1e9), r"jobs\[0\].*corral history profile"),
    (NewJob(recurring_key="new-etl", arrival=AT - timedelta(seconds=1), input_bytes=1e9), r"jobs\[0\]\.arrival.*outside the planning period"),
])
def test_a_new_job_without_a_profile_or_outside_the_period_is_an_input_error(history, declared, error):
    runs, _ = history
    with pytest.raises(InputError, match=error):
        estimate([*runs, _profile_run("new-etl", AT - timedelta(days=1))], EstimateOptions(at=AT, horizon=timedelta(days=1)), [declared])
