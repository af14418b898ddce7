"""Resource selection strategies (thesis §4.4.1, §4.4.4): which feasible tuple a request gets.

* Baseline -- the fixed tuple <N_base, B_base>; no malleability.
* Corral-R -- frontier tuples in random order; the first one that can be allocated.
* Corral-I -- the frontier tuple whose allocation leaves the least resource imbalance (§4.2.1).
* Corral-T -- among tuples finishing no later than the deadline, least imbalance x T (§4.4.4).
* Strawman -- the fastest tuple that can be allocated (§4.4.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from corral_yarn.selector.candidates import Candidate, CandidateSpace
from corral_yarn.selector.tree import Allocation, Datacenter

Strategy = Literal["baseline", "corral-r", "corral-i", "corral-t", "strawman"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


@dataclass(frozen=True)
class Choice:
    """The selected tuple, where it would be allocated, and the imbalance that leaves (if computed)."""

    candidate: Candidate
    allocation: Allocation
    imbalance: float | None = None


def _first_feasible(dc: Datacenter, candidates: Sequence[Candidate]) -> Choice | None:
    for c in candidates:
        if (alloc := dc.find(c.request)) is not None:
            return Choice(c, alloc)
    return None


def _least_cost(dc: Datacenter, candidates: Sequence[Candidate], cost: Callable[[Candidate, float], float]) -> Choice | None:
    """Allocate every candidate (without committing) and keep the one of least cost(tuple, imbalance)."""
    best: Choice | None = None
    best_cost = np.inf
    for c in candidates:
        if (alloc := dc.find(c.request)) is None:
            continue
        imbalance = dc.imbalance(alloc)
        if (value := cost(c, imbalance)) < best_cost:
            best, best_cost = Choice(c, alloc, imbalance), value
    return best


def select(strategy: Strategy, dc: Datacenter, space: CandidateSpace, rng: np.random.Generator) -> Choice | None:
    """The tuple ``strategy`` picks for one request and its allocation, or None (rejected)."""
    if strategy == "baseline":
        return _first_feasible(dc, [space.baseline] if space.baseline else [])
    if strategy == "corral-r":
        return _first_feasible(dc, [space.frontier[i] for i in rng.permutation(len(space.frontier))])
    if strategy == "corral-i":
        return _least_cost(dc, space.frontier, lambda c, imbalance: imbalance)  # §4.2.1
    if strategy == "corral-t":
        return _least_cost(dc, space.faster, lambda c, imbalance: imbalance * c.latency_s)  # §4.4.4
    return _first_feasible(dc, sorted(space.faster, key=lambda c: c.latency_s))
