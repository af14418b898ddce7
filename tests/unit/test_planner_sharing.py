"""Slot-aware rack sharing (docs/planner.md "Slot-aware sharing"): the reference's rule, by hand and by property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_instances import Instance, instances

from corral_yarn.contracts import JobSpec, MRCutePlus, StageSpec, Workload
from corral_yarn.planner import build, reference
from corral_yarn.planner.build import build_plan, slot_demand
from corral_yarn.workloads import w1_like
from corral_yarn.planner.schedule import ORDERS, SCENARIOS, Order, Scenario, SlotDemand
from corral_yarn.sim.run import RunSpec, simulate
from corral_yarn.workloads import example_cluster


def test_two_small_jobs_share_one_rack_over_the_same_interval() -> None:
    latency = np.array([[4.0], [4.0]])
    shared = reference.plan("batch", latency, np.zeros(2), slots=SlotDemand(np.array([[2], [2]]), 4))
    assert shared.start.tolist() == [0.0, 0.0] and shared.objective == 4.0
    whole = reference.plan("batch", latency, np.zeros(2))
    assert whole.start.tolist() == [0.0, 4.0] and whole.objective == 8.0


def test_a_job_waits_for_the_slots_it_needs_and_never_overtakes_on_a_rack() -> None:
    # job 0 (longer, first) takes 3 of 4 slots for 5 s; job 1 needs 2 -> waits until 5; job 2 needs 1
    # and would fit at 0, but starting before job 1 on the rack would overtake a higher priority
    latency = np.array([[5.0], [2.0], [1.0]])
    s = reference.prioritize("batch", latency, np.zeros(3), np.ones(3, dtype=np.int64), slots=SlotDemand(np.array([[3], [2], [1]]), 4))
    assert s.order == (0, 1, 2)
    assert s.start.tolist() == [0.0, 5.0, 5.0]
    assert s.objective == 7.0


def test_jobs_split_across_racks_do_not_share_an_uplink() -> None:
    # two shuffling jobs on both racks would fit in the slots together, but each holds the racks' uplinks
    # (its L_j(2) counts the core bandwidth as its own, §3.1.2): the second waits; map-only ones share
    latency, counts = np.array([[4.0, 3.0], [4.0, 3.0]]), np.array([2, 2])
    shuffling = reference.prioritize("batch", latency, np.zeros(2), counts, slots=SlotDemand(np.full((2, 2), 1), 4))
    assert shuffling.start.tolist() == [0.0, 3.0] and shuffling.objective == 6.0
    map_only = reference.prioritize("batch", latency, np.zeros(2), counts, slots=SlotDemand(np.full((2, 2), 1), 4, core=np.zeros(2, dtype=bool)))
    assert map_only.start.tolist() == [0.0, 0.0] and map_only.objective == 3.0


def test_a_one_rack_job_shares_a_rack_with_a_split_one_and_the_planner_keeps_shuffles_apart() -> None:
    # job 0 on both racks holds their uplinks; job 1 on one rack sends nothing over the core and runs beside it
    latency = np.array([[4.0, 3.0], [2.0, 2.0]])
    s = reference.prioritize("batch", latency, np.zeros(2), np.array([2, 1]), slots=SlotDemand(np.full((2, 2), 1), 4))
    assert s.start.tolist() == [0.0, 0.0]
    # two sorts faster on 2 racks (3 s) than on 1 (4 s): together on 2 racks they queue for the uplinks (6 s),
    # so the planner gives each one rack of its own (4 s), as whole-rack mode would
    both = reference.plan("batch", np.array([[4.0, 3.0], [4.0, 3.0]]), np.zeros(2), slots=SlotDemand(np.full((2, 2), 1), 4))
    assert both.rack_counts.tolist() == [1, 1] and both.objective == 4.0 and both.rack_sets == ((0,), (1,))


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=8, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS))
def test_full_rack_demand_is_the_whole_rack_planner(instance: Instance, scenario: Scenario, order: Order) -> None:
    latency, arrival = instance
    full = SlotDemand(np.full(latency.shape, 3, dtype=np.int64), 3)
    assert reference.plan(scenario, latency, arrival, order, slots=full).same_as(reference.plan(scenario, latency, arrival, order))


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=8, max_racks=4), st.sampled_from(SCENARIOS), st.data())
def test_slot_schedules_respect_capacity_arrival_and_priority(instance: Instance, scenario: Scenario, data: st.DataObject) -> None:
    latency, arrival = instance
    capacity = data.draw(st.integers(1, 4))
    demand = np.array(data.draw(st.lists(st.integers(1, capacity), min_size=latency.size, max_size=latency.size)), dtype=np.int64).reshape(latency.shape)
    counts = np.array(data.draw(st.lists(st.integers(1, latency.shape[1]), min_size=latency.shape[0], max_size=latency.shape[0])), dtype=np.int64)
    core = np.array(data.draw(st.lists(st.booleans(), min_size=latency.shape[0], max_size=latency.shape[0])), dtype=bool)
    s = reference.prioritize(scenario, latency, arrival, counts, slots=SlotDemand(demand, capacity, core=core))
    finish = s.start + latency[np.arange(latency.shape[0]), counts - 1]
    uplink = core & (counts > 1)
    need = demand[np.arange(latency.shape[0]), counts - 1]
    if scenario == "online":
        assert (s.start >= arrival).all()
    for rack in range(latency.shape[1]):
        jobs = [j for j in s.order if rack in s.rack_sets[j]]
        assert [s.start[j] for j in jobs] == sorted(s.start[j] for j in jobs)  # priorities in order on each rack
        for j in jobs:  # usage at every start stays within the rack's slots
            assert sum(need[k] for k in jobs if s.start[k] <= s.start[j] < finish[k]) <= capacity
            if uplink[j] and finish[j] > s.start[j]:  # a job split across racks has their uplinks to itself
                assert not any(uplink[k] and s.start[k] <= s.start[j] < finish[k] for k in jobs if k != j)


def test_slot_demand_is_the_widest_stage_spread_over_the_racks() -> None:
    cluster = example_cluster(racks=3, machines_per_rack=2)  # slots per rack: 2 x map slots per machine
    per_rack = 2 * cluster.map_slots_per_machine
    stage = StageSpec(name="main", input_bytes=1e9, map_tasks=per_rack + 1, reduce_tasks=0, shuffle_bytes=0.0, output_bytes=0.0,
                      map_rate_bytes_per_s=50e6, reduce_rate_bytes_per_s=50e6)
    d = slot_demand([JobSpec(name="a", stages=[stage])], cluster)
    assert d.capacity == per_rack
    expected = [min(per_rack, -(-(per_rack + 1) // r)) for r in (1, 2, 3)]
    assert d.demand[0].tolist() == expected


def test_only_jobs_that_send_data_over_the_core_hold_uplinks() -> None:
    cluster = example_cluster(racks=3, machines_per_rack=2)
    map_only = StageSpec(name="main", input_bytes=1e9, map_tasks=4, reduce_tasks=0, shuffle_bytes=0.0, output_bytes=1e8,
                         map_rate_bytes_per_s=50e6, reduce_rate_bytes_per_s=50e6)
    shuffles = map_only.model_copy(update={"reduce_tasks": 2, "shuffle_bytes": 1e8})
    d = slot_demand([JobSpec(name="grep", stages=[map_only]), JobSpec(name="sort", stages=[shuffles])], cluster)
    assert d.core is not None and d.core.tolist() == [False, True]
    assert not d.uplink(1, 1) and d.uplink(1, 2) and not d.uplink(0, 3)
    # MRCute+ keeping output replicas inside R_j sends them over the core too (docs/model.md)
    inside = cluster.model_copy(update={"model": MRCutePlus(replication=2, output_replicas_leave_racks=False)})
    assert slot_demand([JobSpec(name="grep", stages=[map_only])], inside).uplink(0, 2)


def test_the_simulator_runs_a_slots_plan_with_two_jobs_in_one_rack_at_once() -> None:
    cluster = example_cluster(racks=1, machines_per_rack=2)  # 2 x 8 map slots; each job needs 4
    stage = StageSpec(name="main", input_bytes=4e8, map_tasks=4, reduce_tasks=0, shuffle_bytes=0.0, output_bytes=0.0,
                      map_rate_bytes_per_s=50e6, reduce_rate_bytes_per_s=50e6)
    workload = Workload(jobs=[JobSpec(name=n, recurring_key=n, stages=[stage]) for n in ("a", "b")])
    plan = build_plan(workload, cluster, "batch", sharing="slots", with_bound=False)
    assert [p.planned_start_s for p in plan.jobs] == [0.0, 0.0]
    result = simulate(cluster, workload, RunSpec("corral", scenario="batch"), plan=plan)
    first, finish = [j.first_task_s for j in result.jobs], [j.finish_s for j in result.jobs]
    assert max(first) < min(finish)  # the two jobs' tasks ran in the one rack at the same time


def test_a_plan_id_names_the_algorithm_version_of_its_sharing_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    # plans of a mode change only with a bump of its version (test_planner_hetero pins them), and the bump changes
    # the plan_id of that mode's plans alone: an old plan_id never names a plan made by another algorithm
    cluster, workload = example_cluster(), w1_like(8, seed=2)
    before = {sharing: build_plan(workload, cluster, "batch", sharing=sharing, with_bound=False) for sharing in ("whole-rack", "slots")}
    assert before["slots"].planner_version.endswith("(slots algorithm 2)")
    monkeypatch.setitem(build.ALGORITHM_VERSION, "slots", 3)
    after = {sharing: build_plan(workload, cluster, "batch", sharing=sharing, with_bound=False) for sharing in ("whole-rack", "slots")}
    assert after["slots"].jobs == before["slots"].jobs and after["slots"].plan_id != before["slots"].plan_id
    assert after["whole-rack"].plan_id == before["whole-rack"].plan_id
    monkeypatch.setitem(build.ALGORITHM_VERSION, "whole-rack", 2)
    assert build_plan(workload, cluster, "batch", with_bound=False).plan_id != before["whole-rack"].plan_id
