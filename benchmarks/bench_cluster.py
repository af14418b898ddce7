"""Cluster adapters benchmark on a running embedded cluster: rack-aware upload next to a plain HdfsCLI
upload of the same data, one replica per block so the share shows where the first replica lands
(throughput, share of blocks with their replica in R_j, racks spanned), and the
REST round trips of a submission. One JSON line.

Needs a running cluster: ``CORRAL_CLUSTER_JSON`` (default .corral/minicluster/cluster.json); start
one with ``python -m corral_yarn.minicluster start``. Prints {"error": ...} when there is none.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from corral_yarn.cluster import Cluster, CorralTags, Endpoints
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.topology import Topology
from corral_yarn.errors import CorralError

CASES = {"64KiB_blocks": (65536, 4, 32), "1MiB_blocks": (2**20, 4, 8)}  # block size, files, blocks per file


def placement(cluster: Cluster, root: str, racks: list[str]) -> tuple[int, int, set[str]]:
    blocks = in_set = 0
    spanned: set[str] = set()
    for name in cluster.hdfs.list(root):
        for b in cluster.hdfs.block_locations(f"{root}/{name}"):
            blocks += 1
            in_set += any(r in racks for r in b.racks)
            spanned |= set(b.racks)
    return blocks, in_set, spanned


def upload_case(cluster: Cluster, topo: Topology, rack: str, block: int, files: int, blocks_per_file: int, run: str) -> dict[str, object]:
    """One data set uploaded both ways, one replica per block."""
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "in"
        local.mkdir()
        for k in range(files):
            (local / f"part-{k}").write_bytes(random.Random(k).randbytes(blocks_per_file * block))
        size_mb = files * blocks_per_file * block / 2**20
        t0 = time.perf_counter()
        report = cluster.uploader(topo).upload(local, f"/bench/{run}/rack-aware", [rack], block_bytes=block, replication=1)
        t_aware = time.perf_counter() - t0
        t0 = time.perf_counter()
        cluster.hdfs.upload(f"/bench/{run}/plain", str(local), n_threads=cluster.threads, blocksize=block, replication=1)
        t_plain = time.perf_counter() - t0
    blocks, in_set, spanned = placement(cluster, f"/bench/{run}/plain", [rack])
    return {
        "mib": size_mb, "blocks": report.blocks,
        "rack_aware": {"seconds": round(t_aware, 2), "mib_per_s": round(size_mb / t_aware, 2),
                       "share_in_rack_set": report.share_in_rack_set, "racks_spanned": len(report.racks_spanned)},
        "hdfscli_plain": {"seconds": round(t_plain, 2), "mib_per_s": round(size_mb / t_plain, 2),
                          "share_in_rack_set": round(in_set / blocks, 4) if blocks else None, "racks_spanned": len(spanned)},
    }


def main() -> None:
    path = Path(os.environ.get("CORRAL_CLUSTER_JSON") or ".corral/minicluster/cluster.json")
    try:
        cluster = Cluster(Endpoints.from_cluster_json(path), progress=False)
        topo = cluster.topology()
    except CorralError as exc:
        print(json.dumps({"error": f"no running cluster: {exc}"}))
        return
    rack = topo.racks[0]
    run = random.Random().randrange(10**6)
    uploads = {name: upload_case(cluster, topo, rack, *case, run=f"{run}-{name}") for name, case in CASES.items()}
    t0 = time.perf_counter()
    app = cluster.rm.submit(YarnApp(name="bench", command="sleep 1", memory_mb=256).submission(
        cluster.hdfs, "", CorralTags(f"bench-{run}", "sleep", (rack,))))
    t_submit = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = cluster.rm.submit(YarnApp(name="bench", command="sleep 1", memory_mb=256).submission(
        cluster.hdfs, "", CorralTags(f"bench-{run}", "sleep", (rack,))))
    t_resubmit = time.perf_counter() - t0
    cluster.rm.kill(app.app_id)
    print(json.dumps({
        "racks": len(topo.racks), "datanodes": len(topo.datanodes), "rack_set": [rack], "uploads": uploads,
        "submit_s": round(t_submit, 3), "idempotent_resubmit_s": round(t_resubmit, 3),
        "resubmit_same_app": again.app_id == app.app_id,
    }))


if __name__ == "__main__":
    sys.exit(main())
