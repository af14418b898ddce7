"""Paragon's classification engine (paper 003 §3.1): SVD + PQ reconstruction with SGD."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from corral_yarn.paragon import classify as c
from corral_yarn.paragon import groundtruth as g


def low_rank(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0, 1, (n, 1)) @ np.linspace(-1, 2, 8)[None, :] + np.linspace(0, 1, 8)


def test_two_entries_recover_a_rank_one_row() -> None:
    rng = np.random.default_rng(0)
    model = c.train(low_rank(60, rng), epochs=5)
    new = low_rank(40, rng)
    rec = c.classify(model, c.hide(new, 2, rng))
    assert np.abs(rec - new).mean() < 0.1 * np.abs(new - new.mean()).mean()


def test_rank_follows_the_singular_values() -> None:
    assert c.rank_for(np.array([10.0, 1.0, 0.1]), 0.9) == 1
    assert c.rank_for(np.array([1.0, 1.0, 1.0]), 0.9) == 3


def test_the_classifier_sees_only_profiled_entries() -> None:
    w = g.world(0)
    truth = g.jobs(w, 30, np.random.default_rng(1))
    seen = g.profile(truth, np.random.default_rng(2))
    changed = truth.speed.copy()
    hidden = np.ones_like(changed, dtype=bool)
    np.put_along_axis(hidden, seen.sc.cols, False, axis=1)
    changed[hidden] *= 3.0  # every entry it did not profile
    again = g.profile(dataclasses.replace(truth, speed=changed), np.random.default_rng(2))
    np.testing.assert_array_equal(seen.sc.values, again.sc.values)
    model = c.train(np.log(g.jobs(w, 40, np.random.default_rng(3)).speed), epochs=3)
    np.testing.assert_array_equal(c.classify(model, seen.sc), c.classify(model, again.sc))


def test_table_metrics() -> None:
    truth = np.array([[1.0, 0.97, 0.5], [1.0, 0.5, 0.2]])
    predicted = np.array([[0.9, 1.0, 0.1], [3.0, 2.0, 1.0]])
    m = c.heterogeneity_metrics(predicted, truth)
    assert m["best_sc"] == 0.5 and m["within_5pct"] == 1.0 and m["exact_ranking"] == 0.5 and m["near_exact_ranking"] == 1.0
    assert c.interference_metrics(np.array([[0.5, 1.2]]), np.array([[0.4, 1.0]]))["interference_err"] == pytest.approx(0.05)


def test_bad_input_names_the_problem() -> None:
    with pytest.raises(ValueError, match="offline utility matrix"):
        c.train(np.array([[np.nan, 1.0], [1.0, 2.0]]))
    model = c.train(low_rank(10, np.random.default_rng(0)), epochs=1)
    with pytest.raises(ValueError, match="known column"):
        c.classify(model, c.Sparse(cols=np.array([[0, 9]]), values=np.array([[1.0, 1.0]])))
