"""Per-stage reissues apportioned over a DAG (thesis §5.3.1), trained on one trace and simulated on another (§5.4.1).

``ReissueModel`` holds what Kwiken learns from the training trace: costs c_s, curves V_s(r) and, for
the baselines that search with the simulator, training reissue draws. ``allocate`` turns a budget
into per-stage fractions r_s by one of ``POLICIES``; ``timeouts`` turns them into T_s; ``simulate``
replays a test trace with those timeouts, each reissue's latency sampled independently from the
stage's latencies (§5.4.1), and the DAG's latency the longest path (eq. 5.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.kwiken import apportion
from corral_yarn.kwiken.curves import VarianceCurve, reissue_curve, reissued, timeout
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.trace import Trace, stage_costs

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
RANDOM_ALLOCATIONS = 10_000  # §5.4.2
POLICIES = ("sumvar", "sumvar-weighted-mean", "sumvar-weighted-critical", "same-fraction", "equal-budget",
            "variance-proportional", "random-best", "p99-descent")
SEARCHING = ("random-best", "p99-descent")  # brute force with the simulator: small DAGs only (§5.4.2)
_CHUNK = 64  # random allocations simulated at once


def reissue_draws(latency: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
    """One reissue latency per request and stage, drawn independently from the stage's latencies (§5.4.1)."""
    rows = rng.integers(0, latency.shape[0], size=latency.shape)
    return np.take_along_axis(latency, rows, axis=0)


def timeouts(ordered: NDArray[np.float64], r: NDArray[np.float64]) -> NDArray[np.float64]:
    """T_s = the (1 - r_s) quantile of stage s's training latencies (columns of ``ordered``, sorted), for r (..., N) (§3.2.2)."""
    r = np.asarray(r, dtype=np.float64)
    return np.stack([timeout(ordered[:, s], r[..., s]) for s in range(ordered.shape[1])], axis=-1)


@dataclass(frozen=True)
class Outcome:
    """One simulated run: end-to-end latency per request and the fraction reissued at each stage."""

    latency: NDArray[np.float64]
    reissued: NDArray[np.float64]

    def percentiles(self) -> dict[str, float]:
        return {f"p{p:g}": float(v) for p, v in zip(PERCENTILES, np.percentile(self.latency, PERCENTILES))}


def simulate(dag: KwikenDag, latency: NDArray[np.float64], draws: NDArray[np.float64], timeouts_: NDArray[np.float64]) -> Outcome:
    """Replay requests with per-stage reissue timeouts; the same ``draws`` give every policy the same luck."""
    return Outcome(dag.latency(reissued(latency, draws, timeouts_)), np.mean(latency > timeouts_, axis=0))


@dataclass(frozen=True)
class ReissueModel:
    """Kwiken's reissue model of one DAG, learned from a training trace."""

    dag: KwikenDag
    train: Trace
    costs: NDArray[np.float64]
    curves: tuple[VarianceCurve, ...]
    draws: NDArray[np.float64]
    ordered: NDArray[np.float64]  # training latencies, each column sorted

    @classmethod
    def fit(cls, dag: KwikenDag, train: Trace, seed: int = 0) -> ReissueModel:
        rng = np.random.default_rng(seed)
        curves = tuple(reissue_curve(train.latency[:, s], rng) for s in range(len(dag.stages)))
        return cls(dag, train, stage_costs(dag, train), curves, reissue_draws(train.latency, rng), np.sort(train.latency, axis=0))

    def allocate(self, policy: str, budget: float, seed: int = 0, random_allocations: int = RANDOM_ALLOCATIONS) -> NDArray[np.float64]:
        """Per-stage fractions r_s for ``budget`` under ``policy`` (one of POLICIES)."""
        if policy == "sumvar":
            return apportion.sumvar(self.curves, self.costs, budget)
        if policy == "sumvar-weighted-mean":  # w_s = mean latency of s (§5.2, §5.4.2)
            return apportion.sumvar(self.curves, self.costs, budget, weights=self.train.latency.mean(axis=0))
        if policy == "sumvar-weighted-critical":  # w_s = how often s is on the critical path (§5.2, §5.4.2)
            return apportion.sumvar(self.curves, self.costs, budget, weights=self.critical_share())
        if policy == "same-fraction":
            return apportion.same_fraction(self.costs, budget)
        if policy == "equal-budget":
            return apportion.equal_budget(self.costs, budget)
        if policy == "variance-proportional":
            return apportion.variance_proportional(self.costs, budget, self.curves)
        if policy == "random-best":
            return self.best_random(budget, random_allocations, np.random.default_rng(seed))
        if policy == "p99-descent":
            return apportion.descent(lambda r: self.train_percentile(r[None, :])[0], self.costs, budget)
        raise ValueError(f"unknown policy {policy!r}; one of {POLICIES}")

    def timeouts(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        return timeouts(self.ordered, r)

    def train_percentile(self, r: NDArray[np.float64], q: float = 99.0) -> NDArray[np.float64]:
        """The training trace's q-th percentile of DAG latency under each row of allocations r (A x N)."""
        t = self.timeouts(r)  # A x N
        stage = reissued(self.train.latency[None], self.draws[None], t[:, None, :])  # A x R x N
        return np.percentile(self.dag.latency(stage), q, axis=-1)

    def best_random(self, budget: float, count: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """The best of ``count`` random budget allocations by training p99 (§5.4.2)."""
        candidates = apportion.random_budgets(self.costs, budget, count, rng)
        p99 = np.concatenate([self.train_percentile(candidates[k:k + _CHUNK]) for k in range(0, count, _CHUNK)])
        return candidates[int(np.argmin(p99))]

    def critical_share(self) -> NDArray[np.float64]:
        """How often each stage lies on a request's critical path, without reissues (the weights of §5.2)."""
        x = self.train.latency
        total = self.dag.latency(x)
        share = np.zeros(x.shape[1])
        for s in range(x.shape[1]):  # s is critical where shortening it shortens the DAG
            shorter = x.copy()
            shorter[:, s] *= 0.5
            share[s] = np.mean(self.dag.latency(shorter) < total)
        return share
