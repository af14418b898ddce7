"""The fast planner returns exactly the reference's Schedule (thesis §4.3.4, Fig. 4.2), with whole racks
and with slot-aware sharing (docs/planner.md)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_instances import Instance, instances, slot_demands

from corral_yarn.errors import PlanningError
from corral_yarn.model import default_alpha, latency_table
from corral_yarn.planner import fast, reference, slots
from corral_yarn.planner.build import slot_demand
from corral_yarn.planner.provisioning import provisioning
from corral_yarn.planner.schedule import ORDERS, SCENARIOS, Order, Scenario, SlotDemand, effective_arrival
from corral_yarn.workloads import example_cluster, w1_like


def assert_same(scenario: Scenario, latency: np.ndarray, arrival: np.ndarray, order: Order = "thesis", sharing: SlotDemand | None = None, **tuning: int) -> None:
    expected = reference.plan(scenario, latency, arrival, order, slots=sharing)
    got = fast.plan(scenario, latency, arrival, order, slots=sharing, **tuning)
    demand = None if sharing is None else (sharing.demand.tolist(), sharing.capacity)
    assert got.same_as(expected), (scenario, order, latency.tolist(), arrival.tolist(), demand, got, expected)


@settings(max_examples=300, deadline=None)
@given(instances(), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS))
def test_fast_equals_reference(instance: Instance, scenario: Scenario, order: Order) -> None:
    assert_same(scenario, *instance, order)


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=12, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.integers(1, 4), st.integers(1, 5))
def test_fast_equals_reference_resuming_from_checkpoints(instance: Instance, scenario: Scenario, order: Order, every: int, chunk: int) -> None:
    # tiny checkpoint intervals and chunks exercise resuming mid-order and chunk boundaries
    assert_same(scenario, *instance, order, checkpoint_every=every, steps_per_chunk=chunk)


@settings(max_examples=200, deadline=None)
@given(instances(max_jobs=10, max_racks=5), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.data())
def test_no_prefix_gives_up_on_a_candidate_that_beats_the_best(instance: Instance, scenario: Scenario, order: Order, data: st.DataObject) -> None:
    # with "best" just above a candidate's objective, the give-up test must not fire on any prefix
    latency, arrival = instance
    n_jobs, n_racks = latency.shape
    prov = provisioning(latency)
    counts = prov.counts(data.draw(st.integers(0, prov.candidates - 1)), n_jobs)
    objective = reference.prioritize(scenario, latency, arrival, counts, order).objective
    durations = latency[np.arange(n_jobs), counts - 1].tolist()
    weights = counts.tolist() if scenario == "batch" else [1] * n_jobs
    work = math.fsum(d for d, w in zip(durations, weights) for _ in range(w))
    run = fast.IncrementalPrioritization(scenario, latency, arrival, counts, 1, order)
    assert run.objective(math.inf, work) == objective
    best = objective * (1 + 1e-6) + 1e-6
    for prefix, neg_free, racks in run.checkpoints[1:]:
        assert work < run.doomed_work(best, prefix, neg_free, racks), (prefix, objective)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("span", [0.0, 300.0])
def test_fast_equals_reference_on_a_w1_like_workload(scenario: Scenario, order: Order, span: float) -> None:
    cluster = example_cluster(racks=8, machines_per_rack=4)
    jobs = w1_like(40, seed=3, arrival_span_s=span).jobs
    latency = latency_table(jobs, cluster, default_alpha(cluster))[1]
    arrival = np.array([j.arrival_s for j in jobs])
    assert_same(scenario, latency, arrival, order)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("order", ORDERS)
def test_many_identical_jobs(scenario: Scenario, order: Order) -> None:
    latency = np.tile([6.0, 3.0, 3.0, 2.0], (40, 1))
    assert_same(scenario, latency, np.zeros(40), order, checkpoint_every=3)


@pytest.mark.parametrize(
    ("latency", "arrival"),
    [
        (np.array([[1.0, -1.0]]), np.zeros(1)),
        (np.array([[np.nan, 1.0]]), np.zeros(1)),
        (np.array([[1.0, 2.0]]), np.array([np.inf])),
        (np.ones((2, 2)), np.zeros(3)),
        (np.ones((2, 0)), np.zeros(2)),
        (np.ones((0, 2)), np.zeros(0)),
    ],
)
def test_rejects_tables_it_cannot_plan_exactly(latency: np.ndarray, arrival: np.ndarray) -> None:
    with pytest.raises(PlanningError):
        fast.plan("batch", latency, arrival)


@settings(max_examples=300, deadline=None)
@given(instances(max_jobs=8, max_racks=5), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.data())
def test_fast_equals_reference_with_slot_sharing(instance: Instance, scenario: Scenario, order: Order, data: st.DataObject) -> None:
    latency, arrival = instance
    assert_same(scenario, latency, arrival, order, data.draw(slot_demands(latency.shape)))


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=10, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.integers(1, 4), st.integers(1, 5), st.data())
def test_fast_equals_reference_with_slot_sharing_resuming_from_checkpoints(instance: Instance, scenario: Scenario, order: Order, every: int, chunk: int,
                                                                         data: st.DataObject) -> None:
    latency, arrival = instance
    assert_same(scenario, latency, arrival, order, data.draw(slot_demands(latency.shape)), checkpoint_every=every, steps_per_chunk=chunk)


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=10, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.integers(1, 3), st.data())
def test_fast_equals_reference_with_slot_sharing_and_sparse_give_up_tests(instance: Instance, scenario: Scenario, order: Order, every: int,
                                                                        data: st.DataObject) -> None:
    # batch tests and saves prefix states ever more sparsely deep in the order (fast._test_spacing); here from the first test on
    latency, arrival = instance
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast, "DENSE_TESTS", 1)
        assert [fast._test_spacing(jobs, 1) for jobs in range(1, 9)] == [1, 2, 2, 4, 4, 4, 4, 8]
        assert_same(scenario, latency, arrival, order, data.draw(slot_demands(latency.shape)), checkpoint_every=every)


@settings(max_examples=200, deadline=None)
@given(instances(max_jobs=10, max_racks=5), st.sampled_from(SCENARIOS), st.data())
def test_slot_prioritization_is_the_reference_one(instance: Instance, scenario: Scenario, data: st.DataObject) -> None:
    latency, arrival = instance
    n_jobs, n_racks = latency.shape
    sharing = data.draw(slot_demands(latency.shape))
    counts = np.array(data.draw(st.lists(st.integers(1, n_racks), min_size=n_jobs, max_size=n_jobs)), dtype=np.int64)
    expected = reference.prioritize(scenario, latency, arrival, counts, slots=sharing)
    assert slots.prioritize(scenario, latency, arrival, counts, list(expected.order), sharing).same_as(expected)


@settings(max_examples=200, deadline=None)
@given(instances(max_jobs=10, max_racks=5), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.data())
def test_no_slot_prefix_gives_up_on_a_candidate_that_beats_the_best(instance: Instance, scenario: Scenario, order: Order, data: st.DataObject) -> None:
    # the slot-time (batch) and last-start (online) give-up tests must hold on every prefix
    latency, arrival = instance
    n_jobs, n_racks = latency.shape
    sharing = data.draw(slot_demands(latency.shape))
    prov = provisioning(latency)
    counts = prov.counts(data.draw(st.integers(0, prov.candidates - 1)), n_jobs)
    objective = reference.prioritize(scenario, latency, arrival, counts, order, sharing).objective
    durations = latency[np.arange(n_jobs), counts - 1].tolist()
    need = sharing.demand[np.arange(n_jobs), counts - 1].tolist()
    weights = [c * d for c, d in zip(counts.tolist(), need)] if scenario == "batch" else [1] * n_jobs
    work = math.fsum(d for d, w in zip(durations, weights) for _ in range(w))
    run = fast.SlotPrioritization(scenario, latency, arrival, counts, 1, order, sharing)
    assert run.objective(math.inf, work) == objective
    best = objective * (1 + 1e-6) + 1e-6
    for prefix, snapshot in run.checkpoints[1:]:
        assert work < run.doomed_work(best, prefix, slots.RackSlots(n_racks, sharing.capacity, snapshot)), (prefix, objective)


@settings(max_examples=100, deadline=None)
@given(instances(max_jobs=8, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS))
def test_whole_rack_demand_is_the_whole_rack_fast_planner(instance: Instance, scenario: Scenario, order: Order) -> None:
    latency, arrival = instance
    full = SlotDemand(np.full(latency.shape, 5, dtype=np.int64), 5)
    assert fast.plan(scenario, latency, arrival, order, slots=full).same_as(fast.plan(scenario, latency, arrival, order))


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=10, max_racks=4), st.sampled_from(SCENARIOS), st.sampled_from(ORDERS), st.data())
def test_slot_candidates_walked_from_one_state_keep_their_own_placements(instance: Instance, scenario: Scenario, order: Order, data: st.DataObject) -> None:
    # the fast planner returns the winner as its prioritization placed it: copies walked from one state (gallop
    # probes) and that state walked on (the sweep) must each place their candidate as slots.prioritize does
    latency, arrival = instance
    n_jobs = latency.shape[0]
    sharing = data.draw(slot_demands(latency.shape))
    prov = provisioning(latency)
    source_k = data.draw(st.integers(0, prov.candidates - 1))
    targets = data.draw(st.lists(st.integers(source_k, prov.candidates - 1), min_size=1, max_size=4))
    effective = effective_arrival(scenario, arrival)
    source = fast.SlotPrioritization(scenario, latency, arrival, prov.counts(source_k, n_jobs), 1, order, sharing)

    def walk(run: fast.SlotPrioritization, at: int, k: int) -> None:
        run.widen(fast.Steps.of(order, latency, effective, prov.widened[at:k], prov.new_count[at:k]), 0, k - at)
        assert run.objective(math.inf, 0.0) is not None
        expected = reference.prioritize(scenario, latency, arrival, prov.counts(k, n_jobs), order, sharing)
        assert run.placed(scenario, latency, arrival)().same_as(expected), (k, source_k, targets)

    walk(source, source_k, source_k)
    for k in targets:
        walk(source.copy(), source_k, k)
    walk(source, source_k, targets[-1])


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("span", [0.0, 300.0])
def test_fast_equals_reference_with_slot_sharing_on_a_w1_like_workload(scenario: Scenario, order: Order, span: float) -> None:
    cluster = example_cluster(racks=5, machines_per_rack=4)  # 32 slots per rack: small jobs share, large ones do not
    jobs = w1_like(20, seed=5, arrival_span_s=span).jobs
    latency = latency_table(jobs, cluster, default_alpha(cluster))[1]
    assert_same(scenario, latency, np.array([j.arrival_s for j in jobs]), order, slot_demand(jobs, cluster))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_many_identical_small_jobs_share_racks(scenario: Scenario) -> None:
    latency = np.tile([6.0, 3.0, 3.0, 2.0], (30, 1))
    assert_same(scenario, latency, np.zeros(30), "thesis", SlotDemand(np.tile([2, 1, 1, 1], (30, 1)), 3), checkpoint_every=3)


def test_rejects_a_slot_demand_it_cannot_plan() -> None:
    with pytest.raises(PlanningError, match="slot demand"):
        fast.plan("batch", np.ones((2, 2)), np.zeros(2), slots=SlotDemand(np.array([[1, 2], [3, 1]]), 2))


@pytest.mark.parametrize("seed", range(6))
def test_slot_prioritization_splitting_rows_of_racks_in_one_state(seed: int) -> None:
    # slots.RackSlots keeps racks in the same state in one row and splits a row when a job takes part
    # of it: integer durations and equal widths make ties in F_i across rows, which the (F_i, i) rule
    # breaks by rack index, interleaving the rows' racks
    rng = np.random.default_rng(seed)
    n_jobs, n_racks, capacity = 14, 9, 4
    latency = rng.integers(1, 4, size=(n_jobs, n_racks)).astype(float)
    sharing = SlotDemand(rng.integers(1, capacity + 1, size=(n_jobs, n_racks)), capacity)
    counts = rng.choice([1, 2, 3, 5, n_racks], size=n_jobs)
    for scenario in SCENARIOS:
        arrival = rng.integers(0, 5, size=n_jobs).astype(float)
        expected = reference.prioritize(scenario, latency, arrival, counts, slots=sharing)
        assert slots.prioritize(scenario, latency, arrival, counts, list(expected.order), sharing).same_as(expected), (seed, scenario)


def test_racks_in_one_state_share_a_row() -> None:
    racks = slots.RackSlots(400, 8)
    for need in (3, 2, 1):  # full-width jobs keep every rack in the same state
        racks.place(0.0, need, 400, 5.0)
    assert racks.rows == 1
    start, chosen = racks.place(0.0, 3, 150, 1.0)  # 6 + 3 > 8: waits for them to end; F_i ties: racks 0..149
    assert start == 5.0 and chosen.tolist() == list(range(150)) and racks.rows == 2
    assert racks.earliest(0.0, 8).tolist() == [6.0] * 150 + [5.0] * 250 and racks.last_starts().tolist() == [5.0] * 150 + [0.0] * 250


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_slot_sharing_with_arrivals_before_zero(scenario: Scenario) -> None:
    # an untouched rack holds no uplink: a split job arriving before 0 starts at its arrival, as in the reference
    latency = np.array([[2.0, 1.0], [2.0, 1.0], [3.0, 2.5]])
    assert_same(scenario, latency, np.array([-5.0, -4.0, -4.5]), "thesis", SlotDemand(np.array([[1, 1], [1, 1], [2, 1]]), 2))


def test_a_job_on_racks_idle_at_its_arrival_takes_them_at_once() -> None:
    # RackSlots._idle: the r_j racks freeing first are free at A_j, so the job starts at A_j on them; a rack
    # sharing a row with others moves to a row of its own, and the others keep theirs
    racks = slots.RackSlots(6, 4)
    racks.place(0.0, 4, 6, 2.0, uplink=True)  # every rack in one row, F_i = U_i = 2
    start, chosen = racks.place(0.0, 1, 1, 1.0)  # not idle at 0: waits until 2, by the general rule, on rack 0
    assert (start, chosen.tolist(), racks.rows) == (2.0, [0], 2)
    start, chosen = racks.place(5.0, 3, 1, 4.0)  # racks 1..5 free since 2 (rack 0 since 3): rack 1, in a row of its own
    assert (start, chosen.tolist(), racks.rows) == (5.0, [1], 3)
    start, chosen = racks.place(5.0, 2, 3, 1.0, uplink=True)  # the 3 smallest (F_i, i): racks 2, 3, 4 (F 2; rack 0 has 3)
    assert (start, sorted(chosen.tolist())) == (5.0, [2, 3, 4])
    assert racks.earliest(5.0, 4, uplink=True).tolist() == [5.0, 9.0, 6.0, 6.0, 6.0, 5.0]
    latency = np.array([[2.0] * 6, [1.0] * 6, [4.0] * 6, [1.0] * 6])
    demand = SlotDemand(np.array([[4] * 6, [1] * 6, [3] * 6, [2] * 6]), 4)
    counts, arrival = np.array([6, 1, 1, 3]), np.array([0.0, 0.0, 5.0, 5.0])
    expected = reference.prioritize("online", latency, arrival, counts, slots=demand)
    assert slots.prioritize("online", latency, arrival, counts, list(expected.order), demand).same_as(expected)


def _crowded_at(run: fast.SlotPrioritization, n_racks: int, capacity: int, limit: float) -> list[bool]:
    """``crowded(limit)`` at every saved prefix state of ``run``."""
    return [run.crowded(limit, slots.RackSlots(n_racks, capacity, snapshot), *run._later(prefix.jobs)) for prefix, snapshot in run.checkpoints[1:]]


@settings(max_examples=200, deadline=None)
@given(instances(max_jobs=10, max_racks=5), st.sampled_from(ORDERS), st.data())
def test_no_slot_prefix_is_crowded_below_the_makespan_it_reaches(instance: Instance, order: Order, data: st.DataObject) -> None:
    # the room-by-free-slots give-up test (batch) must never fire for a limit the candidate's own makespan stays within
    latency, arrival = instance
    n_jobs, n_racks = latency.shape
    sharing = data.draw(slot_demands(latency.shape))
    prov = provisioning(latency)
    counts = prov.counts(data.draw(st.integers(0, prov.candidates - 1)), n_jobs)
    run = fast.SlotPrioritization("batch", latency, arrival, counts, 1, order, sharing)
    makespan = run.objective(math.inf, 0.0)
    assert makespan == reference.prioritize("batch", latency, arrival, counts, order, sharing).objective
    assert not any(_crowded_at(run, n_racks, sharing.capacity, makespan)), makespan


@settings(max_examples=60, deadline=None)
@given(instances(max_jobs=6, max_racks=3), st.data())
def test_the_crowded_test_is_below_the_best_order_of_the_later_jobs(instance: Instance, data: st.DataObject) -> None:
    # brute force: after a prefix of the thesis order, no order of the later jobs (each placed by the slot rule)
    # finishes before a limit at which the prefix is crowded; the test counts room, not an order
    latency, arrival = instance
    n_jobs, n_racks = latency.shape
    sharing = data.draw(slot_demands(latency.shape))
    counts = provisioning(latency).counts(data.draw(st.integers(0, n_jobs * (n_racks - 1))), n_jobs)
    run = fast.SlotPrioritization("batch", latency, arrival, counts, 1, "thesis", sharing)
    run.objective(math.inf, 0.0)
    for prefix, snapshot in run.checkpoints[1:]:
        head = [key[3] for key in run.order[: prefix.jobs]]
        rest = [key[3] for key in run.order[prefix.jobs :]]
        best = min(slots.prioritize("batch", latency, arrival, counts, head + list(tail), sharing).objective for tail in itertools.permutations(rest))
        assert not run.crowded(best, slots.RackSlots(n_racks, sharing.capacity, snapshot), *run._later(prefix.jobs)), (prefix.jobs, best)


def test_a_prefix_is_crowded_when_full_rack_jobs_find_no_free_rack_in_time() -> None:
    # a job on both racks holds 1 of 4 slots of each until 10; two later 4-slot jobs of 6 s cannot start before
    # 10, so none of them ends before 16: crowded for a limit of 12, not for 16 (their makespan)
    latency = np.array([[20.0, 10.0], [6.0, 6.0], [6.0, 6.0]])
    sharing = SlotDemand(np.array([[1, 1], [4, 4], [4, 4]]), 4)
    run = fast.SlotPrioritization("batch", latency, np.zeros(3), np.array([2, 1, 1]), 1, "thesis", sharing)
    assert run.objective(math.inf, 0.0) == 16.0
    after_the_wide_job = [crowded for (prefix, _), crowded in zip(run.checkpoints[1:], _crowded_at(run, 2, 4, 12.0)) if prefix.jobs == 1]
    assert after_the_wide_job == [True]
    assert not any(_crowded_at(run, 2, 4, 16.0))
    # the slot-time area alone does not see it: (20 blocked + 48 later) / 8 slots = 8.5 s < 12
    prefix, snapshot = run.checkpoints[1]
    assert run.doomed_work(12.0, prefix, slots.RackSlots(2, 4, snapshot)) > 20.0 + 48.0  # the slot-time of all three


def test_a_later_full_width_job_blocks_the_jobs_that_cannot_share_a_rack_with_it() -> None:
    # online, 2 racks of 4 slots: A (at 0, 1 rack, 1 slot, 1 s); F (at 1, both racks, 1 slot each, 10 s, no shuffle);
    # B (at 2, 1 rack, all 4 slots, 1 s) cannot share a rack with F, so it starts when F ends at 11; C (at 2.5, 3 slots,
    # 1 s) fits beside F on rack 1 (rack 0 waits for B): completions 1, 10, 10, 1
    latency = np.array([[1.0, 1.0], [20.0, 10.0], [1.0, 1.0], [1.0, 1.0]])
    sharing = SlotDemand(np.array([[1, 1], [1, 1], [4, 4], [3, 3]]), 4, core=np.zeros(4, dtype=bool))
    arrival, counts = np.array([0.0, 1.0, 2.0, 2.5]), np.array([1, 2, 1, 1])
    assert reference.prioritize("online", latency, arrival, counts, "thesis", sharing).objective == 22.0 / 4
    run = fast.SlotPrioritization("online", latency, arrival, counts, 1, "thesis", sharing)
    racks = slots.RackSlots(2, 4)
    racks.place(0.0, 1, 1, 1.0)
    after_a = fast.Prefix(1, run.order[0], 1.0, 1.0, 1.0, 1.0)
    assert run._waiting_after(after_a, 0.0, 0.0) == (9.0, 11.0)  # B waits from 2 to 11; F and C do not wait
    assert fast.IncrementalPrioritization._waiting_after(run, after_a, 0.0, 0.0)[0] == 0.0  # without the rule: after F's start
    durations = 13.0
    assert durations >= run.doomed_work(5.4, after_a, racks)  # gives up below the objective of 5.5 ...
    assert durations < run.doomed_work(5.5 * (1 + 1e-9), after_a, racks)  # ... not above it
