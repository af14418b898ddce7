"""Paragon's classification engine (paper 003 §2.1, §3.1): SVD + PQ reconstruction with SGD over a
sparse utility matrix (jobs x SCs, jobs x SoIs tolerated, jobs x SoIs caused).

A utility matrix holds the dense rows of offline-profiled jobs. `train` centres its columns and rows (a job's level is a bias factor of its own), takes the
SVD (Q = U, P^T = Sigma V^T), keeps the rank whose singular values carry `energy` of the total
(the confidence of each similarity concept) and refines P and Q by SGD. `classify` folds in a batch of
new jobs, each known on a few columns only (two SC or two SoI profiles), with P held fixed (the exact point
the SGD update converges to), then reconstructs their full rows. `grow` adds classified jobs back as rows (their
profiled entries; §2.2) and decomposes the grown matrix again (SGD as §2.1, or ALS-WR's weighted lambda). `choose_profile_columns` picks the two
SCs, and the two SoIs, every new job is profiled on, by validation on the offline rows; `validation_band` the guard band of each interference column (ours, not the paper's):
the one-sided error of a k-fold cross-validation's held-out offline rows reconstructed from two entries."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Model:
    """A trained utility matrix: column means, item factors P (n x r+1, last column the row bias)."""

    means: np.ndarray
    p: np.ndarray
    confidence: np.ndarray  # share of the spectrum carried by each kept singular value (§2.1)
    eta: float
    lam: float
    rank: int = 0  # the similarity concepts kept: 0 = by `energy` (§2.1 confidence), else chosen by validation
    scales: np.ndarray | None = None  # each column's offline spread the entries are divided by; None: unscaled


@dataclass(frozen=True)
class Sparse:
    """Known entries of a batch of rows: cols[i] and values[i] of row i (same count per row)."""

    cols: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.cols.shape != self.values.shape or self.cols.ndim != 2:
            raise ValueError(f"Sparse: cols {self.cols.shape} and values {self.values.shape} must be equal 2-d shapes")


def rank_for(singular: np.ndarray, energy: float) -> int:
    """Smallest rank whose singular values carry `energy` of the squared spectrum (§2.1 confidence)."""
    share = np.cumsum(singular**2) / np.sum(singular**2)
    return int(np.searchsorted(share, energy) + 1)


def train(dense: np.ndarray, eta: float = 0.02, lam: float = 0.05, energy: float = 0.9, epochs: int = 30,
          seed: int = 0, rank: int = 0, standardise: bool = False) -> Model:
    """SVD of the centred offline matrix, then PQ reconstruction refined by SGD (§2.1)."""
    if dense.ndim != 2 or dense.shape[0] < 2 or not np.all(np.isfinite(dense)):
        raise ValueError(f"train: the offline utility matrix must be finite with >= 2 rows, got shape {dense.shape}")
    return decompose(dense, np.ones(dense.shape, dtype=bool), eta, lam, energy, epochs, seed, rank=rank, standardise=standardise)


def centre(matrix: np.ndarray, standardise: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """(column means, column spreads when `standardise` else None, the centred (and scaled) matrix, each row's level:
    its own bias factor, not a similarity concept)."""
    means = matrix.mean(axis=0)
    spread = matrix.std(axis=0)
    scales = np.where(spread > 0, spread, 1.0) if standardise else None
    centred = (matrix - means) / (1.0 if scales is None else scales)
    return means, scales, centred, centred.mean(axis=1, keepdims=True)


SOLVERS = ("sgd", "als_wr")  # the refinement after the SVD: §2.1's SGD, or ALS with weighted-lambda (Zhou et al. 2008)


def decompose(matrix: np.ndarray, known: np.ndarray, eta: float, lam: float, energy: float, epochs: int, seed: int,
              solver: str = "sgd", rank: int = 0, standardise: bool = False) -> Model:
    """SVD of the centred matrix R, each column divided by its spread when `standardise` (so one lambda weighs every
    column alike in a new row's fold-in), (Q = U, P^T = Sigma V^T, rank by `energy`, or `rank` when > 0), then `epochs` of `solver` over its `known`
    entries only: "sgd" (§2.1, lambda per entry) or "als_wr" (alternating exact solves, lambda times each row's and
    column's count of known entries, ALS-WR)."""
    if solver not in SOLVERS:
        raise ValueError(f"solver: unknown {solver!r}, expected one of {', '.join(SOLVERS)}")
    means, scales, centred, level = centre(matrix, standardise)
    u, s, vt = np.linalg.svd(centred - level, full_matrices=False)
    r = min(rank or rank_for(s, energy), matrix.shape[1] - 1)
    q = np.hstack([u[:, :r] * np.sqrt(s[:r]), level])  # Q = U, P^T = Sigma V^T (split evenly)
    p = np.hstack([vt[:r].T * np.sqrt(s[:r]), np.ones((matrix.shape[1], 1))])  # last factor: the row's own level
    if solver == "als_wr":
        als_wr(centred, known, q, p, lam, epochs)
        return Model(means=means, p=p, confidence=s[:r] ** 2 / np.sum(s**2), eta=eta, lam=lam, rank=rank, scales=scales)
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(known)
    for _ in range(epochs):
        for k in rng.permutation(rows.size):
            i, u_ = rows[k], cols[k]
            err = centred[i, u_] - q[i] @ p[u_]  # eps_ui = r_ui - q_i . p_u (§2.1)
            qi = q[i].copy()
            q[i] += eta * (err * p[u_] - lam * q[i])
            p[u_, :-1] += eta * (err * qi[:-1] - lam * p[u_, :-1])
    return Model(means=means, p=p, confidence=s[:r] ** 2 / np.sum(s**2), eta=eta, lam=lam, rank=rank, scales=scales)


def als_wr(centred: np.ndarray, known: np.ndarray, q: np.ndarray, p: np.ndarray, lam: float, sweeps: int) -> None:
    """ALS with weighted-lambda regularisation (Zhou et al. 2008), in place: each row's q solves
    (P_u^T P_u + lambda n_u I) q = P_u^T r_u, then each column's concepts (the last factor of p is the row level, fixed
    at 1) solve (Q_i^T Q_i + lambda n_i I) p = Q_i^T (r_i - level); n_u, n_i = the row's and column's known entries."""
    k = known.astype(float)
    r = p.shape[1] - 1
    n_rows, n_cols = np.maximum(k.sum(axis=1), 1), np.maximum(k.sum(axis=0), 1)  # a row or column of no entry: factors 0
    for _ in range(sweeps):
        gram = np.einsum("ui,ir,is->urs", k, p, p) + lam * n_rows[:, None, None] * np.eye(r + 1)
        q[:] = np.linalg.solve(gram, np.einsum("ui,ir->ur", k * centred, p)[..., None])[..., 0]
        concepts = q[:, :r]
        gram = np.einsum("ui,ur,us->irs", k, concepts, concepts) + lam * n_cols[:, None, None] * np.eye(r)
        p[:, :r] = np.linalg.solve(gram, np.einsum("ui,ur->ir", k * (centred - q[:, r:]), concepts)[..., None])[..., 0]


def grow(model: Model, offline: np.ndarray, online: Sparse, energy: float = 0.9, epochs: int = 30, seed: int = 0,
         solver: str = "sgd") -> Model:
    """The utility matrix with classified jobs added back as rows (§2.2: "insert it as a new row in matrix A"): R = the
    offline rows over the online rows as reconstructed, their profiled entries in place; decomposed again (§2.1: SVD
    of R), then SGD over the known entries only (offline rows dense, online rows their profiled entries)."""
    rows = classify(model, online)
    np.put_along_axis(rows, online.cols, online.values, axis=1)
    known = np.zeros(rows.shape, dtype=bool)
    np.put_along_axis(known, online.cols, True, axis=1)
    return decompose(np.vstack([offline, rows]), np.vstack([np.ones(offline.shape, dtype=bool), known]),
                     model.eta, model.lam, energy, epochs, seed, solver, model.rank, model.scales is not None)


def fold_in(model: Model, known: Sparse) -> np.ndarray:
    """Latent rows q of a batch of new jobs from their known entries only (P fixed): the point the SGD update of
    §2.1 (q += eta (eps p - lambda q), one step per known entry) converges to, solved exactly,
    (P_k^T P_k + k lambda I) q = P_k^T (r_k - means_k). Constant-step SGD cycles around it (measured 26 Nov: up to 0.3
    off after 100 epochs on rows whose two profiled SCs are alike)."""
    n, k = known.cols.shape
    pk = model.p[known.cols]  # n x k x (r+1)
    target = (known.values - model.means[known.cols]) / (1.0 if model.scales is None else model.scales[known.cols])
    gram = np.einsum("nkr,nks->nrs", pk, pk) + k * model.lam * np.eye(model.p.shape[1])
    return (np.linalg.pinv(gram) @ np.einsum("nkr,nk->nr", pk, target)[..., None])[..., 0]  # lambda 0: the least-norm q, SGD's limit from 0


def classify(model: Model, known: Sparse) -> np.ndarray:
    """Full reconstructed rows (batch x columns) for new jobs known on a few columns (§3.1)."""
    if known.cols.size and (known.cols.min() < 0 or known.cols.max() >= model.p.shape[0]):
        raise ValueError(f"classify: a known column is outside 0..{model.p.shape[0] - 1}")
    return (fold_in(model, known) @ model.p.T) * (1.0 if model.scales is None else model.scales) + model.means


def hide(dense: np.ndarray, per_row: int, rng: np.random.Generator) -> Sparse:
    """Keep `per_row` random entries of each row (the profiling signal of a new job)."""
    cols = np.array([rng.choice(dense.shape[1], size=per_row, replace=False) for _ in range(dense.shape[0])])
    return Sparse(cols=cols, values=np.take_along_axis(dense, cols, axis=1))


ETAS = (0.005, 0.02, 0.05)  # the validation's grid of SGD steps eta (§2.1)
LAMS = (0.01, 0.05, 0.2)  # and of regularisation lambda


def choose_sgd(dense: np.ndarray, etas: tuple[float, ...] = ETAS, lams: tuple[float, ...] = LAMS,
               per_row: int = 2, seed: int = 0, ranks: tuple[int, ...] = (0,), standardise: bool = False) -> tuple[float, float, int]:
    """eta, lambda and the rank (0 = by energy) by validation: train on 3/4 of the offline rows, reconstruct the other
    1/4 from `per_row` entries; the lowest RMSE wins."""
    rng = np.random.default_rng(seed)
    fit, held = split(dense, rng)
    known = hide(held, per_row, rng)
    scores = {}
    for eta, lam, rank in itertools.product(etas, lams, ranks):
        rec = classify(train(fit, eta=eta, lam=lam, epochs=10, seed=seed, rank=rank, standardise=standardise), known)
        scores[(eta, lam, rank)] = float(np.sqrt(np.mean((rec - held) ** 2)))
    best = min(scores, key=scores.get)
    log.info("SGD validation RMSE %s -> eta=%s lambda=%s rank=%s", scores, *best)
    return best


def split(dense: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The validation's offline rows: 3/4 (at least 2) to train on, the others held out."""
    order = rng.permutation(dense.shape[0])
    cut = max(2, dense.shape[0] * 3 // 4)
    return dense[order[:cut]], dense[order[cut:]]


def held_out(model: Model, held: np.ndarray, per_row: int = 2, sets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The held rows' unprofiled entries as reconstructed (clipped to the scores' [0, 1], as the scheduler sees them) and
    their signed errors (reconstructed minus truth), each row reconstructed from every set of columns in `sets` (default:
    every set of `per_row` columns, the expectation over §2.3's random profiled SoIs; one set: the columns every job is
    profiled on); NaN where the entry was profiled. Each of shape (rows x sets, columns)."""
    sets = np.array(list(itertools.combinations(range(held.shape[1]), per_row))) if sets is None else np.asarray(sets)
    cols = np.tile(sets, (held.shape[0], 1))
    truth = np.repeat(held, len(sets), axis=0)
    predicted = np.clip(classify(model, Sparse(cols=cols, values=np.take_along_axis(truth, cols, axis=1))), 0, 1)
    np.put_along_axis(predicted, cols, np.nan, axis=1)
    return predicted, predicted - truth


def _levels(predicted: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each entry's level (rows x columns): how many of its column's level edges its predicted score reaches."""
    return np.sum(predicted[:, None, :] >= edges[None], axis=1)


@dataclass(frozen=True)
class Band:
    """The guard band of one utility matrix (ours, not the paper's; docs/paragon.md "Session 13", "Session 14"): per
    column, sigma in each level of the predicted score; level b of column c holds the predictions in
    [edges[b - 1, c], edges[b, c]) (the first unbounded below, the last above). One level: sigma whatever the prediction."""

    edges: np.ndarray  # (levels - 1) x columns
    sigma: np.ndarray  # levels x columns

    def at(self, predicted: np.ndarray) -> np.ndarray:
        """Each entry's sigma (rows x columns) at its own predicted score."""
        return self.sigma[_levels(predicted, self.edges), np.arange(self.sigma.shape[1])]


SIDES = {"over": 1.0, "under": -1.0}  # the error a guard band covers: tolerated scores too high, caused scores too low
LEVELS = 3  # the level-aware band's levels of the predicted score per column: terciles (~17 of 50 offline rows each; chosen before measuring)


def band(predicted: np.ndarray, errors: np.ndarray, side: str, levels: int = 1) -> Band:
    """Per column and per quantile level of the predicted score (`levels` equal shares of the column's predictions), the
    root mean square of the errors on `side` (SIDES; the other side's errors count as 0): the guard band sigma (ours,
    not the paper's). A level no prediction fell in takes the column's sigma over all levels; a column with no
    classified entry (profiled on every row) has sigma 0."""
    if side not in SIDES:
        raise ValueError(f"side: unknown {side!r}, expected one of {', '.join(SIDES)}")
    if levels < 1:
        raise ValueError(f"levels: expected >= 1, got {levels}")
    never = np.all(np.isnan(predicted), axis=0)  # a column always profiled: measured, never classified
    edges = np.nanquantile(np.where(never, 0.0, predicted), np.arange(1, levels) / levels, axis=0).reshape(levels - 1, predicted.shape[1])
    square = np.where(np.isnan(errors), np.nan, np.maximum(0.0, SIDES[side] * errors) ** 2)
    level = _levels(predicted, edges)
    sums = np.array([np.nansum(np.where(level == b, square, np.nan), axis=0) for b in range(levels)])
    counts = np.array([np.sum((level == b) & ~np.isnan(square), axis=0) for b in range(levels)])
    pooled = np.sqrt(sums.sum(axis=0) / np.maximum(counts.sum(axis=0), 1))  # 0 on a column never classified
    return Band(edges=edges, sigma=np.where(counts > 0, np.sqrt(sums / np.maximum(counts, 1)), pooled))


FOLDS = 4  # the guard band's cross-validation: every offline row held out once, by a model trained on the others


def folds(rows: int, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The offline rows' indices in `count` parts of equal size (within one): each row in exactly one part."""
    if rows < 2 * count:
        raise ValueError(f"folds: {rows} offline rows are too few for {count} folds")
    return np.array_split(rng.permutation(rows), count)


def cross_validated(dense: np.ndarray, fit: Callable[[np.ndarray], Model], parts: list[np.ndarray],
                    per_row: int = 2, sets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`held_out` predictions and errors (from `sets`) of each part's rows under the model `fit` trains on the other
    rows, pooled (stacked) over the parts."""
    pairs = [held_out(fit(np.delete(dense, part, axis=0)), dense[part], per_row, sets) for part in parts]
    return np.vstack([p for p, _ in pairs]), np.vstack([e for _, e in pairs])


def fitter(eta: float, lam: float, rank: int = 0, standardise: bool = False, seed: int = 0) -> Callable[[np.ndarray], Model]:
    """A validation fold's fit: `train` with the parameters `choose_sgd` validated and its 10 epochs."""
    def fit(rows: np.ndarray) -> Model:
        return train(rows, eta=eta, lam=lam, epochs=10, seed=seed, rank=rank, standardise=standardise)

    return fit


def validation_band(dense: np.ndarray, eta: float, lam: float, rank: int, side: str, standardise: bool = False,
                    per_row: int = 2, seed: int = 0, count: int = FOLDS, levels: int = 1,
                    sets: np.ndarray | None = None) -> Band:
    """`band` (in `levels` of the predicted score) of the held-out predictions and errors of a `count`-fold
    cross-validation over the offline rows, each fold's model trained with the parameters and epochs `choose_sgd`
    validated (every offline row held out once; the errors pooled, then RMS), each held-out row reconstructed from the
    profiling rule's `sets` of columns (`held_out`; None: every pair, §2.3's random SoIs)."""
    parts = folds(dense.shape[0], count, np.random.default_rng(seed))
    fit = fitter(eta, lam, rank, standardise, seed)
    return band(*cross_validated(dense, fit, parts, per_row, sets), side, levels)


def choose_sgd_on_profiled(dense: np.ndarray, sets: np.ndarray, etas: tuple[float, ...] = ETAS, lams: tuple[float, ...] = LAMS,
                           ranks: tuple[int, ...] = (0,), standardise: bool = False,
                           seed: int = 0, count: int = FOLDS) -> tuple[float, float, int]:
    """eta, lambda and the rank by validation as the classifier is used (ours): a `count`-fold cross-validation over
    the offline rows (every row held out once), each held-out row reconstructed from the profiled `sets` of columns
    (`cross_validated`, clipped as the scheduler sees them); the lowest RMS error of the unprofiled entries wins."""
    parts = folds(dense.shape[0], count, np.random.default_rng(seed))
    scores = {}
    for eta, lam, rank in itertools.product(etas, lams, ranks):
        _, errors = cross_validated(dense, fitter(eta, lam, rank, standardise, seed), parts, sets.shape[1], sets)
        scores[(eta, lam, rank)] = float(np.sqrt(np.nanmean(errors**2)))
    best = min(scores, key=scores.get)
    log.info("SGD validation on the profiled columns, RMSE %s -> eta=%s lambda=%s rank=%s", scores, *best)
    return best


def validated_ranks(dense: np.ndarray, energy: float = 0.9, standardise: bool = False) -> tuple[int, ...]:
    """The ranks validation may choose: 1 up to the energy cut (§2.1's confidence), at most the concepts the offline
    spectrum carries (a new row's two entries alone pin its level and one concept exactly; more are a lambda-shrunk guess)."""
    _, _, centred, level = centre(dense, standardise)
    s = np.linalg.svd(centred - level, compute_uv=False)
    return tuple(range(1, min(rank_for(s, energy), dense.shape[1] - 1) + 1))


def choose_profile_columns(offline: Sequence[np.ndarray], fits: Sequence[Callable[[np.ndarray], Model]], per_row: int = 2,
                           folds: int = 5, seed: int = 0) -> tuple[int, ...]:
    """The columns every new job is profiled on, the same in each matrix of `offline` (one profiling run gives a job's
    entries in all of them: §2.2's two SCs; §2.3's tolerated and caused scores against the same two SoIs), by
    validation on the offline rows only: in each fold, each matrix's model is trained by its `fits` on the other rows
    and the held-out rows are reconstructed from each set of `per_row` columns; the lowest sum of squared errors over
    the matrices wins, each error in its model's scaled units (divided by Model.scales; an unscaled model's as is)."""
    rows, width = offline[0].shape
    if any(dense.shape != (rows, width) for dense in offline) or len(fits) != len(offline):
        raise ValueError("choose_profile_columns: expected one fit per matrix, all matrices of the same shape")
    if rows < 2 * folds:
        raise ValueError(f"choose_profile_columns: {rows} offline rows are too few for {folds} folds")
    order = np.random.default_rng(seed).permutation(rows)
    sets = list(itertools.combinations(range(width), per_row))
    sq = np.zeros(len(sets))
    for part, (dense, fit) in itertools.product(np.array_split(order, folds), zip(offline, fits)):
        model = fit(np.delete(dense, part, axis=0))
        held = dense[part]
        for i, cols in enumerate(sets):
            idx = np.tile(cols, (held.shape[0], 1))
            err = classify(model, Sparse(cols=idx, values=np.take_along_axis(held, idx, axis=1))) - held
            sq[i] += np.sum((err / (1.0 if model.scales is None else model.scales)) ** 2)
    best = sets[int(np.argmin(sq))]
    log.info("profiling columns %s by validation (RMSE %.4f)", best, np.sqrt(sq.min() / (rows * width * len(offline))))
    return best


def heterogeneity_metrics(predicted: np.ndarray, truth: np.ndarray, profiled: np.ndarray | None = None) -> dict[str, float]:
    """Table 1: best SC found, an SC within 5 % of the best, exact and near-exact (one swap) ranking; with the
    `profiled` columns of each row, "Training & best SC match" (a profiled SC is the row's true best)."""
    rows = np.arange(truth.shape[0])
    best_true = truth.argmax(axis=1)
    chosen = predicted.argmax(axis=1)
    ratio = truth[rows, chosen] / truth[rows, best_true]
    rank_p, rank_t = np.argsort(-predicted, axis=1), np.argsort(-truth, axis=1)
    wrong = np.sum(rank_p != rank_t, axis=1)
    return {"best_sc": float(np.mean(chosen == best_true)), "within_5pct": float(np.mean(ratio >= 0.95)),
            "exact_ranking": float(np.mean(wrong == 0)), "near_exact_ranking": float(np.mean(wrong <= 2)),
            "half_ranked_right": float(np.mean(wrong <= truth.shape[1] / 2)),
            **({} if profiled is None else {"training_best_match": float(np.mean(np.any(profiled == best_true[:, None], axis=1)))})}


def interference_metrics(predicted: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Table 2: mean absolute error of sensitivity scores (in [0, 1]), overall and by range of the truth."""
    err = np.abs(np.clip(predicted, 0, 1) - truth)
    out = {"interference_err": float(err.mean())}
    for name, mask in (("err_below_30pct", truth < 0.3), ("err_below_60pct", truth < 0.6), ("err_above_60pct", truth > 0.6)):
        out[name] = float(err[mask].mean()) if mask.any() else float("nan")
    return out


def top_decile_bias(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Mean signed error (predicted clipped to [0, 1] minus truth) over the entries in the top decile of their column:
    < 0 when the heaviest scores are pulled toward the column mean (hidden by the mean absolute error)."""
    top = truth >= np.quantile(truth, 0.9, axis=0)
    return float(np.mean((np.clip(predicted, 0, 1) - truth)[top]))
