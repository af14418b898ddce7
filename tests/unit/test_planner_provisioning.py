"""The provisioning sequence and the per-candidate lower bounds the fast planner prunes with."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from planner_instances import Instance, instances, slot_demands

from corral_yarn.planner.provisioning import lower_bounds, provisioning
from corral_yarn.planner.reference import prioritize
from corral_yarn.planner.schedule import SCENARIOS, Scenario, SlotDemand


def literal_sequence(latency: np.ndarray) -> list[int]:
    """The widening loop of reference.plan, step by step (§4.3.4)."""
    n_jobs, n_racks = latency.shape
    counts = [1] * n_jobs
    widened = []
    while growable := [j for j in range(n_jobs) if counts[j] < n_racks]:
        longest = max(growable, key=lambda j: (latency[j, counts[j] - 1], -j))
        counts[longest] += 1
        widened.append(longest)
    return widened


@settings(max_examples=200, deadline=None)
@given(instances(max_jobs=8, max_racks=8))
def test_sequence_is_the_reference_widening_loop(instance: Instance) -> None:
    latency, _ = instance
    prov = provisioning(latency)
    assert prov.widened.tolist() == literal_sequence(latency)
    assert prov.candidates == latency.shape[0] * (latency.shape[1] - 1) + 1
    for k in range(prov.candidates):  # the largest L_j(r_j) of every candidate
        counts = prov.counts(k, latency.shape[0])
        assert prov.longest[k] == latency[np.arange(latency.shape[0]), counts - 1].max()


@settings(max_examples=200, deadline=None)
@given(instances(), st.sampled_from(SCENARIOS))
@example((np.array([[66.0, 1.4, 0.0]]), np.zeros(1)), "online")  # L(r) - L(r-1) rounds in float64
def test_bounds_never_exceed_the_prioritized_objective(instance: Instance, scenario: Scenario) -> None:
    latency, arrival = instance
    n_jobs = latency.shape[0]
    prov = provisioning(latency)
    bounds = lower_bounds(scenario, latency, arrival, prov)
    for k in range(prov.candidates):
        counts = prov.counts(k, n_jobs)
        assert bounds.objective[k] <= prioritize(scenario, latency, arrival, counts).objective
        durations = latency[np.arange(n_jobs), counts - 1].tolist()
        weights = counts.tolist() if scenario == "batch" else [1] * n_jobs
        assert bounds.work[k] <= math.fsum(d for d, w in zip(durations, weights) for _ in range(w))  # exact sum


@settings(max_examples=150, deadline=None)
@given(instances(max_jobs=6, max_racks=4), st.sampled_from(SCENARIOS), st.data())
def test_slot_sharing_bounds_never_exceed_the_prioritized_objective(instance: Instance, scenario: Scenario, data: st.DataObject) -> None:
    latency, arrival = instance
    n_jobs = latency.shape[0]
    sharing = data.draw(slot_demands(latency.shape))
    prov = provisioning(latency)
    bounds = lower_bounds(scenario, latency, arrival, prov, sharing)
    for k in range(prov.candidates):
        counts = prov.counts(k, n_jobs)
        assert bounds.objective[k] <= prioritize(scenario, latency, arrival, counts, slots=sharing).objective
        durations = latency[np.arange(n_jobs), counts - 1].tolist()
        need = sharing.demand[np.arange(n_jobs), counts - 1].tolist()
        weights = [c * d for c, d in zip(counts.tolist(), need)] if scenario == "batch" else [1] * n_jobs
        assert bounds.work[k] <= math.fsum(d for d, w in zip(durations, weights) for _ in range(w))  # exact sum


def test_batch_slot_bound_is_the_slot_time_area() -> None:
    # two jobs of 4 s needing 1 of 2 slots on one rack: area 2 x 1 x 4 / (1 x 2) = 4, as long as the longest
    latency = np.array([[4.0], [4.0]])
    sharing = SlotDemand(np.array([[1], [1]]), 2)
    assert lower_bounds("batch", latency, np.zeros(2), provisioning(latency), sharing).objective.tolist() == [4.0]
    whole = SlotDemand(np.array([[2], [2]]), 2)
    assert 8.0 * (1 - 1e-8) < lower_bounds("batch", latency, np.zeros(2), provisioning(latency), whole).objective[0] < 8.0


def test_batch_bounds_longest_job_and_rack_time_area() -> None:
    latency = np.array([[10.0, 6.0], [1.0, 1.0]])
    bounds = lower_bounds("batch", latency, np.zeros(2), provisioning(latency)).objective
    assert bounds[0] == 10.0  # max_j L_j(1), exact
    assert 6.5 * (1 - 1e-8) < bounds[1] < 6.5  # job 0 on 2 racks: area (2 x 6 + 1) / 2, shrunk a little
    assert 7.0 * (1 - 1e-8) < bounds[2] < 7.0  # both on 2 racks: area (2 x 6 + 2 x 1) / 2


def test_online_bound_is_the_mean_duration() -> None:
    latency = np.array([[4.0, 3.0], [2.0, 2.0]])
    bounds = lower_bounds("online", latency, np.array([0.0, 1.0]), provisioning(latency)).objective
    assert bounds.tolist() == pytest.approx([3.0, 2.5, 2.5], rel=1e-8)
    assert np.all(bounds < [3.0, 2.5, 2.5])
