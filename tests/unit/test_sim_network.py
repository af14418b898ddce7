"""Max-min (TCP-like) and Varys rates on link/flow sets small enough to check by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.sim.network import FlowSet, max_min, varys


def flows(paths: list[list[int]], weight=None, cap=None, remaining=None, coflow=None, coef=None) -> FlowSet:
    n = len(paths)
    return FlowSet(
        rows=np.repeat(np.arange(n), [len(p) for p in paths]),
        cols=np.array([link for p in paths for link in p], dtype=np.int64),
        coef=np.ones(sum(len(p) for p in paths)) if coef is None else np.asarray(coef, float),
        weight=np.ones(n) if weight is None else np.asarray(weight, float),
        cap=np.full(n, np.inf) if cap is None else np.asarray(cap, float),
        remaining=np.ones(n) if remaining is None else np.asarray(remaining, float),
        coflow=np.arange(n) if coflow is None else np.asarray(coflow),
    )


def test_max_min_classic_parking_lot():
    # link 0 (10) carries A and B, link 1 (4) carries B and C: B and C split link 1, A takes the rest
    rates = max_min(np.array([10.0, 4.0]), flows([[0], [0, 1], [1]]))
    assert rates == pytest.approx([8.0, 2.0, 2.0])


def test_max_min_weights_are_connection_counts():
    # B stands for 3 TCP connections on link 1, C for one: 3:1 there; A gets what B leaves on link 0
    rates = max_min(np.array([10.0, 4.0]), flows([[0], [0, 1], [1]], weight=[1, 3, 1]))
    assert rates == pytest.approx([7.0, 3.0, 1.0])


def test_max_min_caps_and_coefficients():
    # A is capped at 2; B crosses link 0 with half its bytes (coefficient 0.5) so it can reach 16
    rates = max_min(np.array([10.0]), flows([[0], [0]], cap=[2.0, np.inf], coef=[1.0, 0.5]))
    assert rates == pytest.approx([2.0, 16.0])


def test_varys_smallest_bottleneck_first_then_madd():
    # one link of 10: coflow 0 (10 bytes) goes first at full rate, coflow 1 (40 bytes) waits
    rates = varys(np.array([10.0]), flows([[0], [0]], remaining=[10.0, 40.0]))
    assert rates == pytest.approx([10.0, 0.0])
    # one coflow, two flows on separate links: MADD finishes both together (Gamma = 2), then the
    # leftover on link 0 is handed out (work conservation)
    rates = varys(np.array([10.0, 10.0]), flows([[0], [1]], remaining=[10.0, 20.0], coflow=[0, 0]))
    assert rates == pytest.approx([10.0, 10.0])
    rates = varys(np.array([10.0, 10.0, 6.0]), flows([[0, 2], [1]], remaining=[10.0, 20.0], coflow=[0, 0]))
    assert rates[0] == pytest.approx(6.0) and rates[1] == pytest.approx(10.0)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_rates_respect_every_link_and_cap(data):
    links = data.draw(st.integers(1, 5))
    n = data.draw(st.integers(1, 8))
    paths = [sorted(set(data.draw(st.lists(st.integers(0, links - 1), min_size=1, max_size=3)))) for _ in range(n)]
    capacity = np.array(data.draw(st.lists(st.floats(0.5, 100), min_size=links, max_size=links)))
    weight = data.draw(st.lists(st.floats(0.5, 10), min_size=n, max_size=n))
    cap = data.draw(st.lists(st.floats(0.1, 200), min_size=n, max_size=n))
    remaining = data.draw(st.lists(st.floats(1, 1000), min_size=n, max_size=n))
    coflow = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    fs = flows(paths, weight=weight, cap=cap, remaining=remaining, coflow=coflow)
    for allocate in (max_min, varys):
        rates = allocate(capacity, fs)
        load = np.bincount(fs.cols, rates[fs.rows], minlength=links)
        assert (rates >= -1e-9).all() and (rates <= np.asarray(cap) * (1 + 1e-6)).all()
        assert (load <= capacity * (1 + 1e-6)).all()
        # work conservation: every flow is held back by its cap or by a full link
        full = load >= capacity * (1 - 1e-6)
        for f, path in enumerate(paths):
            assert rates[f] >= cap[f] * (1 - 1e-6) or full[path].any()
