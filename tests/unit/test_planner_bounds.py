"""LP lower bounds (thesis §4.3.5) are below the heuristic and below the true optimum."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_instances import Instance, instances

from corral_yarn.planner import fast
from corral_yarn.planner.bounds import fluid_srpt, lower_bound, lp_online, mean_busy_time
from corral_yarn.planner.schedule import SCENARIOS, Scenario, effective_arrival, objective

LP_TOLERANCE = 1e-6  # HiGHS's feasibility and optimality tolerances are 1e-7


def list_schedule(order: tuple[int, ...], counts: tuple[int, ...], latency: np.ndarray, arrival: np.ndarray) -> np.ndarray:
    """Finish times when each job in ``order`` starts as soon as r_j racks are free and it has arrived."""
    free = np.zeros(latency.shape[1])
    finish = np.zeros(latency.shape[0])
    for j in order:
        racks = np.argsort(free, kind="stable")[: counts[j]]
        finish[j] = max(free[racks].max(), arrival[j]) + latency[j, counts[j] - 1]
        free[racks] = finish[j]
    return finish


def optimum(scenario: Scenario, latency: np.ndarray, arrival: np.ndarray) -> float:
    """The best objective over every rack count and every order. Any schedule's jobs, listed by start
    time, list-schedule no later (induction on start times), so this is the optimum of all schedules."""
    n_jobs, n_racks = latency.shape
    arrival = effective_arrival(scenario, arrival)
    return min(
        objective(scenario, list_schedule(order, counts, latency, arrival), arrival)
        for counts in itertools.product(range(1, n_racks + 1), repeat=n_jobs)
        for order in itertools.permutations(range(n_jobs))
    )


def assert_below(bound: float, value: float) -> None:
    assert bound <= value * (1 + LP_TOLERANCE) + LP_TOLERANCE, (bound, value)


@settings(max_examples=100, deadline=None)
@given(instances(max_jobs=4, max_racks=3), st.sampled_from(SCENARIOS))
def test_bound_is_below_the_optimum(instance: Instance, scenario: Scenario) -> None:
    latency, arrival = instance
    assert_below(lower_bound(scenario, latency, arrival), optimum(scenario, latency, arrival))


@settings(max_examples=100, deadline=None)
@given(instances(max_jobs=12, max_racks=8), st.sampled_from(SCENARIOS))
def test_bound_is_below_the_heuristic(instance: Instance, scenario: Scenario) -> None:
    latency, arrival = instance
    assert_below(lower_bound(scenario, latency, arrival), fast.plan(scenario, latency, arrival).objective)


def test_brute_force_finds_the_better_order() -> None:
    # one rack; online SPT beats arrival order: job 1 (short) first gives completions 1 and 1 + 5
    latency, arrival = np.array([[5.0], [1.0]]), np.zeros(2)
    assert optimum("online", latency, arrival) == 3.5
    assert fast.plan("online", latency, arrival).objective == 5.5  # arrival ties, then longest first


@settings(max_examples=300, deadline=None)
@given(instances(max_jobs=4, max_racks=3))
def test_mean_busy_time_bound_is_below_the_optimum(instance: Instance) -> None:
    latency, arrival = instance
    assert_below(mean_busy_time(latency, arrival), optimum("online", latency, arrival))


def test_mean_busy_time_bound_is_exact_for_shortest_first_on_one_rack() -> None:
    latency, arrival = np.array([[5.0], [1.0]]), np.zeros(2)
    assert mean_busy_time(latency, arrival) == 3.5 == optimum("online", latency, arrival)


def test_mean_busy_time_bound_is_stronger_when_jobs_arrive_together_and_speed_up_poorly() -> None:
    # two jobs at 0, L(1) = 4, L(2) = 3: LP-Online 3, fluid SRPT 3 (work 2 each); mean busy times
    # 1 and 3 on the fluid machine plus L_min / 2 = 1.5 each give 3.5; the optimum is 4 (both on one rack)
    latency, arrival = np.array([[4.0, 3.0], [4.0, 3.0]]), np.zeros(2)
    assert lp_online(latency) == fluid_srpt(latency, arrival) == 3.0
    assert mean_busy_time(latency, arrival) == 3.5 == lower_bound("online", latency, arrival)
    assert optimum("online", latency, arrival) == 4.0


def test_mean_busy_time_counts_jobs_with_no_work_and_idle_gaps() -> None:
    # job 0 needs nothing; job 1 arrives at 10 after the machine idles: M = 10 + 2 / 2, C - A = 2 + 0
    latency, arrival = np.array([[0.0], [2.0]]), np.array([0.0, 10.0])
    assert mean_busy_time(latency, arrival) == 1.0 == optimum("online", latency, arrival)


def test_mean_busy_time_of_a_subnormal_job_is_not_rounded_above_the_optimum() -> None:
    # hypothesis's counterexample: (1.5 x 5e-324) rounds to 1e-323, so M_j came out 2.0 instead of 1.5
    latency, arrival = np.array([[0.0], [5e-324]]), np.array([0.0, 1.5])
    assert mean_busy_time(latency, arrival) == 0.0 == optimum("online", latency, arrival)
