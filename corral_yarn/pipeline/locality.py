"""Did the cluster do what the plan said? Job j's locality against its rack set R_j (thesis §4.1).

Two shares are measured once the job has finished:

* **containers**: of every container the job ran (MRAppMaster attempts, map and reduce attempts,
  from the JobHistory server), the share whose NodeManager is in R_j — the YARN scheduler's part;
* **blocks**: of the input's blocks, the share with at least one replica in R_j (Corral's placement
  promise: one replica of each block in R_j), and of all replicas, the share inside R_j — the HDFS
  block placement policy's part.

When containers ran outside R_j, ``rack_set_fallbacks`` says why: the Corral scheduler's reasons for
lifting the restriction (too few live NodeManagers in R_j, thesis §4.6), as the ResourceManager reports them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from corral_yarn.cluster.history import TaskAttempt
from corral_yarn.cluster.topology import Topology
from corral_yarn.cluster.webhdfs import BlockLocation, WebHdfs


@dataclass(frozen=True)
class Locality:
    """Where job j's containers ran and where its input's replicas are, against R_j."""

    containers: int
    containers_in_racks: int
    blocks: int
    blocks_with_replica_in_racks: int
    replicas: int
    replicas_in_racks: int
    container_racks: dict[str, int]
    rack_set_fallbacks: tuple[str, ...] = ()  # the scheduler's reasons for lifting R_j (§4.6), oldest first

    @property
    def container_share(self) -> float | None:
        return self.containers_in_racks / self.containers if self.containers else None

    @property
    def block_share(self) -> float | None:
        return self.blocks_with_replica_in_racks / self.blocks if self.blocks else None

    @property
    def replica_share(self) -> float | None:
        return self.replicas_in_racks / self.replicas if self.replicas else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "container_share": self.container_share, "block_share": self.block_share,
                "replica_share": self.replica_share}


def _lower(racks: Iterable[str]) -> set[str]:
    return {r.lower() for r in racks}


def attempt_racks(attempts: Iterable[TaskAttempt], topology: Topology) -> list[str]:
    """The rack of each container: the history's rack, or the NodeManager's (AM attempts carry none)."""
    return [a.rack or topology.rack_of_node(a.node_http_address) or "unknown" for a in attempts]


def measure(attempt_racks_: list[str], blocks: list[BlockLocation], racks: Iterable[str]) -> Locality:
    """The locality figures of one job from its containers' racks and its input's block locations."""
    wanted = _lower(racks)
    per_rack: dict[str, int] = {}
    for rack in attempt_racks_:
        per_rack[rack] = per_rack.get(rack, 0) + 1
    return Locality(
        containers=len(attempt_racks_),
        containers_in_racks=sum(1 for r in attempt_racks_ if r.lower() in wanted),
        blocks=len(blocks),
        blocks_with_replica_in_racks=sum(1 for b in blocks if _lower(b.racks) & wanted),
        replicas=sum(len(b.racks) for b in blocks),
        replicas_in_racks=sum(1 for b in blocks for r in b.racks if r.lower() in wanted),
        container_racks=dict(sorted(per_rack.items())),
    )


def input_blocks(hdfs: WebHdfs, root: str) -> list[BlockLocation]:
    """Every block of every visible file under ``root`` (a file or a directory)."""
    status = hdfs.status(root)
    if status["type"] == "FILE":
        return hdfs.block_locations(root) if status["length"] else []
    return [b for name, st in hdfs.list(root, status=True)
            if st["type"] == "FILE" and st["length"] and not name.startswith(("_", "."))
            for b in hdfs.block_locations(posixpath.join(root, name))]
