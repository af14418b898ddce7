"""Catch-up by global reissues (thesis §5.3.3, §5.4.4): a request that is late in the DAG as a whole is
reissued more aggressively in its later stages.

A local reissue fires when a request has spent T_s in stage s (§5.3.1). A global reissue fires at stage
s once the request's elapsed time since it entered the DAG passes G_s. Catch-up decisions depend on the
earlier stages, so the budget cannot be split by the separable SumVar; the thesis uses a rule of thumb
(§5.3.3): the catch-up budget goes to the stages in proportion to their local reissue budget. G_s is
then the (1 - g_s) quantile of the elapsed time at which stage s finishes on the training trace, so a
fraction g_s of requests would be reissued there. A stage reissues a request at most once, at whichever
of the two rules fires first, so catch-up never spends more than it is given.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from corral_yarn.kwiken import apportion
from corral_yarn.kwiken.curves import timeout
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.reissue import Outcome, ReissueModel

NEVER = np.inf


def topological(dag: KwikenDag) -> list[int]:
    """Stage indices, each after every stage it runs after."""
    index, after, order = {n: k for k, n in enumerate(dag.names)}, dag.after, []
    done: set[str] = set()
    while len(order) < len(index):
        for name in dag.names:
            if name not in done and all(p in done for p in after[name]):
                done.add(name)
                order.append(index[name])
    return order


def _entry(dag: KwikenDag, finish: NDArray[np.float64], s: int) -> NDArray[np.float64]:
    """When each request enters stage s: the last of its predecessors' finishes (0 at a source)."""
    before = [dag.names.index(p) for p in dag.after[dag.names[s]]]
    return finish[:, before].max(axis=1) if before else np.zeros(finish.shape[0])


def run(dag: KwikenDag, latency: NDArray[np.float64], draws: NDArray[np.float64], local: NDArray[np.float64],
        global_: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Each request through the DAG with local timeouts T_s and global thresholds G_s (R x N latencies):
    end-to-end latency, which (request, stage) were reissued, and when each stage finished (elapsed)."""
    finish = np.zeros_like(latency)
    reissued = np.zeros(latency.shape, dtype=bool)
    for s in topological(dag):
        start = _entry(dag, finish, s)
        alone = start + latency[:, s]
        launch = np.where(start > global_[s], start, start + local[s])  # late into s: reissued as it enters (§5.3.3)
        reissued[:, s] = alone > launch
        finish[:, s] = np.where(reissued[:, s], np.minimum(alone, launch + draws[:, s]), alone)
    return finish.max(axis=1), reissued, finish


def split(dag: KwikenDag, costs: NDArray[np.float64], local_r: NDArray[np.float64], budget: float) -> NDArray[np.float64]:
    """Per-stage fractions g_s of requests to reissue globally: ``budget`` split over the stages that run
    after another (a request enters a source on time) in proportion to their local reissue spend c_s r_s
    (the rule of thumb of §5.3.3), evenly by cost where none has any."""
    c = apportion.normalised(costs)
    later = np.array([bool(dag.after[n]) for n in dag.names])
    spend = np.where(later, c * local_r, 0.0)
    share = spend / spend.sum() if spend.sum() > 0 else later / max(later.sum(), 1)
    return np.clip(budget * share / c, 0.0, 1.0)


def thresholds(model: ReissueModel, local: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    """G_s: on the training trace with local reissues, the elapsed time at which requests enter stage s
    above which a fraction g_s of all requests lies among those s did not reissue locally (the extra reissues)."""
    _, local_reissued, finish = run(model.dag, model.train.latency, model.draws, local, np.full(local.size, NEVER))
    start = np.stack([_entry(model.dag, finish, s) for s in range(local.size)], axis=1)
    ordered = np.sort(np.where(local_reissued, -np.inf, start), axis=0)
    return np.array([float(timeout(ordered[:, s], g[s])) for s in range(local.size)])


def plan(model: ReissueModel, budget: float, catch_up_share: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Local timeouts T_s from SumVar over (1 - share) of the budget, and global thresholds G_s for the rest;
    a DAG whose stages all start with the request (no stage after another) keeps the whole budget local."""
    share = catch_up_share if any(model.dag.after.values()) else 0.0
    local_r = apportion.sumvar(model.curves, model.costs, budget * (1.0 - share))
    local = model.timeouts(local_r)
    return local, thresholds(model, local, split(model.dag, model.costs, local_r, budget * share))


def simulate(model: ReissueModel, latency: NDArray[np.float64], draws: NDArray[np.float64], local: NDArray[np.float64],
             global_: NDArray[np.float64]) -> Outcome:
    """A test trace replayed with local and global reissues: end-to-end latency and the share reissued per stage."""
    end, reissued, _ = run(model.dag, latency, draws, local, global_)
    return Outcome(end, reissued.mean(axis=0))
