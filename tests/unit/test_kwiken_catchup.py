"""Catch-up by global reissues (thesis §5.3.3): the DAG replay, the budget split and the thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.kwiken import apportion, catchup, experiments, synthetic
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.reissue import ReissueModel, reissue_draws, simulate
from corral_yarn.kwiken.trace import Trace

CHAIN = KwikenDag(name="chain", stages=[{"name": "a"}, {"name": "b", "after": ["a"]}])
NEVER = np.full(2, np.inf)


def test_a_request_late_into_a_stage_is_reissued_as_it_enters() -> None:
    latency = np.array([[1.0, 10.0], [5.0, 10.0]])  # request 1 enters b at 5, request 0 at 1
    draws = np.array([[1.0, 2.0], [1.0, 2.0]])
    end, reissued, finish = catchup.run(CHAIN, latency, draws, NEVER, np.array([np.inf, 3.0]))
    assert reissued.tolist() == [[False, False], [False, True]]
    assert finish[1].tolist() == [5.0, 7.0]  # its copy started at 5 and took 2
    assert end.tolist() == [11.0, 7.0]


def test_a_local_timeout_still_applies_to_requests_on_time() -> None:
    latency = np.array([[1.0, 10.0]])
    end, reissued, _ = catchup.run(CHAIN, latency, np.array([[1.0, 2.0]]), np.array([np.inf, 4.0]), np.array([np.inf, 3.0]))
    assert reissued.tolist() == [[False, True]]
    assert end.tolist() == [1.0 + 4.0 + 2.0]


def test_without_global_thresholds_it_is_the_local_reissue_replay() -> None:
    w = synthetic.workload(0, 0, requests=2000)
    model = ReissueModel.fit(w.dag, w.train, seed=0)
    draws = reissue_draws(w.test.latency, np.random.default_rng(1))
    local = model.timeouts(apportion.sumvar(model.curves, model.costs, 0.05))
    expected = simulate(w.dag, w.test.latency, draws, local)
    got = catchup.simulate(model, w.test.latency, draws, local, np.full(len(w.dag.stages), np.inf))
    np.testing.assert_allclose(got.latency, expected.latency)
    np.testing.assert_allclose(got.reissued, expected.reissued)


def test_the_split_follows_the_local_spend_of_the_stages_after_another() -> None:
    dag = KwikenDag(name="d", stages=[{"name": "a"}, {"name": "b", "after": ["a"]}, {"name": "c", "after": ["a"]}])
    g = catchup.split(dag, np.array([1.0, 1.0, 2.0]), np.array([0.5, 0.1, 0.1]), 0.02)
    assert g[0] == 0.0  # a source: every request enters it on time
    c = apportion.normalised(np.array([1.0, 1.0, 2.0]))
    assert float(c @ g) == pytest.approx(0.02)
    assert g[2] * c[2] == pytest.approx(2 * g[1] * c[1])  # c spent twice b's locally


def test_a_dag_of_sources_only_keeps_the_whole_budget_local() -> None:
    dag = KwikenDag(name="flat", stages=[{"name": "a"}, {"name": "b"}])
    rng = np.random.default_rng(3)
    train = Trace(stages=("a", "b"), latency=rng.lognormal(0, 1, size=(500, 2)))
    model = ReissueModel.fit(dag, train, seed=0)
    local, global_ = catchup.plan(model, 0.05, 1 / 6)
    np.testing.assert_array_equal(local, model.timeouts(apportion.sumvar(model.curves, model.costs, 0.05)))
    assert np.isinf(global_).all()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 11), st.sampled_from([0.01, 0.03, 0.1]), st.sampled_from(experiments.CATCH_UP_SHARES))
def test_catch_up_never_spends_more_than_its_budget_on_the_training_trace(index: int, budget: float, share: float) -> None:
    w = synthetic.workload(index, 0, requests=1000)
    model = ReissueModel.fit(w.dag, w.train, seed=0)
    outcome = catchup.simulate(model, w.train.latency, model.draws, *catchup.plan(model, budget, share))
    assert float(apportion.normalised(model.costs) @ outcome.reissued) <= budget * (1 + 1e-9) + 2.0 / 1000  # quantile rounding
