"""Paragon's classification engine (paper 003 §3.1): SVD + PQ reconstruction with SGD."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from corral_yarn.paragon import classify as c
from corral_yarn.paragon import groundtruth as g


def low_rank(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0, 1, (n, 1)) @ np.linspace(-1, 2, 8)[None, :] + np.linspace(0, 1, 8)


def test_two_entries_recover_a_rank_one_row() -> None:
    rng = np.random.default_rng(0)
    model = c.train(low_rank(60, rng), epochs=5, lam=0.01)  # noise-free rows want little regularization
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


def hand_model(lam: float) -> c.Model:
    # P: a factor column and the row-bias column (§2.1's P^T = Sigma V^T, bias as in `train`), means 0
    p = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 1.0]])
    return c.Model(means=np.zeros(3), p=p, confidence=np.array([1.0]), eta=0.0, lam=lam)


def test_fold_in_solves_the_two_profiles_by_hand() -> None:
    known = c.Sparse(cols=np.array([[0, 1]]), values=np.array([[3.0, 1.0]]))
    # q0 + q1 = 3, -q0 + q1 = 1  ->  q = (1, 2), row (3, 1, 2)
    np.testing.assert_allclose(c.classify(hand_model(0.0), known), [[3.0, 1.0, 2.0]])
    # (P_k^T P_k + 2 lambda I) q = P_k^T r: diag(4, 4) q = (2, 4)  ->  q = (0.5, 1), row (1.5, 0.5, 1)
    np.testing.assert_allclose(c.classify(hand_model(1.0), known), [[1.5, 0.5, 1.0]])


def test_fold_in_is_where_the_sgd_update_converges() -> None:
    rng = np.random.default_rng(4)
    model = c.train(low_rank(40, rng), epochs=5)
    known = c.hide(low_rank(5, rng), 2, rng)
    q = np.zeros((5, model.p.shape[1]))
    target = known.values - model.means[known.cols]
    for epoch in range(4000):  # §2.1's update with P fixed, a decaying step so that it settles
        step = 0.2 / (1 + epoch / 50)
        for j in range(2):
            pu = model.p[known.cols[:, j]]
            err = target[:, j] - np.einsum("ij,ij->i", q, pu)
            q += step * (err[:, None] * pu - model.lam * q)
    np.testing.assert_allclose(c.fold_in(model, known), q, atol=2e-3)


def test_profiling_columns_are_the_informative_pair_of_the_offline_rows() -> None:
    rng = np.random.default_rng(0)
    loading = np.array([0.0, 0.05, 1.0, -1.0, 0.02])  # columns 0, 1, 4 alike; 2 and 3 tell a row's factor apart
    dense = rng.normal(0, 1, (40, 1)) + rng.normal(0, 1, (40, 1)) * loading + rng.normal(0, 0.01, (40, 5))
    assert c.choose_profile_columns([dense], [c.fitter(0.02, 0.01)]) == (2, 3)
    with pytest.raises(ValueError, match="too few for 5 folds"):
        c.choose_profile_columns([dense[:6]], [c.fitter(0.02, 0.01)])
    with pytest.raises(ValueError, match="one fit per matrix"):
        c.choose_profile_columns([dense, dense[:, :4]], [c.fitter(0.02, 0.01)] * 2)


def test_the_profiled_sois_are_the_pair_that_reconstructs_both_interference_matrices() -> None:
    # one run against a SoI gives a job's tolerated and caused score: each matrix's structure sits on one SoI of its own
    # (tolerated column 2, caused column 4, caused with a 10x smaller spread); only (2, 4) reconstructs both
    rng = np.random.default_rng(0)
    level = rng.uniform(0.3, 0.5, (40, 1))
    tolerated = level + rng.normal(0, 0.2, (40, 1)) * np.eye(5)[2] + rng.normal(0, 0.002, (40, 5))
    caused = level / 10 + rng.normal(0, 0.02, (40, 1)) * np.eye(5)[4] + rng.normal(0, 0.0002, (40, 5))
    fits = [c.fitter(0.005, 0.01, rank=1, standardise=True)] * 2
    assert c.choose_profile_columns([tolerated, caused], fits) == (2, 4)
    assert c.choose_profile_columns([caused], fits[:1])[1] == 4 and c.choose_profile_columns([tolerated], fits[:1])[1] == 2
    # the pair's held-out error is the smallest of all pairs', every SoI reconstructed from the held-out rows' own pair
    model = c.train(tolerated[:30], eta=0.005, lam=0.01, rank=1, standardise=True)
    _, err = c.held_out(model, tolerated[30:])
    by_pair = np.nanmean(np.abs(err).reshape(10, 10, 5), axis=(0, 2))  # rows x the 10 pairs of 5 columns
    pairs = list(itertools.combinations(range(5), 2))
    assert by_pair[pairs.index((2, 4))] < np.min(np.delete(by_pair, [p for p, cols in enumerate(pairs) if 2 in cols]))


def test_training_and_best_sc_match() -> None:
    truth = np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 2.0]])
    m = c.heterogeneity_metrics(truth, truth, profiled=np.array([[0, 1], [1, 2]]))
    assert m["training_best_match"] == 0.5 and m["best_sc"] == 1.0


def test_fixed_profiling_scs_and_random_sois() -> None:
    t = g.jobs(g.world(0), 20, np.random.default_rng(1))
    seen = g.profile(t, np.random.default_rng(2), sc_cols=(3, 9))
    assert np.all(seen.sc.cols == [3, 9])
    np.testing.assert_allclose(seen.sc.values, np.log(t.speed / t.fit)[:, [3, 9]])
    assert len({tuple(r) for r in seen.tolerated.cols}) > 1  # SoIs stay two random microbenchmarks (§2.3)


def test_without_regularisation_one_profile_gives_the_least_norm_row() -> None:
    known = c.Sparse(cols=np.array([[2]]), values=np.array([[4.0]]))
    # one equation q1 = 4 (column 2's p = (0, 1)): q = (0, 4), the point SGD from q = 0 reaches; row (4, 4, 4)
    np.testing.assert_allclose(c.classify(hand_model(0.0), known), [[4.0, 4.0, 4.0]], atol=1e-9)


def test_rows_added_back_improve_a_matrix_of_few_offline_rows() -> None:
    rng = np.random.default_rng(0)
    noisy = lambda n: low_rank(n, rng) + rng.normal(0, 0.05, (n, 8))  # noqa: E731
    offline = noisy(4)  # too few dense rows to place the columns well
    model = c.train(offline, lam=0.01, epochs=10)
    online = c.hide(noisy(300), 2, rng)  # classified arrivals: two entries each, random columns (§2.2)
    new = noisy(200)
    known = c.hide(new, 2, rng)
    before = np.abs(c.classify(model, known) - new).mean()
    grown = c.grow(model, offline, online, epochs=10)
    assert np.abs(c.classify(grown, known) - new).mean() < 0.75 * before



def als_objective(centred: np.ndarray, known: np.ndarray, q: np.ndarray, p: np.ndarray, lam: float) -> float:
    err = (centred - q @ p.T) * known
    return float(np.sum(err**2) + lam * (known.sum(axis=1) @ np.sum(q**2, axis=1) + known.sum(axis=0) @ np.sum(p[:, :-1] ** 2, axis=1)))


def test_als_wr_descends_its_weighted_lambda_objective_to_a_column_optimum() -> None:
    rng = np.random.default_rng(0)
    centred = low_rank(30, rng) + rng.normal(0, 0.1, (30, 8))
    known = rng.random((30, 8)) < 0.5
    q, p = rng.normal(0, 1, (30, 2)), np.hstack([rng.normal(0, 1, (8, 1)), np.ones((8, 1))])
    lam, values = 0.3, []
    for _ in range(5):
        c.als_wr(centred, known, q, p, lam, 1)
        values.append(als_objective(centred, known, q, p, lam))
    assert all(b <= a + 1e-9 for a, b in zip(values, values[1:]))
    k = known.astype(float)
    for i in range(8):  # the last step solved each column exactly: its gradient is zero, lambda times its entry count
        resid = (centred[:, i] - q[:, 1] - q[:, 0] * p[i, 0]) * k[:, i]
        assert abs(-resid @ q[:, 0] + lam * k[:, i].sum() * p[i, 0]) < 1e-8
    np.testing.assert_array_equal(p[:, 1], 1.0)  # the row level's factor is not learned


def test_an_unknown_solver_is_named() -> None:
    with pytest.raises(ValueError, match="solver: unknown 'als'"):
        c.decompose(np.eye(3), np.ones((3, 3), dtype=bool), 0.01, 0.01, 0.9, 1, 0, solver="als")


def test_growth_by_als_wr_keeps_the_fixed_profiled_columns() -> None:
    rng = np.random.default_rng(0)
    noisy = lambda n: low_rank(n, rng) + rng.normal(0, 0.05, (n, 8))  # noqa: E731
    offline = noisy(20)
    model = c.train(offline, lam=0.01, epochs=10)
    rows = noisy(400)
    cols = np.tile([0, 7], (400, 1))  # every arrival profiled on the same two columns (the benchmark's fixed pair)
    online = c.Sparse(cols=cols, values=np.take_along_axis(rows, cols, axis=1))
    new = noisy(200)
    known = c.Sparse(cols=cols[:200], values=np.take_along_axis(new, cols[:200], axis=1))
    static = np.abs(c.classify(model, known) - new).mean()
    als = np.abs(c.classify(c.grow(model, offline, online, epochs=10, solver="als_wr"), known) - new).mean()
    assert als < 1.1 * static


def test_fold_in_of_a_scaled_model_divides_the_profiles_by_the_column_spreads_by_hand() -> None:
    model = dataclasses.replace(hand_model(0.0), scales=np.array([2.0, 1.0, 1.0]))
    known = c.Sparse(cols=np.array([[0, 1]]), values=np.array([[6.0, 1.0]]))
    # targets (6 / 2, 1 / 1) = (3, 1) -> q = (1, 2) as unscaled, row (3, 1, 2) times the spreads (2, 1, 1)
    np.testing.assert_allclose(c.classify(model, known), [[6.0, 1.0, 2.0]])
    # lambda 1: q = (0.5, 1), row (1.5, 0.5, 1) times the spreads
    np.testing.assert_allclose(c.classify(dataclasses.replace(model, lam=1.0), known), [[3.0, 0.5, 1.0]])


def test_profiles_on_low_spread_columns_reach_a_heavy_column_only_when_scaled() -> None:
    z = np.linspace(-1, 1, 21)[:, None]
    loadings = np.array([0.02, 1.0, 0.01, -0.03])  # one concept; columns 0, 2, 3 spread 1-3 % of column 1's
    new = 0.5 + 0.9 * loadings[None, :]  # a heavy row: column 1 at 1.4, the offline mean 0.5
    known = c.Sparse(cols=np.array([[0, 3]]), values=new[:, [0, 3]])
    plain = c.classify(c.train(0.5 + z * loadings, lam=0.05, rank=1, epochs=5), known)
    scaled = c.classify(c.train(0.5 + z * loadings, lam=0.05, rank=1, epochs=5, standardise=True), known)
    assert plain[0, 1] < 0.6  # lambda swamps the low-spread profiles: pulled to the mean
    assert abs(scaled[0, 1] - 1.4) < 0.1


def test_validation_chooses_the_rank_among_the_energy_cut_and_growth_keeps_it() -> None:
    rng = np.random.default_rng(0)
    dense = low_rank(40, rng) + rng.normal(0, 0.3, (40, 8))
    assert c.validated_ranks(low_rank(40, rng)) == (1,)
    ranks = c.validated_ranks(dense, energy=0.99)
    assert ranks == tuple(range(1, len(ranks) + 1)) and len(ranks) > 1
    eta, lam, rank = c.choose_sgd(dense, ranks=ranks, standardise=True)
    assert rank in ranks
    model = c.train(dense, eta=eta, lam=lam, rank=rank, standardise=True)
    assert model.confidence.size == rank and model.scales is not None
    grown = c.grow(model, dense, c.hide(low_rank(10, rng), 2, rng), epochs=1)
    assert grown.confidence.size == rank and grown.rank == rank and grown.scales is not None
    assert c.choose_sgd(dense)[2] == 0  # the rank by the energy cut (sessions 1-11)


def test_top_decile_bias_by_hand() -> None:
    truth = np.tile(np.arange(10.0)[:, None] / 10, (1, 2))  # top decile of each column: the row at 0.9
    predicted = truth.copy()
    predicted[9] = [0.7, 1.5]  # -0.2 and, clipped to 1, +0.1
    assert c.top_decile_bias(predicted, truth) == pytest.approx(-0.05)


def test_the_guard_band_is_the_one_sided_held_out_error_of_each_unprofiled_column() -> None:
    # rank 1 plus the row level, lambda 0: columns 0 and 2 load (1, 1), column 1 (-1, 1); a row (0.5, 0.2, 0.3) from
    # columns (0, 1): q = (0.15, 0.35), column 2 -> 0.5 (+0.2); from (0, 2): equal loadings, least-norm q = (0.2, 0.2),
    # column 1 -> 0 (-0.2); from (1, 2): q = (0.05, 0.25), column 0 -> 0.3 (-0.2)
    model = c.Model(means=np.zeros(3), p=np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]]), confidence=np.ones(1), eta=0.0, lam=0.0)
    predicted, err = c.held_out(model, np.array([[0.5, 0.2, 0.3]]))
    expected = np.array([[np.nan, np.nan, 0.2], [np.nan, -0.2, np.nan], [-0.2, np.nan, np.nan]])
    np.testing.assert_allclose(err, expected, atol=1e-12)
    np.testing.assert_allclose(predicted, [[np.nan, np.nan, 0.5], [np.nan, 0.0, np.nan], [0.3, np.nan, np.nan]], atol=1e-12)
    np.testing.assert_allclose(c.band(predicted, err, "over").sigma, [[0.0, 0.0, 0.2]], atol=1e-12)  # tolerated: too high breaks QoS
    np.testing.assert_allclose(c.band(predicted, err, "under").sigma, [[0.2, 0.2, 0.0]], atol=1e-12)  # caused: too low breaks QoS
    # root mean square over the side's errors, the other side counting 0: sqrt((0.3^2 + 0) / 2)
    np.testing.assert_allclose(c.band(np.array([[0.5, 0.5], [0.5, np.nan]]), np.array([[0.3, -0.1], [-0.4, np.nan]]), "over").sigma,
                               [[np.sqrt(0.045), 0.0]])
    with pytest.raises(ValueError, match="side: unknown 'both'"):
        c.band(predicted, err, "both")
    with pytest.raises(ValueError, match="levels: expected >= 1, got 0"):
        c.band(predicted, err, "over", levels=0)


def test_the_level_aware_band_is_the_one_sided_rms_in_each_tercile_of_the_predicted_score() -> None:
    # one column, six held-out predictions 0.1 .. 0.6: terciles cut at 0.2667 and 0.4333 (linear quantiles); caused side
    # (too low breaks QoS): shortfalls 0.1, 0 | 0.2, 0 | 0.3, 0.4 -> sigma sqrt(0.005), sqrt(0.02), sqrt(0.125)
    predicted = np.array([[0.1], [0.2], [0.3], [0.4], [0.5], [0.6]])
    err = np.array([[-0.1], [0.0], [-0.2], [0.1], [-0.3], [-0.4]])
    levelled = c.band(predicted, err, "under", levels=3)
    np.testing.assert_allclose(levelled.edges, [[0.2 + 0.1 * 2 / 3], [0.4 + 0.1 / 3]])
    np.testing.assert_allclose(levelled.sigma, [[np.sqrt(0.005)], [np.sqrt(0.02)], [np.sqrt(0.125)]])
    # an entry's sigma at its own predicted score, beyond the held-out range in the end levels
    np.testing.assert_allclose(levelled.at(np.array([[0.0], [0.3], [0.45], [1.0]])),
                               [[np.sqrt(0.005)], [np.sqrt(0.02)], [np.sqrt(0.125)], [np.sqrt(0.125)]])
    # one level: session 13's band, sqrt((0.01 + 0.04 + 0.09 + 0.16) / 6) whatever the prediction
    uniform = c.band(predicted, err, "under")
    assert uniform.edges.shape == (0, 1)
    np.testing.assert_allclose(uniform.at(np.array([[0.0], [0.9]])), [[np.sqrt(0.05)], [np.sqrt(0.05)]])


def test_the_band_of_a_fixed_profiled_pair_is_zero_on_it_and_reconstructed_from_it_elsewhere() -> None:
    # the hand model above from columns (0, 1) only: column 2 errs +0.2, columns 0 and 1 are measured, never classified
    model = c.Model(means=np.zeros(3), p=np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]]), confidence=np.ones(1), eta=0.0, lam=0.0)
    predicted, err = c.held_out(model, np.array([[0.5, 0.2, 0.3]]), sets=np.array([[0, 1]]))
    np.testing.assert_allclose(err, [[np.nan, np.nan, 0.2]], atol=1e-12)
    np.testing.assert_allclose(c.band(predicted, err, "over").sigma, [[0.0, 0.0, 0.2]], atol=1e-12)
    levelled = c.band(np.repeat(predicted, 3, axis=0), np.repeat(err, 3, axis=0), "over", levels=3)
    np.testing.assert_allclose(levelled.sigma, [[0.0, 0.0, 0.2]] * 3, atol=1e-12)


def test_a_heavier_predicted_score_gets_a_wider_band_when_the_held_out_errors_grow_with_it() -> None:
    rng = np.random.default_rng(0)
    predicted = rng.uniform(0, 0.4, (600, 2))
    err = -predicted * rng.uniform(0, 0.5, predicted.shape)  # caused underestimated in proportion to the prediction
    levelled = c.band(predicted, err, "under", levels=c.LEVELS)
    light, heavy = levelled.at(np.array([[0.05, 0.05], [0.35, 0.35]]))
    assert np.all(heavy > 2 * light)
    assert np.all(light < c.band(predicted, err, "under").sigma[0]) and np.all(heavy > c.band(predicted, err, "under").sigma[0])


def test_a_level_no_prediction_fell_in_takes_the_columns_sigma() -> None:
    # every prediction 0 (clipped): the tercile edges are both 0, so the two lower levels hold nothing
    band = c.band(np.zeros((4, 1)), np.array([[-0.3], [0.0], [-0.4], [0.1]]), "under", levels=3)
    np.testing.assert_allclose(band.sigma, [[np.sqrt(0.0625)]] * 3)


def test_the_k_fold_band_pools_every_folds_held_out_errors_before_the_root_mean_square() -> None:
    # the hand model above predicts column 2 from column 0, column 1 as 0, column 0 from column 2: a row (a, b, c) errs
    # a - c, -b and c - a. Fold 1 holds (0.5, 0.2, 0.3): +0.2, -0.2, -0.2; fold 2 (0.1, 0.4, 0.4): -0.3, -0.4, +0.3
    model = c.Model(means=np.zeros(3), p=np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]]), confidence=np.ones(1), eta=0.0, lam=0.0)
    dense = np.array([[0.5, 0.2, 0.3], [0.1, 0.4, 0.4]])
    trained_on = []
    predicted, err = c.cross_validated(dense, lambda rows: trained_on.append(rows) or model, [np.array([0]), np.array([1])])
    np.testing.assert_array_equal(trained_on[0], dense[[1]])  # each fold's model never sees its held rows
    np.testing.assert_array_equal(trained_on[1], dense[[0]])
    # pooled over both folds, then RMS per column (the other side counting 0): over col 0 sqrt((0 + 0.3^2) / 2), col 2
    # sqrt((0.2^2 + 0) / 2); under col 0 sqrt(0.2^2 / 2), col 1 sqrt((0.2^2 + 0.4^2) / 2), col 2 sqrt(0.3^2 / 2)
    np.testing.assert_allclose(c.band(predicted, err, "over").sigma, [[np.sqrt(0.045), 0.0, np.sqrt(0.02)]], atol=1e-12)
    np.testing.assert_allclose(c.band(predicted, err, "under").sigma, [[np.sqrt(0.02), np.sqrt(0.1), np.sqrt(0.045)]], atol=1e-12)
    # not the mean of each fold's RMS: under col 1 that is (0.2 + 0.4) / 2 = 0.3, pooled sqrt(0.1) = 0.316
    assert c.band(predicted, err, "under").sigma[0, 1] != pytest.approx(0.3)
    np.testing.assert_allclose(predicted - err, np.where(np.isnan(err), np.nan, np.repeat(dense, 3, axis=0)))


def test_every_offline_row_is_held_out_exactly_once() -> None:
    parts = c.folds(50, 4, np.random.default_rng(0))
    assert len(parts) == 4 and sorted(len(p) for p in parts) == [12, 12, 13, 13]
    np.testing.assert_array_equal(np.sort(np.concatenate(parts)), np.arange(50))
    with pytest.raises(ValueError, match="7 offline rows are too few for 4 folds"):
        c.folds(7, 4, np.random.default_rng(0))


def test_the_validation_band_cross_validates_the_offline_rows_with_the_validated_parameters() -> None:
    rng = np.random.default_rng(0)
    dense = np.clip(low_rank(40, rng) / 4 + rng.normal(0, 0.02, (40, 8)), 0, 1)
    sigma = c.validation_band(dense, 0.005, 0.01, 1, "under").sigma
    held = []
    for part in c.folds(40, c.FOLDS, np.random.default_rng(0)):
        held.append(c.held_out(c.train(np.delete(dense, part, axis=0), eta=0.005, lam=0.01, epochs=10, rank=1), dense[part]))
        assert held[-1][1].shape == (part.size * 28, 8)  # each held row from every pair of its 8 columns
    pooled = np.vstack([p for p, _ in held]), np.vstack([e for _, e in held])
    np.testing.assert_allclose(sigma, c.band(*pooled, "under").sigma)
    assert sigma.shape == (1, 8) and np.all(sigma > 0) and np.all(sigma < 0.2)
    levelled = c.validation_band(dense, 0.005, 0.01, 1, "under", levels=3)
    np.testing.assert_allclose(levelled.sigma, c.band(*pooled, "under", levels=3).sigma)
    assert levelled.sigma.shape == (3, 8)


def test_validation_on_the_profiled_columns_is_the_lowest_k_fold_error_from_them() -> None:
    rng = np.random.default_rng(0)
    dense = low_rank(40, rng) + rng.normal(0, 0.3, (40, 8))
    sets, ranks = np.array([[0, 7]]), (1, 2)
    chosen = c.choose_sgd_on_profiled(dense, sets, ranks=ranks, standardise=True)
    parts = c.folds(40, c.FOLDS, np.random.default_rng(0))
    rms = {p: np.sqrt(np.nanmean(c.cross_validated(dense, c.fitter(*p, standardise=True), parts, 2, sets)[1] ** 2))
           for p in itertools.product(c.ETAS, c.LAMS, ranks)}
    assert chosen == min(rms, key=rms.get)
    assert len(set(rms.values())) > 1  # the grid's choices differ, so the choice is a real one
