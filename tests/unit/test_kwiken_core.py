"""Kwiken's core (thesis ch. 5): curves V_s(r), SumVar and the baselines, the DAG latency and the simulator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.kwiken import apportion
from corral_yarn.kwiken.curves import VarianceCurve, lower_hull, reissue_curve, reissued, timeout
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.reissue import ReissueModel, reissue_draws, simulate
from corral_yarn.kwiken.trace import Trace


def _dag(*stages: tuple[str, list[str]]) -> KwikenDag:
    return KwikenDag(name="w", stages=[{"name": n, "after": a} for n, a in stages])


def test_dag_latency_is_the_longest_path() -> None:
    dag = _dag(("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]))
    x = np.array([[1.0, 5.0, 2.0, 1.0], [1.0, 1.0, 7.0, 0.5]])
    assert dag.latency(x).tolist() == [7.0, 8.5]  # a+b+d, a+c+d


def test_parallel_sources_take_the_slowest() -> None:
    assert _dag(("a", []), ("b", [])).latency(np.array([[3.0, 4.0]])).tolist() == [4.0]


@pytest.mark.parametrize("bad, message", [
    ([{"name": "a", "after": ["b"]}, {"name": "b", "after": ["a"]}], "cycle"),
    ([{"name": "a", "after": ["z"]}], "unknown stages"),
    ([{"name": "a"}, {"name": "a"}], "duplicate"),
])
def test_bad_dags_are_refused(bad: list[dict], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KwikenDag(name="w", stages=bad)


def test_reissue_keeps_the_faster_copy_after_the_timeout() -> None:
    x = np.array([1.0, 2.0, 10.0, 10.0])
    again = np.array([5.0, 5.0, 1.0, 20.0])
    assert reissued(x, again, 3.0).tolist() == [1.0, 2.0, 4.0, 10.0]  # reissued at 3: min(10, 3 + 1), min(10, 3 + 20)
    assert reissued(x, again, np.inf).tolist() == x.tolist()
    assert reissued(x, again, 0.0).tolist() == [1.0, 2.0, 1.0, 10.0]  # all at once: the faster copy


def test_timeout_is_the_quantile_that_reissues_r() -> None:
    ordered = np.arange(1.0, 101.0)
    assert timeout(ordered, 0.05) == 95.0  # 5 of 100 requests are slower than 95
    assert np.mean(ordered > timeout(ordered, 0.05)) == 0.05
    assert timeout(ordered, 0.0) == np.inf and timeout(ordered, 1.0) == 0.0
    assert timeout(ordered, np.array([0.5, 0.01])).tolist() == [50.0, 99.0]


def test_lower_hull_is_convex_and_cut_at_its_minimum() -> None:
    r, v = lower_hull(np.array([0, 0.1, 0.2, 0.5, 1.0]), np.array([10, 9.5, 4, 3, 3.5]))
    assert r.tolist() == [0, 0.2, 0.5] and v.tolist() == [10, 4, 3]
    curve = VarianceCurve.of(np.array([0, 0.1, 0.2, 0.5, 1.0]), np.array([10, 9.5, 4, 3, 3.5]))
    assert curve(0.1) == pytest.approx(7.0) and curve(0.9) == 3.0


def test_reissue_curve_starts_at_the_variance_and_never_rises() -> None:
    rng = np.random.default_rng(0)
    samples = np.where(rng.random(5000) < 0.02, 20.0, 1.0) * rng.lognormal(0, 0.3, 5000)
    curve = reissue_curve(samples, rng)
    assert curve(0.0) == pytest.approx(samples.var())
    slopes = np.diff(curve.hull_v) / np.diff(curve.hull_r)
    assert np.all(slopes <= 0) and np.all(np.diff(slopes) >= -1e-9 * samples.var())  # non-increasing and convex
    assert curve(0.05) < 0.2 * samples.var()  # reissuing the 2 % stragglers and a little more removes most variance


def _linear(v0: float, slope: float) -> VarianceCurve:
    return VarianceCurve.of(np.array([0.0, 1.0]), np.array([v0, v0 - slope]))


def test_sumvar_gives_the_budget_to_the_steepest_curve_per_cost() -> None:
    r = apportion.sumvar([_linear(10, 10), _linear(10, 5)], [1.0, 1.0], 0.2)
    assert r == pytest.approx([0.4, 0.0])  # c = 0.5 each: 0.2 of budget is r = 0.4 of stage 0
    r = apportion.sumvar([_linear(10, 10), _linear(10, 5)], [4.0, 1.0], 0.2)  # stage 0 now 4x as dear: 8 vs 25 per cost
    assert r == pytest.approx([0.0, 1.0])


def test_sumvar_stops_when_no_stage_gains() -> None:
    flat = VarianceCurve.of(np.array([0.0, 1.0]), np.array([5.0, 5.0]))
    assert apportion.sumvar([flat, flat], [1.0, 1.0], 0.5).tolist() == [0.0, 0.0]


def test_baselines_spend_the_budget_as_published() -> None:
    costs = [0.7, 0.2, 0.1]
    assert apportion.same_fraction(costs, 0.05).tolist() == [0.05] * 3
    equal = apportion.equal_budget(costs, 0.6)  # 0.2 each; stages 2 and 1 can use only 0.1 and 0.2: stage 0 gets the rest
    assert equal == pytest.approx([0.3 / 0.7, 1.0, 1.0])
    assert apportion.spent(costs, equal) == pytest.approx(0.6)


@st.composite
def _problem(draw: st.DrawFn) -> tuple[list[VarianceCurve], list[float], float]:
    n = draw(st.integers(1, 5))
    curves = []
    for _ in range(n):  # convex non-increasing: decreasing slopes magnitudes
        slopes = sorted(draw(st.lists(st.floats(0, 50), min_size=1, max_size=4)), reverse=True)
        xs = np.linspace(0, 1, len(slopes) + 1)
        v = 100.0 - np.concatenate([[0.0], np.cumsum(np.array(slopes) * np.diff(xs))])
        curves.append(VarianceCurve.of(xs, v))
    costs = draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n))
    return curves, costs, draw(st.floats(0.0, 1.0))


def _objective(curves: list[VarianceCurve], r: np.ndarray) -> float:
    return float(sum(c(x) for c, x in zip(curves, r)))


@settings(max_examples=200, deadline=None)
@given(_problem())
def test_sumvar_never_spends_more_than_the_budget(problem: tuple) -> None:
    curves, costs, budget = problem
    r = apportion.sumvar(curves, costs, budget)
    assert apportion.spent(costs, r) <= budget + 1e-9
    assert np.all((0 <= r) & (r <= 1))


@settings(max_examples=200, deadline=None)
@given(_problem())
def test_sumvar_is_never_worse_than_the_baselines_on_sum_of_variances(problem: tuple) -> None:
    """On the objective it minimises (eq. 5.3), SumVar is optimal among allocations in its chunks delta, so
    no baseline beats it by more than moving each stage by one chunk can give: sum_s |V̄_s'(0)| delta / c_s."""
    curves, costs, budget = problem
    c = apportion.normalised(costs)
    delta = budget / (apportion.GAMMA * len(c))
    slack = sum(float(curve(0.0) - curve(min(1.0, delta / cs))) for curve, cs in zip(curves, c)) + 1e-9
    mine = _objective(curves, apportion.sumvar(curves, costs, budget))
    for other in (apportion.same_fraction(costs, budget), apportion.equal_budget(costs, budget)):
        assert mine <= _objective(curves, other) + slack
    if budget / len(c) <= c.min():  # no stage saturates: equal budgets are gamma chunks each, on SumVar's lattice
        assert mine <= _objective(curves, apportion.equal_budget(costs, budget)) + 1e-9


