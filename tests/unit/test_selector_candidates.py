"""Candidate tuples <N, B> from MRCute: every one meets the deadline with slack, B is the least on the
grid, the frontier trades N for B, and faster tuples finish earlier (thesis §3.1.2, §4.2, §4.4.4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from corral_yarn.contracts import JobSpec, StageSpec
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import MBPS, CandidateRules, candidate_space, latency, least_bandwidth, useful_vms, vm_profile

PROFILE = vm_profile(125e6)


def _job(vms: int, map_waves: int, reduce_waves: int, rate_mbps: float) -> JobSpec:
    map_tasks = vms * map_waves
    stage = StageSpec(
        name="main", input_bytes=map_tasks * 256e6, map_selectivity=1.0, reduce_selectivity=1.0,
        map_tasks=map_tasks, reduce_tasks=vms * reduce_waves,
        map_rate_bytes_per_s=rate_mbps * MBPS, reduce_rate_bytes_per_s=rate_mbps * MBPS,
    )
    return JobSpec(name="j", stages=[stage])


def _deadline(job: JobSpec, vms: int, mbps: int) -> float:
    return float(latency(job, PROFILE, np.array([vms]), np.array([mbps * MBPS]))[0])


@settings(max_examples=60, deadline=None)
@example(vms=2, map_waves=3, reduce_waves=3, mbps=126, slack=0.5)  # a tie within rounding
@given(st.integers(2, 80), st.integers(1, 6), st.integers(1, 4), st.integers(50, 900), st.sampled_from([0.0, 0.2, 0.5]))
def test_every_candidate_meets_the_deadline_with_slack(vms, map_waves, reduce_waves, mbps, slack):
    job = _job(vms, map_waves, reduce_waves, 400.0)
    deadline = _deadline(job, vms, mbps)
    space = candidate_space(job, PROFILE, deadline, vms, CandidateRules(slack=slack, max_candidates=1000))
    for c in space.frontier + space.faster:
        assert c.latency_s * (1 + slack) <= deadline * (1 + 1e-9)
        assert c.latency_s == pytest.approx(_deadline(job, c.vms, c.bandwidth // MBPS))
    for c in space.frontier:  # B is the least on the grid: one quantum less misses the deadline
        if c.bandwidth > MBPS:
            assert _deadline(job, c.vms, c.bandwidth // MBPS - 1) * (1 + slack) > deadline * (1 - 1e-9)
    ns, bs = [c.vms for c in space.frontier], [c.bandwidth for c in space.frontier]
    assert ns == sorted(ns) and all(b1 > b2 for b1, b2 in zip(bs, bs[1:]))  # more VMs, less bandwidth
    if slack == 0.0:
        assert space.baseline is not None and space.baseline.vms == vms and space.baseline.bandwidth <= mbps * MBPS


def test_malleability_gives_several_tuples_and_faster_ones():
    job = _job(50, 4, 2, 500.0)
    space = candidate_space(job, PROFILE, _deadline(job, 50, 150), 50, CandidateRules())
    assert len(space.frontier) >= 3
    assert min(c.vms for c in space.frontier) < 50 < max(c.vms for c in space.frontier)
    fastest = min(space.faster, key=lambda c: c.latency_s)
    assert fastest.latency_s < 0.75 * min(c.latency_s for c in space.frontier)
    assert set(space.frontier) <= set(space.faster)


def test_more_slack_needs_more_resources():
    job = _job(40, 3, 2, 300.0)
    deadline = _deadline(job, 40, 400)
    loose = candidate_space(job, PROFILE, deadline, 40, CandidateRules(slack=0.0))
    tight = candidate_space(job, PROFILE, deadline, 40, CandidateRules(slack=0.3))
    assert tight.baseline is None or tight.baseline.bandwidth > loose.baseline.bandwidth
    impossible = candidate_space(job, PROFILE, 1e-3, 40, CandidateRules())
    assert impossible.frontier == () and impossible.faster == () and impossible.baseline is None


def test_max_candidates_keeps_both_ends():
    job = _job(60, 6, 3, 500.0)
    deadline = _deadline(job, 60, 500)
    full = candidate_space(job, PROFILE, deadline, 60, CandidateRules(max_candidates=1000)).frontier
    few = candidate_space(job, PROFILE, deadline, 60, CandidateRules(max_candidates=3)).frontier
    assert len(few) == min(3, len(full)) and few[0] == full[0] and few[-1] == full[-1]


def test_bad_rules():
    for slack in (-0.1, float("nan"), float("inf")):
        with pytest.raises(InputError, match="slack"):
            CandidateRules(slack=slack)
    with pytest.raises(InputError, match="max_candidates"):
        CandidateRules(max_candidates=1)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(1, 6), st.integers(1, 4), st.integers(50, 900))
def test_frontier_from_wave_breakpoints_equals_a_scan_of_every_n(vms, map_waves, reduce_waves, mbps):
    job = _job(vms, map_waves, reduce_waves, 300.0)
    deadline = _deadline(job, vms, mbps)
    space = candidate_space(job, PROFILE, deadline, vms, CandidateRules(max_candidates=10_000))
    every = np.arange(1, useful_vms(job, PROFILE) + 1)
    least = least_bandwidth(job, PROFILE, every, deadline * (1 + 1e-12), 125_000_000, MBPS)  # as candidate_space
    scan, best = [], np.inf
    for n, b in zip(every, least):
        if 0 < b < best:
            scan.append((int(n), int(b)))
            best = b
    assert [(c.vms, c.bandwidth) for c in space.frontier] == scan
