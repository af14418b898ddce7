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


def corral(blocks: int, rack_set: Racks, racks: int, rng: np.random.Generator, stored: NDArray[np.float64], block_bytes: float) -> Racks:
    """Corral's policy: one replica on a random rack of R_j (§4.1); the other two on two other racks,
    the least loaded ones by bytes stored so far, as Corral did in practice to balance data (§4.3.4).
    ``stored`` (bytes per rack) is updated in place."""
    first = rack_set[rng.integers(0, rack_set.size, size=blocks)]
    out = np.empty((blocks, 3), dtype=np.int64)
    out[:, 0] = first
    if racks < 3:
        out[:, 1] = out[:, 2] = (first + 1) % racks
    for b, f in enumerate(first):
        stored[f] += block_bytes
        load = stored.copy()
        load[f] = np.inf
        pair = np.argpartition(load, 1)[:2] if racks >= 3 else out[b, 1:]
        out[b, 1:] = pair
        stored[pair] += block_bytes
    return out


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
