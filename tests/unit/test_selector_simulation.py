"""The online selector simulation (thesis §4.4.1) on a small datacenter: accounting, determinism,
outliers and slack, and the order of the strategies the thesis reports."""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.errors import InputError
from corral_yarn.selector import CandidateRules, Topology, WorkloadConfig, generate_requests, simulate, vm_profile

SMALL = Topology(fanout=(8, 4, 4), vm_slots=4, nic_bytes_per_s=125_000_000, oversubscription=(10.0, 1.0))


def _config(**kw) -> WorkloadConfig:
    return WorkloadConfig(**{"requests": 250, "mean_vms": 12.0, "max_vms": 120, "occupancy": 0.75, "seed": 3, **kw})


def test_accounting_and_determinism():
    first = simulate(SMALL, _config(requests=150), CandidateRules())
    again = simulate(SMALL, _config(requests=150), CandidateRules())
    assert [r.model_dump(exclude={"select_ms_median", "select_ms_p99"}) for r in first.results] == [
        r.model_dump(exclude={"select_ms_median", "select_ms_p99"}) for r in again.results
    ]
    for r in first.results:
        assert r.requests == 150 and 0 <= r.accepted <= 150
        assert r.rejected_fraction == pytest.approx(1 - r.accepted / 150)
        assert r.late_fraction == 0.0  # perfect prediction: the flows never take longer than MRCute says
    assert first.result("baseline").goodput_vs_baseline == 0.0


def test_malleability_rejects_fewer_requests_and_time_malleability_finishes_sooner():
    res = simulate(SMALL, _config(requests=400, occupancy=0.9), CandidateRules())
    base, rand, imb, tim = (res.result(s) for s in ("baseline", "corral-r", "corral-i", "corral-t"))
    assert imb.rejected_fraction < base.rejected_fraction and rand.rejected_fraction < base.rejected_fraction
    assert imb.goodput_vs_baseline > 0
    assert tim.completion_vs_goal_median < imb.completion_vs_goal_median
    assert res.result("strawman").completion_vs_goal_median < 0.9


def test_outliers_make_jobs_late_and_slack_absorbs_them():
    outliers = {"outlier_probability": 0.03, "outlier_mean_slowdown": 0.5, "occupancy": 0.3}
    tight = simulate(SMALL, _config(**outliers), CandidateRules(slack=0.0), strategies=["corral-i"]).results[0]
    loose = simulate(SMALL, _config(**outliers), CandidateRules(slack=1.0), strategies=["corral-i"]).results[0]
    assert tight.late_fraction > 0.3
    assert loose.late_fraction < tight.late_fraction
    assert loose.rejected_fraction >= tight.rejected_fraction


def test_arrivals_hit_the_target_occupancy():
    config = _config(requests=2000)
    profile = vm_profile(125e6)
    requests = generate_requests(config, profile, SMALL.vms)
    vm_seconds = sum(r.baseline_vms * r.deadline_s for r in requests)
    assert vm_seconds / (SMALL.vms * requests[-1].arrival_s) == pytest.approx(0.75, rel=0.1)
    assert np.mean([r.baseline_vms for r in requests]) == pytest.approx(12.0, rel=0.15)


def test_bad_workload():
    with pytest.raises(InputError, match="occupancy"):
        WorkloadConfig(occupancy=0.0)
