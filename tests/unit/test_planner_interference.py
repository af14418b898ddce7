"""The interference rule (docs/paragon.md): jobs that slowed each other in history do not share a rack
at the same time when a start of similar cost keeps them apart; from history to the plan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from corral_yarn.contracts import JobSpec, StageSpec, Workload
from corral_yarn.planner import reference
from corral_yarn.planner.build import apart_pairs, build_plan
from corral_yarn.planner.schedule import SlotDemand
from corral_yarn.workloads import example_cluster, w1_like
from estimator.interference import interfering, slowdowns, with_interference
from estimator.records import JobRun

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def shares(schedule, latency, j: int, k: int) -> bool:
    """Whether jobs j and k hold a common rack at a common time."""
    end = schedule.start + latency[np.arange(latency.shape[0]), schedule.rack_counts - 1]
    overlap = schedule.start[j] < end[k] and schedule.start[k] < end[j]
    return overlap and bool(set(schedule.rack_sets[j]) & set(schedule.rack_sets[k]))


def test_interfering_jobs_take_other_racks_at_no_cost() -> None:
    """Two racks of 4 slots, jobs of 2 slots (L 20, 10, 5): job 2 would join job 1 on the rack that frees
    first; as 1 and 2 slowed each other, it joins job 0 instead, at the same start."""
    latency = np.array([[20.0], [10.0], [5.0]]).repeat(2, axis=1)
    counts = np.ones(3, dtype=np.int64)
    demand = np.full((3, 2), 2)
    free = reference.prioritize("batch", latency, np.zeros(3), counts, slots=SlotDemand(demand, 4))
    assert shares(free, latency, 1, 2)
    apart = reference.prioritize("batch", latency, np.zeros(3), counts, slots=SlotDemand(demand, 4, frozenset({(1, 2)})))
    assert not shares(apart, latency, 1, 2) and apart.objective == free.objective and apart.start.tolist() == free.start.tolist()


def test_a_small_delay_is_of_similar_cost_a_large_one_is_not() -> None:
    """One rack, shortest work first: the second job waits for the first only if that is within 10 % of its own L."""
    counts = np.ones(2, dtype=np.int64)
    demand = np.full((2, 1), 2)
    slots = SlotDemand(demand, 4, frozenset({(0, 1)}))
    long_waiter = np.array([[1.0], [100.0]])  # job 0 ends at 1: within 10 % of job 1's 100 s
    s = reference.prioritize("batch", long_waiter, np.zeros(2), counts, "shortest-work", slots)
    assert s.start.tolist() == [0.0, 1.0]
    short_waiter = np.array([[10.0], [5.0]])  # job 1 (5 s) first; waiting 5 s is 50 % of job 0's 10 s: co-located
    s = reference.prioritize("batch", short_waiter, np.zeros(2), counts, "shortest-work", slots)
    assert s.start.tolist() == [0.0, 0.0] and shares(s, short_waiter, 0, 1)


def test_no_interference_and_whole_racks_are_unchanged() -> None:
    cluster, workload = example_cluster(racks=3, machines_per_rack=2), w1_like(6, seed=1)
    marked = Workload(jobs=[j.model_copy(update={"interferes_with": [workload.jobs[(k + 1) % 6].name]}) for k, j in enumerate(workload.jobs)])
    a, b = build_plan(workload, cluster, "batch"), build_plan(marked, cluster, "batch")
    assert [(j.racks, j.planned_start_s) for j in a.jobs] == [(j.racks, j.planned_start_s) for j in b.jobs]  # whole racks never co-locate


def test_apart_pairs_match_names_and_recurring_keys_and_ignore_absent_jobs() -> None:
    jobs = w1_like(3).jobs
    jobs = [jobs[0].model_copy(update={"recurring_key": "daily", "interferes_with": ["nightly", "gone"]}),
            jobs[1].model_copy(update={"recurring_key": "nightly"}), jobs[2].model_copy(update={"interferes_with": [jobs[0].name]})]
    assert apart_pairs(jobs) == frozenset({(0, 1), (0, 2)})


def small_jobs(n: int, seed: int) -> list[JobSpec]:
    """Jobs of 2-12 map tasks: several share a rack of 16 map slots."""
    rng = np.random.default_rng(seed)
    return [JobSpec(name=f"s{k}", stages=[StageSpec(name="main", input_bytes=maps * 128e6, map_tasks=maps, reduce_tasks=1, shuffle_bytes=maps * 1e6,
                                                   output_bytes=1e6, map_rate_bytes_per_s=50e6, reduce_rate_bytes_per_s=50e6)])
            for k, maps in enumerate(rng.integers(2, 13, size=n).tolist())]


def test_plans_with_slots_keep_interfering_jobs_apart() -> None:
    cluster = example_cluster(racks=3, machines_per_rack=2)
    jobs = small_jobs(12, seed=2)  # a seed where, without the rule, pairs overlap in both scenarios (split jobs never share uplinks anyway)
    marked = [j.model_copy(update={"interferes_with": [jobs[k ^ 1].name]}) for k, j in enumerate(jobs)]  # pairs 0-1, 2-3, ...

    def together(plan) -> int:
        out = 0
        for k in range(0, len(jobs), 2):
            a, b = plan.job(jobs[k].name), plan.job(jobs[k + 1].name)
            out += bool(set(a.racks) & set(b.racks)) and a.planned_start_s < b.planned_finish_s and b.planned_start_s < a.planned_finish_s
        return out

    for scenario in ("batch", "online"):
        without = build_plan(Workload(jobs=jobs), cluster, scenario, sharing="slots")
        with_rule = build_plan(Workload(jobs=marked), cluster, scenario, sharing="slots")
        assert together(with_rule) < together(without)


def run(key: str, k: int, start_min: float, minutes: float, racks: tuple[str, ...]) -> JobRun:
    t = T0 + timedelta(minutes=start_min)
    return JobRun(run_id=f"{key}:{k}", recurring_key=key, name=key, source="test", submit_time=t, start_time=t,
                  finish_time=t + timedelta(minutes=minutes), input_bytes=10**9, shuffle_bytes=0, output_bytes=0, racks=racks)


def history() -> list[JobRun]:
    """a and b: 5 min alone, 7 min when together on /r0; c beside a on another rack (no slowdown)."""
    runs = [run("a", 0, 0, 5, ("/r0",)), run("b", 0, 100, 5, ("/r0",)), run("a", 1, 200, 7, ("/r0",)), run("b", 1, 200, 7, ("/r0", "/r1")),
            run("c", 0, 300, 5, ("/r2",)), run("a", 2, 300, 5, ("/r0",)), run("c", 1, 400, 5, ("/r2",))]
    return runs


def test_slowdowns_and_interfering_pairs_from_history() -> None:
    assert slowdowns(history()) == pytest.approx({("a", "b"): 7 / 5, ("b", "a"): 7 / 5})
    assert interfering(history()) == {"a": {"b"}, "b": {"a"}}
    assert interfering(history(), threshold=0.5) == {}


def test_with_interference_marks_the_predicted_jobs() -> None:
    jobs = [j.model_copy(update={"recurring_key": key}) for j, key in zip(w1_like(3).jobs, "abc")]
    marked = with_interference(Workload(jobs=jobs), history())
    assert [j.interferes_with for j in marked.jobs] == [["b"], ["a"], None]
    assert [j.planned_start_s for j in build_plan(marked, example_cluster(racks=2, machines_per_rack=2), "online", sharing="slots").jobs]


def test_a_bad_interference_threshold_is_a_usage_error(tmp_path, capsys) -> None:
    from corral_yarn.cli import main

    out = tmp_path / "jobs.json"
    assert main(["estimate", "--store", str(tmp_path), "--at", "2026-01-09T00:00", "--horizon", "1d", "--out", str(out), "--interference", "-1"]) == 2
    assert "--interference" in capsys.readouterr().err and not out.exists()
