"""Fault: a DataNode of R_j dies in the middle of a rack-aware upload (thesis §4.1; docs/reliability.md).

The DataNode the upload is streaming a file through is stopped through the control channel after the
file's first MiB has gone out. What a user cares about: the upload still completes, every block of the
input has a replica in R_j, not one byte is lost or half-written, and nothing but the complete input is
ever visible at the target.
"""

from __future__ import annotations

import posixpath
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.upload import CHUNK_BYTES, TEMP_SUFFIX, RackAwareUploader
from corral_yarn.cluster.webhdfs import WebHdfs

pytestmark = pytest.mark.integration
BLOCK = 256 * 1024
RACK = "/rack-a"


class StopWriterMidFile:
    """The cluster's WebHDFS client, except that the first file written through a DataNode stops that
    DataNode (``faults.stop``) once its first chunk has been sent, and checks that the target is still absent."""

    def __init__(self, hdfs: WebHdfs, faults: Any, http_to_host: dict[str, str], target: str) -> None:
        self.hdfs = hdfs
        self.faults = faults
        self.http_to_host = http_to_host
        self.target = target
        self.victim: str | None = None
        self.target_seen_mid_upload: Any = "not checked"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hdfs, name)

    def create_through(self, path: str, data: Iterable[bytes], datanode_http: str | None, **options: Any) -> None:
        if self.victim is None and datanode_http is not None:
            self.victim = datanode_http
            data = self._stop_after_first_chunk(data, self.http_to_host[datanode_http])
        self.hdfs.create_through(path, data, datanode_http, **options)

    def _stop_after_first_chunk(self, data: Iterable[bytes], host: str) -> Iterator[bytes]:
        chunks = iter(data)
        yield next(chunks)
        self.faults.stop("datanode", host)
        self.target_seen_mid_upload = self.hdfs.status(self.target, strict=False)
        yield from chunks


@pytest.fixture(scope="module")
def cluster(fault_cluster: dict[str, Any]) -> Cluster:
    # a DataNode's write waits out its pipeline's recovery from the dead node: give it more than the default 30 s
    return Cluster.from_description(fault_cluster, progress=False, timeout_s=120.0)


def test_upload_survives_its_writer_datanode_dying_mid_file(cluster: Cluster, faults: Any, fault_cluster: dict[str, Any],
                                                            tmp_path: Path) -> None:
    local = tmp_path / "input.bin"
    local.write_bytes(random.Random(20).randbytes(16 * BLOCK))  # two segments of 8 blocks (2 chunks) each
    assert 8 * BLOCK > CHUNK_BYTES, "the writer must die with its segment half sent"
    target = f"/it/fault-dn-{random.randrange(10**6)}/input.bin"
    http_to_host = {n["datanode_http"].removeprefix("http://"): n["host"] for r in fault_cluster["racks"] for n in r["nodes"]}
    topology = cluster.topology()
    assert len(topology.datanodes_in([RACK])) == 2
    client = StopWriterMidFile(cluster.hdfs, faults, http_to_host, target)
    uploader = RackAwareUploader(client, topology, progress=False)  # type: ignore[arg-type]  # the real client, plus a fault

    report = uploader.upload(local, target, [RACK], block_bytes=BLOCK, replication=2)

    victim = http_to_host[client.victim or ""]
    assert faults.stopped == [("datanode", victim)], "the fault was injected mid-file"
    assert client.target_seen_mid_upload is None, "nothing visible at the target while the upload runs"
    assert [name.split(":")[0] for name in report.writers_lost] == [victim]
    assert report.blocks == 16 and report.share_in_rack_set == 1.0, report
    assert cluster.hdfs.status(target)["length"] == local.stat().st_size
    with cluster.hdfs.read(target) as f:
        assert f.read() == local.read_bytes(), "0 bytes lost or changed"
    parent = posixpath.dirname(target)
    assert cluster.hdfs.list(parent) == ["input.bin"], "no half-written, temporary or repair copy left"
    assert cluster.hdfs.status(target + TEMP_SUFFIX, strict=False) is None

    # The rack has room again: the DataNode comes back, every block still has a replica in R_j.
    faults.start("datanode", victim)
    assert all(RACK in b.racks for b in cluster.hdfs.block_locations(target))
    assert sum(1 for d in cluster.topology().datanodes if d.host == victim) == 1
