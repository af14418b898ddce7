"""Kwiken for YARN speculative execution: makespan curves of task stages, SumVar over them, the mapping onto
Hadoop's per-job speculation keys, the history store -> settings file chain and ``corral kwiken yarn-plan``."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from pydantic import ValidationError

from corral_yarn.cli import main
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.errors import InputError
from corral_yarn.kwiken.apportion import spent, sumvar
from corral_yarn.kwiken.speculation import (
    CAP_RUNNING, CAP_TOTAL, DISTINCT_NODE_SPECULATOR, ESTIMATOR, KWIKEN_ESTIMATOR, MAX_REISSUE, MIN_ELAPSED, MINIMUM_ALLOWED, RETRY_AFTER_SPECULATE, RULE, SCALE, SPECULATOR, TIMEOUT_MS,
    TIMEOUT_RATIO,
    SpendCurve, SpeculationSettings, TaskStage, apportion, budget_matching, copy_spend, expected_spend, makespan_curve, plan_speculation, rounded, settings, spend_curve,
    spend_calibration,
)
from corral_yarn.kwiken.curves import VarianceCurve
from corral_yarn.pipeline.speculation import task_stages, with_speculation
from estimator.records import JobRun, TaskSample
from estimator.store import HistoryStore

TWO_POINT = np.array([1.0] * 9 + [10.0])  # 10 % of tasks straggle 10 x


def _max_of_two_variance(values: list[float], probs: list[float]) -> float:
    """Var(max(X1, X2)) for two independent draws of a discrete X, by enumeration."""
    pairs = [(max(a, b), pa * pb) for (a, pa), (b, pb) in product(zip(values, probs), repeat=2)]
    mean = sum(v * p for v, p in pairs)
    return sum((v - mean) ** 2 * p for v, p in pairs)


def test_makespan_curve_matches_hand_computed_variances() -> None:
    stage = TaskStage("j", "map", 2, TWO_POINT)
    curve = makespan_curve(stage, np.random.default_rng(0), draws=200_000)
    # r = 0: no copies; max of two tasks is 10 with probability 1 - 0.9^2
    assert curve.v[0] == pytest.approx(_max_of_two_variance([1, 10], [0.9, 0.1]), rel=0.03)
    # r = 0.1: T = the 0.9 quantile = 1; a task of 10 becomes min(10, 1 + X'): 2 w.p. 0.9, 10 w.p. 0.1
    k = int(np.argmin(np.abs(curve.r - 0.1)))
    assert curve.r[k] == pytest.approx(0.1)
    assert curve.v[k] == pytest.approx(_max_of_two_variance([1, 2, 10], [0.9, 0.09, 0.01]), rel=0.05)
    assert curve(0.1) < curve(0.0) / 5


def test_both_rules_are_planned_with_copies_started_at_the_timeout() -> None:
    # the estimator projects only attempts that have reported progress, and JobHistory has no status times: the planner
    # prices every copy at T under both rules, so the plans differ only in the rule the estimator is told
    rng = np.random.default_rng(2)
    stages = [TaskStage(f"j{k}", "map", n, rng.lognormal(2, 0.4, 30) * np.where(rng.random(30) < 0.2, 4.0, 1.0)) for k, n in enumerate((6, 4))]
    progress, thesis = (plan_speculation(stages, 0.1, runs=3, rule=rule) for rule in ("progress", "timeout"))
    assert progress.expected_extra_container_s == thesis.expected_extra_container_s > 0
    assert [j.stages for j in progress.jobs] == [j.stages for j in thesis.jobs]
    assert {j.properties[RULE] for j in progress.jobs if RULE in j.properties} == {"progress"}
    assert {j.properties[RULE] for j in thesis.jobs if RULE in j.properties} == {"timeout"}


def test_no_budget_times_a_stage_out_below_its_median() -> None:
    # session 11's run E: a raised budget bought r = 1, T_s = 0, and every map of that job was copied at launch
    rng = np.random.default_rng(4)
    durations = rng.lognormal(3, 0.3, 30) * np.where(rng.random(30) < 0.2, 3.0, 1.0)
    stages = [TaskStage("grep", "map", 6, durations), TaskStage("wc", "map", 8, rng.lognormal(3, 0.2, 30))]
    plan = plan_speculation(stages, 1.0, runs=3)
    planned = {job.key: job.stages[0] for job in plan.jobs}
    assert max(p.reissue_fraction for p in planned.values()) <= MAX_REISSUE  # the budget is ample
    for stage in stages:
        if planned[stage.job].reissue_fraction > 0:
            assert planned[stage.job].timeout_s >= np.sort(stage.durations)[stage.durations.size // 2 - 1]
    assert makespan_curve(stages[0], np.random.default_rng(0)).r.max() == MAX_REISSUE


def test_a_chunk_never_carries_a_cheap_stage_past_its_curve() -> None:
    # session 12's runs G and H: SumVar's last chunk carried cheap stages to r = 0.61-0.72 past their curves' end at
    # r = 0.5 (a chunk is B / (gamma N) of budget, so delta / c_s is a large step in r for a stage of small cost c_s)
    rng = np.random.default_rng(7)
    stages = [TaskStage("big", "map", 40, rng.lognormal(3, 0.2, 60)),
              TaskStage("cheap", "map", 2, rng.lognormal(3, 0.5, 30) * np.where(rng.random(30) < 0.3, 3.0, 1.0))]
    r, curves = apportion(stages, 1.0)
    assert r[1] == pytest.approx(curves[1].hull_r[-1]) and r[1] <= MAX_REISSUE
    assert (r <= np.array([c.hull_r[-1] for c in curves]) + 1e-12).all()


def test_constant_and_little_known_stages_get_no_budget() -> None:
    stages = [TaskStage("flat", "map", 4, np.full(20, 3.0)), TaskStage("few", "reduce", 2, TWO_POINT[-4:]),
              TaskStage("tail", "map", 4, TWO_POINT.repeat(2)), TaskStage("lone", "reduce", 1, TWO_POINT.repeat(2))]
    r, curves = apportion(stages, 0.2)
    assert r[0] == 0 and r[1] == 0 and r[2] > 0 and r[3] > 0  # Kwiken's estimator copies even a stage's only task
    assert curves[0](0.0) == 0 and curves[1](1.0) == curves[1](0.0)
    assert spent([s.container_seconds for s in stages], r) <= 0.2 + 1e-9


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(2, 12), st.floats(0.5, 3.0), st.floats(0.0, 0.3)), min_size=1, max_size=5),
       st.floats(0.0, 1.0), st.integers(0, 3))
def test_sumvar_over_task_stages_never_overspends(shapes: list[tuple[int, float, float]], budget: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    stages = [TaskStage(f"j{k}", "map", n, rng.lognormal(0, sigma, 30) * np.where(rng.random(30) < p, 5.0, 1.0))
              for k, (n, sigma, p) in enumerate(shapes)]
    r, _ = apportion(stages, budget, seed)
    assert np.all((0 <= r) & (r <= 1))
    assert spent([s.container_seconds for s in stages], r) <= budget + 1e-9


def test_settings_map_fractions_and_timeouts_onto_hadoop_keys() -> None:
    off = settings([("map", 0.0, 8, None), ("reduce", 0.0, 2, None)])
    assert off == {"mapreduce.map.speculative": "false", "mapreduce.reduce.speculative": "false"}
    on = settings([("map", 0.25, 8, 12.3456), ("reduce", 0.0, 2, None)])
    assert on["mapreduce.map.speculative"] == "true" and on["mapreduce.reduce.speculative"] == "false"
    assert on[ESTIMATOR] == KWIKEN_ESTIMATOR and on[TIMEOUT_MS["map"]] == "12346" and TIMEOUT_MS["reduce"] not in on
    assert on[SPECULATOR] == DISTINCT_NODE_SPECULATOR and SPECULATOR not in off  # Hadoop's own speculator when nothing is copied
    assert (on[MINIMUM_ALLOWED], on[CAP_RUNNING], on[CAP_TOTAL], on[RETRY_AFTER_SPECULATE]) == ("8", "0", "0", "1000")
    both = settings([("map", 0.1, 8, 30.0), ("reduce", 1.0, 3, 0.0)])
    assert both[MINIMUM_ALLOWED] == "8" and both[TIMEOUT_MS["reduce"]] == "0"  # one cap key per job: every overdue task its copy
    assert (on[RULE], on[MIN_ELAPSED]) == ("progress", "0.25") and RULE not in off  # the estimator's rule, judged from 0.25 x T_s
    thesis = settings([("map", 0.25, 8, 12.3456)], rule="timeout")
    assert thesis[RULE] == "timeout" and MIN_ELAPSED not in thesis


def test_relative_settings_carry_each_timeout_as_a_ratio_beside_the_absolute_one() -> None:
    rel = settings([("map", 0.25, 8, 12.3456), ("reduce", 0.0, 2, None)], ratios={"map": 1.4, "reduce": None})
    assert (rel[SCALE], rel[TIMEOUT_RATIO["map"]], rel[TIMEOUT_MS["map"]]) == ("relative", "1.4", "12346")
    assert TIMEOUT_RATIO["reduce"] not in rel
    assert SCALE not in settings([("map", 0.25, 8, 12.3456)]) and SCALE not in settings([("map", 0.0, 8, None)], ratios={"map": None})


def test_plan_carries_t_s_over_the_stages_mean_and_older_files_read_absolute() -> None:
    # TWO_POINT x 3: 27 x 1 s, 3 x 10 s, mean 1.9 s; r = 1 -> T_s = 1 s (the 0 quantile), ratio 1 / 1.9
    stages = [TaskStage("laggy", "map", 1, TWO_POINT.repeat(3))]
    plan = plan_speculation(stages, 1.0, runs=5, scale="relative")
    stage = plan.jobs[0].stages[0]
    assert plan.scale == "relative" and stage.timeout_s is not None and stage.timeout_ratio is not None
    assert stage.timeout_ratio == pytest.approx(stage.timeout_s / 1.9)
    assert plan.properties("laggy")[TIMEOUT_RATIO["map"]] == f"{stage.timeout_ratio:.6g}"
    absolute = plan_speculation(stages, 1.0, runs=5)  # the default
    assert absolute.scale == "absolute" and SCALE not in absolute.properties("laggy")
    older = plan.model_dump()
    del older["scale"]
    for job in older["jobs"]:
        for s in job["stages"]:
            del s["timeout_ratio"]
    read = SpeculationSettings.model_validate(older)
    assert read.scale == "absolute" and read.jobs[0].stages[0].timeout_ratio is None


def test_plan_carries_each_jobs_share_and_validates() -> None:
    stages = [TaskStage("steady", "map", 4, np.full(20, 3.0)), TaskStage("laggy", "map", 6, TWO_POINT.repeat(3))]
    plan = plan_speculation(stages, 0.1, runs=5)
    assert plan.properties("steady") == {"mapreduce.map.speculative": "false"}
    assert plan.properties("laggy")["mapreduce.map.speculative"] == "true"
    assert plan.properties("unplanned") == {}
    laggy = plan.jobs[1].stages[0]
    assert laggy.timeout_s is not None and laggy.planned_variance < laggy.variance
    assert plan.properties("laggy")[TIMEOUT_MS["map"]] == str(round(laggy.timeout_s * 1000))
    assert plan.planned_cost <= plan.sumvar_budget and 0 < plan.planned_extra_fraction <= plan.budget
    with pytest.raises(ValidationError, match="over the sumvar_budget"):
        SpeculationSettings.model_validate({**plan.model_dump(), "sumvar_budget": 0.01, "planned_cost": 0.05})
    with pytest.raises(ValidationError, match="over the budget"):
        SpeculationSettings.model_validate({**plan.model_dump(), "planned_extra_fraction": 0.5})


def test_copy_spend_matches_hand_computed_extra_and_kept_seconds() -> None:
    # one task of {1 x 9, 10}: r = 0.1 -> T = 1; only a 10 is copied, at 1: a copy of 1 wins (the original ran 1 + 1 = 2),
    # a copy of 10 loses (it ran 10 - 1 = 9). E[extra] = 0.1 (0.9 x 2 + 0.1 x 9) = 0.27; kept: 1 w.p. 0.9 + 0.09, 10 w.p. 0.01
    extra, kept = copy_spend(TaskStage("j", "map", 1, TWO_POINT), 0.1, np.random.default_rng(0), draws=400_000)
    assert extra == pytest.approx(0.27, rel=0.03) and kept == pytest.approx(0.99 + 0.1, rel=0.03)
    none = copy_spend(TaskStage("j", "map", 3, TWO_POINT), 0.0, np.random.default_rng(0), draws=100_000)
    assert none[0] == 0 and none[1] == pytest.approx(3 * 1.9, rel=0.03)  # no copies: every task kept, 3 x the mean


def test_copy_spend_counts_a_killed_reduces_whole_container_and_the_copys_shuffle() -> None:
    # as above, but each task's container ran before its timed reduce phase: 2 s, the straggler's 5 s (its shuffle
    # waited), and a copy shuffles again: it is a whole past attempt, (2, 1) w.p. 0.9 or (5, 10) w.p. 0.1.
    # T = 1: a copy of 2 + 1 ends at 1 + 3 = 4 < 10 and wins, leaving the original's 5 + 1 + 3 = 9 behind;
    # a copy of 5 + 10 ends at 16 > 10 and loses, having run 10 - 1 = 9. E[extra] = 0.1 (0.9 x 9 + 0.1 x 9) = 0.9;
    # kept: 2 + 1 w.p. 0.9, the copy's 2 + 1 w.p. 0.09, the original's 5 + 10 w.p. 0.01: 2.7 + 0.27 + 0.15
    stage = TaskStage("j", "reduce", 1, TWO_POINT, before=np.array([2.0] * 9 + [5.0]))
    extra, kept = copy_spend(stage, 0.1, np.random.default_rng(0), draws=400_000)
    assert extra == pytest.approx(0.9, rel=0.03) and kept == pytest.approx(2.7 + 0.27 + 0.15, rel=0.03)
    # a shuffle longer than the straggler's overrun: copies of 9 + 1 end at 1 + 10 > 10 and all lose, running 10 - 1 = 9
    slow_shuffle = TaskStage("j", "reduce", 1, TWO_POINT, before=np.full(10, 9.0))
    extra, kept = copy_spend(slow_shuffle, 0.1, np.random.default_rng(0), draws=400_000)
    assert extra == pytest.approx(0.1 * 9, rel=0.03) and kept == pytest.approx(9.0 + 1.9, rel=0.03)
    assert stage.container_seconds == pytest.approx(1.9 + 2.3)  # c_s: whole containers


def test_reduce_makespan_curve_has_its_copies_shuffle_again() -> None:
    # two reduces of {1 x 9, 10}, every container 2 s before its reduce phase; r = 0.1: T = 1, a 10
    # becomes min(10, 1 + 2 + X'): 4 w.p. 0.9, 10 w.p. 0.1 (a map copy would give 2, as above)
    stage = TaskStage("j", "reduce", 2, TWO_POINT, before=np.full(10, 2.0))
    curve = makespan_curve(stage, np.random.default_rng(0), draws=200_000)
    k = int(np.argmin(np.abs(curve.r - 0.1)))
    assert curve.v[k] == pytest.approx(_max_of_two_variance([1, 4, 10], [0.9, 0.09, 0.01]), rel=0.05)


def test_task_stages_keep_a_reduces_container_seconds_before_its_reduce_phase() -> None:
    runs = [_run("wc", d, [1.0, 2.0], []) for d in range(2)]
    runs = [dataclasses.replace(r, reduce_tasks=1, reduce_task_samples=(TaskSample(2.0, 1, container_seconds=5.5),)) for r in runs]
    runs.append(dataclasses.replace(runs[0], run_id="old", reduce_task_samples=(TaskSample(3.0, 1),)))  # a store without container seconds
    by_name = {s.name: s for s in task_stages(runs)[0]}
    assert list(by_name["wc/reduce"].durations) == [2.0, 2.0, 3.0] and list(by_name["wc/reduce"].lead) == [3.5, 3.5, 0.0]
    assert not by_name["wc/map"].lead.any()


def test_spend_calibration_scales_an_overspending_plan_down_and_an_underspending_one_up_within_4x() -> None:
    assert spend_calibration(300.0, 150.0) == 2.0  # spent twice the plan: a target of 400 s is planned as 200 s
    assert spend_calibration(100.0, 200.0) == 0.5  # spent half: 400 s planned as 800 s, which at 0.5 spends 400 s
    assert spend_calibration(30.0, 300.0) == 0.25 and spend_calibration(0.0, 150.0) == 0.25  # raised at most 4 x
    assert spend_calibration(100.0, 400.0, max_raise=2.0) == 0.5
    assert spend_calibration(0.0, 0.0) == 1.0 and spend_calibration(50.0, 0.0) == 1.0  # nothing expected: no evidence


# Targets are container-seconds: 0 or at least a microsecond (below ~1e-300 the product underflows to a subnormal).
@given(st.floats(0, 1e5), st.floats(1e-3, 1e5), st.one_of(st.just(0.0), st.floats(1e-6, 1e5)))
def test_a_calibrated_target_is_expected_to_spend_no_more_than_the_target(spent_s: float, expected_s: float, target: float) -> None:
    planned = target / spend_calibration(spent_s, expected_s)
    assert planned * spent_s / expected_s <= target * (1 + 1e-9) and planned <= 4 * target * (1 + 1e-9)


def test_budget_matching_another_policys_spend_plans_about_that_many_extra_seconds() -> None:
    rng = np.random.default_rng(1)
    stages = [TaskStage(f"j{k}", "map", n, rng.lognormal(2, 0.4, 40) * np.where(rng.random(40) < 0.15, 6.0, 1.0))
              for k, n in enumerate((8, 6, 4))]
    base = sum(s.container_seconds for s in stages)
    assert budget_matching(0.1 * base, stages) == pytest.approx(0.1)
    assert budget_matching(-1.0, stages) == 0 and budget_matching(3 * base, stages) == 1  # B in [0, 1]
    plan = plan_speculation(stages, budget_matching(0.1 * base, stages), runs=5)
    # one T_s is one point of a stage's curve, so the plan may leave unspent what no further point fits in
    assert 0.05 * base <= plan.expected_extra_container_s <= 0.1 * base + 1e-9


def test_linear_cost_is_not_what_copies_spend() -> None:
    # eq. 5.3's c_s r_s prices a copy at a mean task (1.9 here): at r = 0.1 that is 0.1 of the container-seconds,
    # while copies of the stragglers at T = 1 spend 0.27 per task, 0.27 / 1.9 = 0.14 of its container-seconds
    stage = [TaskStage("j", "map", 4, TWO_POINT)]
    assert spent([stage[0].container_seconds], [0.1]) == pytest.approx(0.1)
    assert expected_spend(stage, [0.1])[0] / stage[0].container_seconds == pytest.approx(0.27 / 1.9, rel=0.03)


@hsettings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(2, 10), st.floats(0.3, 2.0), st.floats(0.0, 0.3)), min_size=1, max_size=4),
       st.floats(0.0, 0.6), st.integers(0, 3))
def test_a_plan_is_expected_to_spend_at_most_its_budget_and_leaves_no_point_it_could_afford(
        shapes: list[tuple[int, float, float]], budget: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    stages = [TaskStage(f"j{k}", "map", n, rng.lognormal(0, sigma, 30) * np.where(rng.random(30) < p, 5.0, 1.0))
              for k, (n, sigma, p) in enumerate(shapes)]
    rule = ("progress", "timeout")[seed % 2]
    plan = plan_speculation(stages, budget, runs=3, seed=seed, rule=rule)
    assert plan.rule == rule and plan.planned_extra_fraction <= budget + 1e-9
    if len(stages) == 1:  # one stage: the best of its points that the budget affords (the plan's own draws)
        curve = spend_curve(stages[0], np.random.default_rng(seed))
        assert plan.jobs[0].stages[0].planned_variance == curve.v[curve.at_most(budget)]


def test_rounding_takes_whole_points_by_variance_drop_per_spend_within_the_budget() -> None:
    def curve(u: list[float], v: list[float]) -> SpendCurve:
        return SpendCurve(VarianceCurve.of(np.array(u), np.array(v)), np.array(u), np.array(v), np.linspace(0, 0.5, len(u)))

    a, b = curve([0.0, 0.2, 0.4], [100.0, 40.0, 30.0]), curve([0.0, 0.1, 0.3], [50.0, 45.0, 10.0])
    share = np.array([0.5, 0.5])
    # SumVar's u_s = 0.1 each: b at its first point (0.05 of the budget spent), a at none; 0.10 left: a's first point
    # (drop 60 for 0.10, 600 per unit) beats b's second (35 for 0.10); then nothing fits
    assert rounded([a, b], share, np.array([0.1, 0.1]), 0.15) == [1, 1]
    # SumVar's u_s already at points: kept; budget 0.35: a to 0.2 (0.10), b to 0.3 (0.15), then a to 0.4 (0.10) fits
    assert rounded([a, b], share, np.array([0.2, 0.3]), 0.35) == [2, 2]
    assert rounded([a, b], share, np.array([0.0, 0.0]), 0.0) == [0, 0]


def test_a_gap_in_the_durations_is_crossed_when_the_budget_pays_for_the_early_copies() -> None:
    # session 12's run I: a stage of 15 maps of 20-34 s and 3 of 89-97 s (one slow node). Copies at T in the gap's top
    # lose within seconds, so eq. 5.3's linear cost bought r just below the gap (T = 92.5 s) at a budget that pays
    # for copying all three early; on the spend axis the plan times the stage out below the gap
    grep = TaskStage("grep", "map", 6, np.array([20.5, 20.8, 22.6, 24.2, 24.3, 24.4, 25.0, 25.0, 26.3, 26.8, 29.1, 31.2, 31.7, 31.7,
                                                  33.7, 88.6, 92.5, 97.1]))
    steady = TaskStage("wc", "map", 8, np.linspace(20.0, 34.0, 24))
    plan = plan_speculation([grep, steady], 0.15, runs=3)
    planned = plan.jobs[0].stages[0]
    assert planned.timeout_s is not None and planned.timeout_s < 40 and planned.planned_variance < planned.variance / 2
    assert plan.expected_extra_container_s <= 0.15 * (grep.container_seconds + steady.container_seconds) + 1e-9


def _run(key: str, day: int, maps: list[float], reduces: list[float], outcome: str = "SUCCEEDED") -> JobRun:
    t = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=day)
    return JobRun(run_id=f"{key}-{day}", recurring_key=key, name=f"{key}-{day}", source="test", submit_time=t, start_time=t,
                  finish_time=t + timedelta(minutes=1), input_bytes=1, shuffle_bytes=1, output_bytes=1, map_tasks=len(maps),
                  reduce_tasks=len(reduces), map_task_samples=tuple(TaskSample(s, 1) for s in maps),
                  reduce_task_samples=tuple(TaskSample(s, 1) for s in reduces), outcome=outcome)


def _history(rng: np.random.Generator) -> list[JobRun]:
    runs = [_run("wc", d, list(rng.choice(TWO_POINT, 4 if d else 6)), [2.0, 2.5]) for d in range(5)]
    return runs + [_run("sort", d, [3.0, 3.1, 2.9], [4.0]) for d in range(4)] + [_run("wc", 9, [99.0] * 6, [1.0], outcome="FAILED")]


def test_task_stages_from_history_runs() -> None:
    stages, runs = task_stages(_history(np.random.default_rng(0)))
    assert runs == 9  # the failed run is left out
    by_name = {s.name: s for s in stages}
    assert set(by_name) == {"sort/map", "sort/reduce", "wc/map", "wc/reduce"}
    assert by_name["wc/map"].tasks == 4 and by_name["wc/map"].durations.size == 6 + 4 * 4  # median task count, pooled durations
    assert by_name["sort/reduce"].tasks == 1 and by_name["sort/reduce"].durations.size == 4 and not by_name["sort/reduce"].speculatable
    with pytest.raises(InputError, match="grep"):
        task_stages(_history(np.random.default_rng(0)), keys=["grep"])


def test_job_properties_win_over_the_settings() -> None:
    job = MapReduceJob(name="j", jar="x.jar", inputs=["/in"], output="/out", properties={"mapreduce.map.speculative": "true"})
    merged = with_speculation(job, {"mapreduce.map.speculative": "false", "mapreduce.reduce.speculative": "false"})
    assert merged.properties == {"mapreduce.map.speculative": "true", "mapreduce.reduce.speculative": "false"}
    assert with_speculation(job, {}) is job


def test_cli_yarn_plan_writes_the_settings_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    HistoryStore(tmp_path / "store").append(_history(np.random.default_rng(1)))
    out = tmp_path / "kwiken-yarn.json"
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--budget", "0.1", "--out", str(out)]) == 0
    assert "wc/map" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == "corral-yarn/kwiken-yarn/v3" and {j["key"] for j in doc["jobs"]} == {"wc", "sort"}
    assert SpeculationSettings.model_validate(doc).properties("sort")["mapreduce.reduce.speculative"] == "false"
    assert doc["rule"] == "progress" and SpeculationSettings.model_validate(doc).properties("wc")[RULE] == "progress"
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--budget", "0.1", "--rule", "timeout", "--out", str(out)]) == 0
    assert "timeout rule" in capsys.readouterr().out
    thesis = SpeculationSettings.model_validate_json(out.read_text())
    assert thesis.rule == "timeout" and thesis.properties("wc")[RULE] == "timeout"
    del doc["rule"]
    assert SpeculationSettings.model_validate(doc).rule == "timeout"  # a file written before the rule: the timeout rule it ran


def test_cli_yarn_plan_matches_another_policys_measured_extra_container_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    HistoryStore(tmp_path / "store").append(_history(np.random.default_rng(1)))
    out = tmp_path / "kwiken-yarn.json"
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--match-extra-container-s", "2.5", "--out", str(out)]) == 0
    assert "expected extra container-seconds per run of every job" in capsys.readouterr().out
    plan = SpeculationSettings.model_validate_json(out.read_text())
    stages, _ = task_stages(HistoryStore(tmp_path / "store").runs())
    assert plan.budget == pytest.approx(budget_matching(2.5, stages)) == pytest.approx(2.5 / plan.container_seconds)
    assert 0 < plan.expected_extra_container_s <= 2.5 + 1e-9
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--match-extra-container-s", "1e9", "--out", str(out)]) == 0
    assert SpeculationSettings.model_validate_json(out.read_text()).budget == 1.0  # more than the jobs' own seconds: B is clamped to 1


@pytest.mark.parametrize("args, field", [
    (["--match-extra-container-s", "-1"], "--match-extra-container-s"), (["--match-extra-container-s", "nan"], "--match-extra-container-s"),
    (["--budget", "0.1", "--match-extra-container-s", "3"], "--match-extra-container-s"), ([], "--budget"),
    (["--budget", "1.5"], "--budget"), (["--budget", "x"], "--budget"), (["--budget", "0.1", "--job", "grep"], "--job"),
    (["--budget", "0.1", "--rule", "eager"], "--rule"),
    (["--budget", "0.1", "--scale", "history"], "--scale"),
])
def test_cli_yarn_plan_bad_input_is_exit_2_without_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], field: str) -> None:
    HistoryStore(tmp_path / "store").append(_history(np.random.default_rng(1)))
    out = tmp_path / "s.json"
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--out", str(out), *args]) == 2
    assert field in capsys.readouterr().err and not out.exists()


def test_cli_yarn_plan_without_a_store_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "none"), "--budget", "0.1", "--out", str(out)]) == 2
    assert "--history" in capsys.readouterr().err and not out.exists()