@settings(max_examples=60, deadline=None)
@given(_problem())
def test_sumvar_is_optimal_on_its_lattice(problem: tuple) -> None:
    """Brute force over every way to give the gamma N chunks to stages (convex curves: the greedy is exact)."""
    curves, costs, budget = problem
    if len(curves) > 3:
        curves, costs = curves[:3], costs[:3]
    c = apportion.normalised(costs)
    chunks, delta = apportion.GAMMA * len(c), budget / (apportion.GAMMA * len(c))
    best = min(_objective(curves, np.minimum(1.0, np.array(k) * delta / c))
               for k in itertools.product(range(chunks + 1), repeat=len(c)) if sum(k) <= chunks)
    assert _objective(curves, apportion.sumvar(curves, costs, budget)) <= best + 1e-9


def test_simulator_reissues_the_planned_share_and_helps_the_tail() -> None:
    rng = np.random.default_rng(1)
    dag = _dag(("a", []), ("b", ["a"]))
    x = np.column_stack([rng.lognormal(0, 0.2, 20000) * np.where(rng.random(20000) < 0.03, 10, 1), rng.lognormal(1, 0.2, 20000)])
    train, test = Trace(("a", "b"), x[:10000]), Trace(("a", "b"), x[10000:])
    model = ReissueModel.fit(dag, train)
    r = model.allocate("sumvar", 0.05)
    assert apportion.spent(model.costs, r) <= 0.05 + 1e-9
    draws = reissue_draws(test.latency, rng)
    none = simulate(dag, test.latency, draws, np.full(2, np.inf))
    planned = simulate(dag, test.latency, draws, model.timeouts(r))
    assert planned.reissued == pytest.approx(r, abs=0.01)  # the test trace reissues about what training planned
    assert planned.percentiles()["p99"] < 0.8 * none.percentiles()["p99"]
    assert np.all(planned.latency <= none.latency)  # a reissue never slows a request


def test_random_best_and_descent_spend_within_budget() -> None:
    rng = np.random.default_rng(2)
    dag = _dag(("a", []), ("b", []), ("c", ["a", "b"]))
    x = rng.lognormal(0, 0.8, (3000, 3))
    model = ReissueModel.fit(dag, Trace(("a", "b", "c"), x))
    for policy in ("random-best", "p99-descent", "sumvar-weighted-critical", "sumvar-weighted-mean", "variance-proportional"):
        r = model.allocate(policy, 0.1, random_allocations=200)
        assert apportion.spent(model.costs, r) <= 0.1 + 1e-9, policy
    share = model.critical_share()
    assert share[2] == 1.0 and 0 < share[0] < 1 and share[0] + share[1] == pytest.approx(1.0)


@pytest.mark.parametrize("budget", [5e-324, 1e-310, 1e-300])
def test_budgets_below_float_resolution_end_with_nothing_spent_beyond_them(budget: float) -> None:
    """A budget too small to move any r_s ends the allocation loops (they once spun forever)."""
    curve = VarianceCurve.of(np.linspace(0, 1, 3), np.array([100.0, 90.0, 85.0]))
    costs = [0.3, 0.5, 0.2]
    for r in (apportion.sumvar([curve] * 3, costs, budget), apportion.equal_budget(costs, budget)):
        assert apportion.spent(costs, r) <= budget * (1 + 1e-9)
