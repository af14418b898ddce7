"""Network sharing for the flow-level simulator: weighted max-min fairness (TCP-like) and Varys.

A flow here is an *aggregate*: a cohort of tasks of one job moving bytes at the same time (see
docs/simulator.md). It crosses links with a coefficient each (the share of its bytes that passes the
link: a shuffle cohort fetches a fraction f_a of its bytes from rack a, so it loads a's uplink with
f_a x its rate) and carries a weight, the number of TCP connections it stands for, so that max-min
fairness between aggregates equals per-connection fairness. Every flow also has a rate cap (its
tasks' NICs or processing rate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
_EPS = 1e-9


@dataclass(frozen=True)
class FlowSet:
    """The active flows as flat arrays: ``rows[k]`` uses link ``cols[k]`` with coefficient ``coef[k]``."""

    rows: NDArray[np.int64]
    cols: NDArray[np.int64]
    coef: Array
    weight: Array  # TCP connections per flow (> 0)
    cap: Array  # bytes/s a flow can never exceed
    remaining: Array  # bytes still to move (Varys orders by it)
    coflow: NDArray[np.int64]  # the coflow (job stage and transfer kind) each flow belongs to

    @property
    def size(self) -> int:
        return self.weight.size


def max_min(capacity: Array, flows: FlowSet, cap: Array | None = None) -> Array:
    """Weighted max-min fair rates by progressive filling (water-filling).

    All unfrozen flows raise their per-connection rate together; a flow freezes when a link it
    crosses saturates or it reaches its cap. A round raises the level to the first link saturation
    computed as if no flow were capped; caps only lower the loads, so every flow whose cap lies below
    that level reaches it first and all of them freeze in the same round. Rounds are thus bounded by
    the number of links, not of flows.
    """
    n, links = flows.size, capacity.size
    cap = flows.cap if cap is None else cap
    rate = np.zeros(n)
    if n == 0:
        return rate
    resid = capacity.astype(np.float64).copy()
    scale = np.maximum(capacity, 1.0)
    active = cap > _EPS
    contribution = flows.coef * flows.weight[flows.rows]  # link load per unit of per-connection level
    load = np.bincount(flows.cols, contribution * active[flows.rows], minlength=links)
    by_link = np.argsort(flows.cols, kind="stable")
    link_start = np.searchsorted(flows.cols[by_link], np.arange(links + 1))
    open_link = np.ones(links, dtype=bool)
    while active.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            link_room = np.where(open_link & (load > _EPS), np.maximum(resid, 0.0) / load, np.inf)
            flow_room = np.where(active, (cap - rate) / flows.weight, np.inf)
        step = link_room.min()
        if not np.isfinite(step):  # no link binds any more: every active flow runs at its cap
            step = flow_room[active].max()
        capped = active & (flow_room <= step * (1.0 + _EPS))
        increase = np.where(capped, cap - rate, np.where(active, step * flows.weight, 0.0))
        rate += increase
        resid -= np.bincount(flows.cols, flows.coef * increase[flows.rows], minlength=links)
        full = np.flatnonzero(open_link & (load > _EPS) & (resid <= _EPS * scale))
        open_link[full] = False
        frozen = capped
        if full.size:
            entries = np.concatenate([by_link[link_start[l] : link_start[l + 1]] for l in full])
            frozen[flows.rows[entries]] = True
        frozen &= active
        active &= ~frozen
        gone = frozen[flows.rows]
        load -= np.bincount(flows.cols[gone], contribution[gone], minlength=links)
    return rate


def varys(capacity: Array, flows: FlowSet) -> Array:
    """Varys (Chowdhury et al., SIGCOMM 2014): SEBF order, MADD rates, then work conservation.

    Smallest-Effective-Bottleneck-First orders coflows by Gamma, the time the coflow needs alone on
    its most loaded link; Minimum-Allocation-for-Desired-Duration gives each of its flows
    remaining / Gamma so that all finish together. Deviation: ports are every link a flow crosses
    (NIC pools and the oversubscribed rack uplinks), not only the machines' NICs.
    """
    n, links = flows.size, capacity.size
    rate = np.zeros(n)
    if n == 0:
        return rate
    resid = capacity.astype(np.float64).copy()
    coflows, inverse = np.unique(flows.coflow, return_inverse=True)
    demand_key = inverse[flows.rows] * links + flows.cols
    keys, demand = _group_sum(demand_key, flows.coef * flows.remaining[flows.rows])
    key_coflow, key_link = keys // links, keys % links
    with np.errstate(divide="ignore"):
        own = np.bincount(inverse, minlength=coflows.size) * 0.0
        np.maximum.at(own, inverse, flows.remaining / flows.cap)  # a flow's own cap bounds Gamma too
        alone = np.zeros(coflows.size)
        np.maximum.at(alone, key_coflow, demand / capacity[key_link])
    gamma = np.maximum(alone, own)
    members = _members(inverse, coflows.size)
    by_key = _members(key_coflow, coflows.size)
    for c in np.argsort(gamma, kind="stable"):  # SEBF
        ks = by_key[c]
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.max(demand[ks] / np.maximum(resid[key_link[ks]], 0.0), initial=own[c])
        if not np.isfinite(tau) or tau <= 0:
            continue
        fs = members[c]
        rate[fs] = flows.remaining[fs] / tau  # MADD
        np.subtract.at(resid, key_link[ks], demand[ks] / tau)
    leftover = max_min(np.maximum(resid, 0.0), flows, cap=np.maximum(flows.cap - rate, 0.0))
    return rate + leftover


def _group_sum(keys: NDArray[np.int64], values: Array) -> tuple[NDArray[np.int64], Array]:
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.bincount(inverse, values, minlength=unique.size)


def _members(group: NDArray[np.int64], groups: int) -> list[NDArray[np.int64]]:
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(groups + 1))
    return [order[bounds[g] : bounds[g + 1]] for g in range(groups)]


SHARING = {"tcp": max_min, "varys": varys}
