"""Network latency in the planner (issue 18 item 5a): latency-sensitive jobs prefer rack sets of low
latency, the fast planner still returns the reference's Schedule, and without a matrix nothing changes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_instances import NetworkInstance, network_instances

from corral_yarn.contracts import JobSpec, LatencyProfile, Workload
from corral_yarn.errors import InputError, PlanningError
from corral_yarn.nomora.latency import RackLatencyMatrix
from corral_yarn.nomora.perf import PUBLISHED
from corral_yarn.planner import fast, reference
from corral_yarn.planner.build import build_plan
from corral_yarn.planner.network import least_spread, rack_choice
from corral_yarn.planner.schedule import ORDERS, SCENARIOS, Order, Scenario
from corral_yarn.workloads import example_cluster, w1_like

MEMCACHED = PUBLISHED["memcached"]


@settings(max_examples=150, deadline=None)
@given(network_instances(), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS))
def test_fast_equals_reference_with_network_latency(instance: NetworkInstance, scenario: Scenario, order: Order) -> None:
    latency, arrival, rack_us, perf = instance
    network = rack_choice(latency, rack_us, perf)
    expected = reference.plan(scenario, latency, arrival, order, network=network)
    got = fast.plan(scenario, latency, arrival, order, network=network)
    assert got.same_as(expected), (scenario, order, latency.tolist(), arrival.tolist(), rack_us.tolist(), got, expected)


@settings(max_examples=150, deadline=None)
@given(network_instances(), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.data())
def test_no_duration_undercuts_the_floor_table(instance: NetworkInstance, scenario: Scenario, order: Order, data: st.DataObject) -> None:
    # the fast planner prunes with bounds of the floor table: sound only if every rack set's duration is at least it
    latency, _, rack_us, perf = instance
    network = rack_choice(latency, rack_us, perf)
    n_jobs, n_racks = latency.shape
    job = data.draw(st.integers(0, n_jobs - 1))
    racks = data.draw(st.lists(st.integers(0, n_racks - 1), min_size=1, max_size=n_racks, unique=True))
    assert network.duration(job, racks) >= network.floor[job, len(racks) - 1]
    assert network.spread(racks) >= least_spread(network.rack_us)[len(racks) - 1]


@settings(max_examples=100, deadline=None)
@given(network_instances(), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS))
def test_without_sensitive_jobs_the_network_changes_nothing(instance: NetworkInstance, scenario: Scenario, order: Order) -> None:
    latency, arrival, rack_us, _ = instance
    network = rack_choice(latency, rack_us, [None] * latency.shape[0])
    assert reference.plan(scenario, latency, arrival, order, network=network).same_as(reference.plan(scenario, latency, arrival, order))
    assert fast.plan(scenario, latency, arrival, order, network=network).same_as(fast.plan(scenario, latency, arrival, order))


@settings(max_examples=100, deadline=None)
@given(network_instances(), st.sampled_from(SCENARIOS), st.sampled_from([10.0, 300.0]))
def test_a_uniform_matrix_only_slows_sensitive_jobs_down(instance: NetworkInstance, scenario: Scenario, level: float) -> None:
    # every rack set has the same latency: the plan is the thesis's on the table L_j(r) / p_j(level)
    latency, arrival, _, perf = instance
    n_racks = latency.shape[1]
    network = rack_choice(latency, np.full((n_racks, n_racks), level), perf)
    slowed = np.array([row / f(level) if f else row for row, f in zip(latency, perf)])
    assert reference.plan(scenario, latency, arrival, network=network).same_as(reference.plan(scenario, network.floor, arrival))
    assert np.array_equal(network.floor, slowed)


def test_a_sensitive_job_takes_racks_of_one_pod() -> None:
    # pods {0, 2} and {1, 3}: the thesis's first two racks, 0 and 1, are in different pods (500 µs apart)
    pod = np.array([0, 1, 0, 1])
    rack_us = np.where(pod[:, None] == pod[None, :], 20.0, 500.0)
    np.fill_diagonal(rack_us, 5.0)
    arrival = np.zeros(1)
    two = np.array([[100.0, 50.0, 60.0, 49.0]])
    assert reference.plan("batch", two, arrival).rack_sets == ((0, 1, 2, 3),)
    two = np.array([[100.0, 50.0, 60.0, 60.0]])
    assert reference.plan("batch", two, arrival).rack_sets == ((0, 1),)
    network = rack_choice(two, rack_us, [MEMCACHED])
    schedule = reference.plan("batch", two, arrival, network=network)
    assert schedule.rack_sets == ((0, 2),) and schedule.objective == 50.0
    assert fast.plan("batch", two, arrival, network=network).same_as(schedule)
    assert rack_choice(two, rack_us, [None]).duration(0, (0, 1, 2, 3)) == 60.0
    assert network.duration(0, (0, 1, 2, 3)) == pytest.approx(60.0 / MEMCACHED(500.0))


def test_a_sensitive_job_waits_for_its_near_racks_when_that_finishes_first() -> None:
    # racks 0 and 2 (near each other) are busy until 10; the free pair {1, 3} is 500 µs apart
    rack_us = np.full((4, 4), 500.0)
    rack_us[0, 2] = rack_us[2, 0] = 20.0
    np.fill_diagonal(rack_us, 5.0)
    network = rack_choice(np.array([[10.0] * 4, [80.0, 40.0, 40.0, 40.0]]), rack_us, [None, MEMCACHED])
    free_at = np.array([10.0, 0.0, 10.0, 0.0])
    racks, duration = network.racks(1, 2, free_at, 0.0)
    assert sorted(racks.tolist()) == [0, 2] and duration == 40.0  # finishes at 50, not at 40 / 0.27 = 147
    insensitive, took = network.racks(0, 2, free_at, 0.0)
    assert sorted(insensitive.tolist()) == [1, 3] and took == 10.0  # the thesis's rule


def test_network_inputs_are_checked() -> None:
    with pytest.raises(PlanningError):
        rack_choice(np.ones((2, 3)), np.zeros((2, 2)), [None, None])
    with pytest.raises(PlanningError):
        rack_choice(np.ones((1, 2)), np.zeros((2, 2)), [lambda latency: 0.0])


def _workload(profile: object | None, n_jobs: int = 10) -> Workload:
    jobs = w1_like(n_jobs, seed=5, arrival_span_s=60).jobs
    sensitive = [j.model_copy(update={"latency_profile": profile if i % 2 == 0 else None}) for i, j in enumerate(jobs)]
    return Workload(jobs=[JobSpec.model_validate(j.model_dump()) for j in sensitive])


def _schedule_fields(plan_json: dict) -> dict:
    return {k: v for k, v in plan_json.items() if k not in ("plan_id", "inputs_sha256")}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_without_a_matrix_plans_are_as_before(scenario: Scenario) -> None:
    cluster = example_cluster(racks=4, machines_per_rack=3)
    plain, profiled = _workload(None), _workload("memcached")
    before = build_plan(plain, cluster, scenario).model_dump(mode="json")
    assert "rack_set_latency_us" not in json.dumps(before) and "latency_profile" not in json.dumps(plain.model_dump(mode="json"))
    with_profiles = build_plan(profiled, cluster, scenario)
    assert [p.latency_function for p in with_profiles.jobs] == [
        "memcached" if j.latency_profile else None for j in sorted(profiled.jobs, key=lambda j: with_profiles.job(j.name).order)]
    for job in (with_profiles := with_profiles.model_dump(mode="json"))["jobs"]:
        job.pop("latency_function", None)  # what the submitter tags; the schedule is the same
    assert _schedule_fields(with_profiles) == _schedule_fields(before)
    # a matrix but no latency-sensitive job: the same schedule, with each rack set's latency reported
    matrix = RackLatencyMatrix(tuple(cluster.rack_names), np.full((4, 4), 50.0))
    with_matrix = build_plan(plain, cluster, scenario, rack_latency=matrix)
    assert [(j.racks, j.planned_start_s, j.planned_finish_s) for j in with_matrix.jobs] == [(j["racks"], j["planned_start_s"], j["planned_finish_s"]) for j in before["jobs"]]
    assert all(j.rack_set_latency_us == 50.0 and j.expected_performance is None for j in with_matrix.jobs)
    assert with_matrix.plan_id != before["plan_id"]  # the matrix is an input of the plan


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("implementation", ["fast", "reference"])
def test_build_plan_keeps_sensitive_jobs_in_one_pod(scenario: Scenario, implementation: str) -> None:
    cluster = example_cluster(racks=4, machines_per_rack=3)
    names = cluster.rack_names
    pod = {names[0]: 0, names[1]: 1, names[2]: 0, names[3]: 1}
    rack_us = np.array([[5.0 if a == b else 20.0 if pod[a] == pod[b] else 800.0 for b in names] for a in names])
    workload = _workload("memcached", n_jobs=8)
    plan = build_plan(workload, cluster, scenario, implementation=implementation, rack_latency=RackLatencyMatrix(tuple(names), rack_us))
    for planned, job in zip(sorted(plan.jobs, key=lambda p: p.name), sorted(workload.jobs, key=lambda j: j.name)):
        if job.latency_profile is not None:
            assert len({pod[r] for r in planned.racks}) == 1 and planned.expected_performance == 1.0, planned
    other = build_plan(workload, cluster, scenario, implementation="reference" if implementation == "fast" else "fast",
                       rack_latency=RackLatencyMatrix(tuple(names), rack_us))
    assert other.model_dump() == plan.model_dump()


def test_a_fitted_profile_and_bad_ones_name_the_field() -> None:
    cluster = example_cluster(racks=3, machines_per_rack=2)
    points = [{"latency_us": 100.0, "perf": 0.9}, {"latency_us": 300.0, "perf": 0.6}, {"latency_us": 600.0, "perf": 0.3}]
    fitted = LatencyProfile.model_validate({"threshold_us": 50.0, "points": points, "degree": 1})
    matrix = RackLatencyMatrix(tuple(cluster.rack_names), np.array([[5.0, 400.0, 400.0], [400.0, 5.0, 400.0], [400.0, 400.0, 5.0]]))
    plan = build_plan(_workload(fitted, 4), cluster, "batch", rack_latency=matrix)
    assert any(p.expected_performance == 1.0 for p in plan.jobs)
    assert {p.latency_function for p in plan.jobs} == {"custom", None}  # the job's own points: tagged corral-latency:custom
    too_few = LatencyProfile.model_validate({"threshold_us": 500.0, "points": points, "degree": 3})
    with pytest.raises(InputError, match=r"jobs\[0\] \(.*\)\.latency_profile: points"):
        build_plan(_workload(too_few, 4), cluster, "batch", rack_latency=matrix)
    with pytest.raises(InputError, match="names: rack '/rack-03' of the cluster is not in the latency matrix"):
        build_plan(_workload("spark", 4), example_cluster(racks=4, machines_per_rack=2), "batch", rack_latency=matrix)
    with pytest.raises(InputError, match="latency_file"):
        build_plan(_workload("spark", 4), cluster, "batch", rack_latency=matrix, sharing="slots")


def test_a_floor_absorbed_by_its_arrival_does_not_doom_a_tied_candidate() -> None:
    # found by hypothesis: 1.0 + 1.4e-286 == 1.0, so [1, 2] racks complete job 1 at once, as [1, 3] do; the
    # fast planner's online give-up counted the later floor exactly and skipped [1, 2], which the reference keeps
    latency = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 1.421534973615099e-286, 0.0, 0.0]])
    arrival = np.array([0.0, 1.0])
    network = rack_choice(latency, np.zeros((4, 4)), [None, None])
    expected = reference.plan("online", latency, arrival, "thesis", network=network)
    assert expected.rack_counts.tolist() == [1, 2]
    assert fast.plan("online", latency, arrival, "thesis", network=network).same_as(expected)
