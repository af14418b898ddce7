"""Partial answers at fan-out stages (thesis §5.3.2), the synthetic workloads and the reproduction's pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.kwiken import experiments, synthetic
from corral_yarn.kwiken.partial import POLICIES, Responders, Termination, fit, partial_curve


def _queries() -> Responders:
    return Responders.of(np.array([[1.0, 2.0, 3.0, 10.0], [1.0, 1.0, 1.0, 1.5], [4.0, 4.0, 5.0, 6.0]]))


def test_loss_is_the_share_of_responders_still_out() -> None:
    q = _queries()
    latency, loss = q.outcome(np.array([2.5, 9.0, 4.5]))
    assert latency.tolist() == [2.5, 1.5, 4.5]  # a query that has all its answers is done
    assert loss == pytest.approx(np.mean([2 / 4, 0, 2 / 4]))


def test_kwikens_rule_stops_at_the_earlier_of_cutoff_and_wait_after_fraction() -> None:
    q = _queries()
    stop = Termination("kwiken", (0.5, 1.0, 5.5)).stop(q)  # t_0.5 = 2nd answer: 2, 1, 4
    assert stop.tolist() == [3.0, 2.0, 5.0]
    assert Termination("time-then-fraction", (0.75, 3.5)).stop(q).tolist() == [3.5, 3.5, 5.0]
    assert Termination("wait-for-fraction", (0.75,)).stop(q).tolist() == [3.0, 1.0, 5.0]


def test_wait_for_fraction_cannot_drop_anyone_below_one_responder_of_loss() -> None:
    q = Responders.of(np.random.default_rng(0).lognormal(0, 1, (500, 200)))
    assert fit(q, "wait-for-fraction", 0.001).params == (1.0,)  # ceil(200 x 0.999) = 200: Table 5.2's 0 % at n in the 100s


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.0005, 0.002, 0.01, 0.05]))
def test_every_policy_meets_its_loss_budget_on_training_queries(seed: int, budget: float) -> None:
    rng = np.random.default_rng(seed)
    q = Responders.of(rng.lognormal(0, 1, (300, 50)) * np.where(rng.random((300, 50)) < 0.01, 5, 1))
    for policy in POLICIES:
        latency, loss = q.outcome(fit(q, policy, budget).stop(q))
        assert loss <= budget + 1e-12, policy
        assert np.all(latency <= q.full)


def test_kwiken_has_the_least_variance_of_the_sweeps_it_contains() -> None:
    q = Responders.of(np.random.default_rng(3).lognormal(0, 1, (1000, 100)))
    var = {p: q.outcome(fit(q, p, 0.01).stop(q))[0].var() for p in POLICIES}
    assert var["kwiken"] <= var["fixed-timeout"] + 1e-9  # T_d = infinity is a fixed timeout
    curve, fitted = partial_curve(q, (0.001, 0.01))
    assert curve(0.0) == pytest.approx(q.full.var()) and curve(0.01) <= curve(0.001) <= curve(0.0)
    assert set(fitted) == {0.001, 0.01}


def test_synthetic_workloads_are_seeded_and_shaped() -> None:
    a, b = synthetic.workload(4, seed=7, requests=300), synthetic.workload(4, seed=7, requests=300)
    assert a.dag == b.dag and np.array_equal(a.test.latency, b.test.latency)
    assert a.train.latency.shape == (300, len(a.dag.stages)) and np.all(a.train.latency > 0)
    shape = synthetic.shape_check([synthetic.shape_of(synthetic.workload(k, 0, requests=500)) for k in range(6)])
    assert shape["dags"] == 6 and 0 <= shape["stages_with_p99_over_10x_median"] <= 1


def test_the_reproduction_runs_end_to_end_on_a_small_dag() -> None:
    w = next(w for k in range(20) if (w := synthetic.workload(k, 0, requests=600)).fanout_stages and len(w.dag.stages) >= 3)
    dag = experiments.reissue_dag(w, small=True, seed=0, budgets=(0.05, 1.0), random_allocations=50)
    figures = experiments.reissue_figures([dag], budgets=(0.05, 1.0))
    assert figures["p99_reduction_mean"]["sumvar"]["1"] > 0
    assert figures["train_vs_test"]["0.05"]["planned"] <= 0.05 + 1e-9
    assert figures["small_dags"]["dags"] == 1 and "random-best" in figures["small_dags"]["p99_reduction_mean"]
    name = w.dag.names[w.fanout_stages[0]]
    stage = experiments.partial_stage(*(Responders.of(m[:, :60]) for m in w.responders[name]), losses=(0.01,))
    assert experiments.partial_figures([stage], losses=(0.01,))["kwiken"]["loss"]["0.01"] < 0.05
    both = experiments.combined_figures([experiments.combined_dag(w, seed=0, budgets=(0.0, 0.05))])
    assert both["dags"] == 1 and set(both["reissues_only"]) == {"0", "0.05"}
