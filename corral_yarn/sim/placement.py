"""Where HDFS puts the replicas of a job's input blocks (thesis §4.1, §4.5.2).

A placement is an int array (blocks x replicas) of rack indices; replicas of one block may share a
rack (HDFS default puts the second and third on the same remote rack).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Racks = NDArray[np.int64]


def hdfs_default(blocks: int, racks: int, rng: np.random.Generator) -> Racks:
    """BlockPlacementPolicyDefault for an upload from a random node: 1st replica on the writer's rack,
    2nd on a different random rack, 3rd on the 2nd's rack (another node there)."""
    first = rng.integers(0, racks, size=blocks)
    if racks == 1:
        return np.stack([first, first, first], axis=1)
    second = (first + rng.integers(1, racks, size=blocks)) % racks
    return np.stack([first, second, second], axis=1)


def corral(blocks: int, rack_set: Racks, racks: int, rng: np.random.Generator) -> Racks:
    """Corral's policy (§4.1): one replica on a random rack of R_j, the other two on two other racks
    drawn at random from the whole cluster (excluding the one chosen so far)."""
    first = rack_set[rng.integers(0, rack_set.size, size=blocks)]
    if racks < 3:
        return np.stack([first, (first + 1) % racks, (first + 1) % racks], axis=1)
    # two distinct offsets in 1..racks-1 give two distinct racks other than the first
    a = rng.integers(1, racks, size=blocks)
    b = rng.integers(1, racks - 1, size=blocks)
    b = np.where(b >= a, b + 1, b)
    return np.stack([first, (first + a) % racks, (first + b) % racks], axis=1)


def from_outputs(blocks: int, output_by_rack: NDArray[np.float64], racks: int, rng: np.random.Generator) -> Racks:
    """Input of a DAG stage that reads its parents' output: the writer's rack (drawn in proportion to
    where the parents' reducers wrote) plus HDFS's remote pair."""
    total = output_by_rack.sum()
    weights = output_by_rack / total if total > 0 else np.full(racks, 1.0 / racks)
    first = rng.choice(racks, size=blocks, p=weights)
    if racks == 1:
        return np.stack([first, first, first], axis=1)
    second = (first + rng.integers(1, racks, size=blocks)) % racks
    return np.stack([first, second, second], axis=1)


def stored_bytes_per_rack(replicas: Racks, block_bytes: float, racks: int) -> NDArray[np.float64]:
    """Bytes stored on each rack, counting every replica."""
    return np.bincount(replicas.ravel(), minlength=racks) * block_bytes
