"""Rack-aware upload of a job's input: one replica of every block in the job's racks R_j (thesis §4.1).

Each file is cut at block boundaries into at most one segment per DataNode of R_j, and each segment
is written through a DataNode of R_j (``CREATE`` for the first, ``APPEND`` for the next ones, so
every new block has a chosen writer); segments go to the least-loaded rack of R_j, then its least-loaded
node, so the job's input is spread evenly over R_j and tasks in every rack of R_j find local data. The upload is atomic: everything is
written under ``<target>._COPYING_`` (Hadoop's own name for a copy in progress), checked, then renamed;
an interrupted upload leaves nothing at the target and a rerun starts the copy over.

When a DataNode of R_j fails under the upload (its WebHDFS write breaks or it cannot be reached; the
NameNode lists a dead DataNode as live until its heartbeats expire), the file being written through it
is written again from its start through R_j's other DataNodes, and no later segment is sent to it.

When R_j refuses a writer (a full or decommissioning DataNode), HDFS puts that block's first replica
elsewhere. The upload then *repairs* the files holding such blocks before the rename: each is written
again (WebHDFS has no way to move one replica) through DataNodes of R_j other than the ones whose
segments left R_j, and kept if it has fewer blocks outside R_j.
"""

from __future__ import annotations

import logging
import math
import posixpath
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from corral_yarn.cluster.errors import ClusterError, DataNodeWriteError
from corral_yarn.cluster.topology import DataNodeInfo, Topology
from corral_yarn.cluster.webhdfs import BlockLocation, WebHdfs
from corral_yarn.errors import InputError

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20
TEMP_SUFFIX = "._COPYING_"


@dataclass(frozen=True)
class Segment:
    """Bytes [offset, offset + length) of one file, written through one DataNode (None: NameNode's choice)."""

    offset: int
    length: int
    datanode: DataNodeInfo | None


@dataclass(frozen=True)
class FilePlan:
    local: Path
    relative: str  # path under the target ('' when the target is the file itself)
    size: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class PlacementReport:
    """Where the replicas of an upload landed, as ``GETFILEBLOCKLOCATIONS`` reports them."""

    target: str
    rack_set: tuple[str, ...]
    files: int
    bytes: int
    blocks: int
    blocks_in_rack_set: int
    replica_bytes_per_rack: dict[str, int] = field(default_factory=dict)
    rack_set_unavailable: bool = False  # R_j had no live DataNode: uploaded with HDFS's default placement
    blocks_repaired: int = 0  # blocks first written outside R_j, in R_j after their file was rewritten
    files_rewritten: int = 0
    writers_lost: tuple[str, ...] = ()  # DataNodes of R_j that failed under the upload (their files written again)

    @property
    def share_in_rack_set(self) -> float:
        """Share of blocks with at least one replica in R_j (1.0 for an empty upload)."""
        return self.blocks_in_rack_set / self.blocks if self.blocks else 1.0

    @property
    def racks_spanned(self) -> list[str]:
        return sorted(self.replica_bytes_per_rack)


def local_files(local: Path) -> list[tuple[Path, str]]:
    """(file, path relative to the upload root) for a file or every file under a directory, sorted."""
    if local.is_file():
        return [(local, "")]
    if not local.is_dir():
        raise InputError(f"no such file or directory: {local}")
    return [(p, p.relative_to(local).as_posix()) for p in sorted(local.rglob("*")) if p.is_file()]


def plan_segments(files: list[tuple[Path, str]], datanodes: list[DataNodeInfo], block_bytes: int) -> list[FilePlan]:
    """Cut files at block boundaries into at most one segment per DataNode of R_j, and give each segment
    a DataNode of the rack of R_j with the fewest bytes of this upload so far, then the node of that rack
    with the fewest, then the one with the most free space.

    Balancing this upload's bytes (not free space, which differs by more than a small upload between
    nodes sharing a disk) spreads the input over every rack of R_j, where the job's tasks run (§4.1).
    Nodes without room for a segment are skipped unless no node has room. Segments are whole runs of
    blocks because each one costs a round trip to the NameNode and a new writer in the DataNode;
    within a rack the placement policy spreads blocks.
    """
    per_node: dict[str, int] = defaultdict(int)
    per_rack: dict[str, int] = defaultdict(int)
    plans = []
    for local, relative in sorted(files, key=lambda f: -f[0].stat().st_size):
        size = local.stat().st_size
        blocks = max(1, math.ceil(size / block_bytes))
        step = math.ceil(blocks / max(1, len(datanodes))) * block_bytes
        segments: list[Segment] = []
        for offset in range(0, size, step) if size else [0]:
            length = min(step, size - offset)
            node = _least_loaded(datanodes, per_rack, per_node, length)
            if node is not None:
                per_node[node.name] += length
                per_rack[node.rack.lower()] += length
            if segments and segments[-1].datanode == node:
                segments[-1] = Segment(segments[-1].offset, segments[-1].length + length, node)
            else:
                segments.append(Segment(offset, length, node))
        plans.append(FilePlan(local, relative, size, tuple(segments)))
    return plans


def _least_loaded(datanodes: list[DataNodeInfo], per_rack: dict[str, int], per_node: dict[str, int],
                  length: int) -> DataNodeInfo | None:
    roomy = [d for d in datanodes if d.remaining_bytes - per_node[d.name] >= length] or datanodes
    return min(roomy, key=lambda d: (per_rack[d.rack.lower()], per_node[d.name], -d.remaining_bytes), default=None)


class RackAwareUploader:
    """Uploads local files so that one replica of each block sits in a rack set R_j."""

    def __init__(self, client: WebHdfs, topology: Topology, threads: int = 4, progress: bool = True) -> None:
        self.client = client
        self.topology = topology
        self.threads = threads
        self.progress = progress

    def upload(self, local: str | Path, target: str, racks: list[str], block_bytes: int | None = None,
               replication: int | None = None, overwrite: bool = False) -> PlacementReport:
        """Upload a file or directory to ``target`` with one replica of every block in ``racks``."""
        return self._upload(Path(local), target, racks, block_bytes, replication, overwrite)

    def _upload(self, local: Path, target: str, racks: list[str], block_bytes: int | None, replication: int | None,
                overwrite: bool) -> PlacementReport:
        files = local_files(local)
        if self.client.status(target, strict=False) is not None and not overwrite:
            raise InputError(f"{target} already exists in HDFS; pass overwrite to replace it")
        datanodes = self.topology.datanodes_in(racks)
        if not datanodes and racks:
            log.warning("no live DataNode in racks %s: uploading %s with HDFS's default placement", racks, target)
        elif not racks:
            log.info("no rack set for %s: uploading with HDFS's default placement", target)
        block = block_bytes or self.client.block_size()
        plans = plan_segments(files, datanodes, block)
        temp = target + TEMP_SUFFIX
        self.client.delete(temp, recursive=True)  # left by an interrupted upload
        if local.is_dir():
            self.client.makedirs(temp)
        lost: set[str] = set()
        try:
            with tqdm(total=sum(p.size for p in plans), unit="B", unit_scale=True, desc=posixpath.basename(target),
                      disable=not self.progress, file=sys.stderr) as bar:
                with ThreadPoolExecutor(max_workers=self.threads) as pool:
                    plans = list(pool.map(lambda p: self._write_file(p, temp, block, replication, bar, datanodes, lost), plans))
            report = self.verify(temp, plans, racks, rack_set_unavailable=not datanodes)
            alive = [d for d in datanodes if d.name not in lost]
            if alive and report.share_in_rack_set < 1.0:
                report = self.repair(temp, plans, racks, alive, block, replication)
            report = replace(report, writers_lost=tuple(sorted(lost)))
        except BaseException:
            self._discard(temp)
            raise
        if overwrite:
            self.client.delete(target, recursive=True)
        self._rename(temp, target)
        log.info("uploaded %s: %d blocks, %.0f%% with a replica in %s", target, report.blocks, 100 * report.share_in_rack_set, racks)
        if datanodes and report.share_in_rack_set < 1.0:
            log.warning("%s: %d of %d blocks have no replica in %s after repair (the NameNode found no good DataNode there for them)",
                        target, report.blocks - report.blocks_in_rack_set, report.blocks, racks)
        return replace(report, target=target)

    def _discard(self, temp: str) -> None:
        """Best effort: remove a failed copy now (a killed process leaves it for the next run to remove)."""
        try:
            self.client.delete(temp, recursive=True)
        except ClusterError as exc:
            log.warning("could not remove %s after a failed upload: %s", temp, exc)

    def _rename(self, temp: str, target: str) -> None:
        parent = posixpath.dirname(target.rstrip("/"))
        if parent:
            self.client.makedirs(parent)
        self.client.rename(temp, target)  # WebHDFS RENAME answers false, not an error, on failure
        if self.client.status(target, strict=False) is None:
            raise ClusterError(f"could not rename {temp} to {target}")

    def _write_file(self, plan: FilePlan, temp: str, block: int, replication: int | None, bar: tqdm,
                    datanodes: list[DataNodeInfo], lost: set[str]) -> FilePlan:
        """Write one file; while a DataNode of R_j fails under it, write it again without the DataNodes lost so far.
        Returns the plan it was written by."""
        while True:
            try:
                self._write(plan, temp, block, replication, bar)
                return plan
            except DataNodeWriteError as exc:  # ends: each new plan leaves out one more DataNode of R_j
                writer = next((s.datanode for s in plan.segments if s.datanode and s.datanode.http_address == exc.datanode), None)
                if writer is None:  # a DataNode the NameNode chose failed: no DataNode of R_j to leave out
                    raise
                lost.add(writer.name)
                log.warning("DataNode %s of R_j failed while writing %s (%s); writing it again without it",
                            writer.name, plan.local, exc)
            path = posixpath.join(temp, plan.relative) if plan.relative else temp
            self.client.delete(path)  # the half-written copy (still open: its writer died)
            plan = plan_segments([(plan.local, plan.relative)], [d for d in datanodes if d.name not in lost], block)[0]

    def _write(self, plan: FilePlan, temp: str, block: int, replication: int | None, bar: tqdm) -> None:
        path = posixpath.join(temp, plan.relative) if plan.relative else temp
        for k, seg in enumerate(plan.segments):
            data = _chunks(plan.local, seg.offset, seg.length, bar)
            writer = seg.datanode.http_address if seg.datanode else None
            if k == 0:
                self.client.create_through(path, data, writer, blocksize=block, replication=replication)
            else:
                self.client.append_through(path, data, writer)

    def repair(self, root: str, plans: list[FilePlan], racks: list[str], datanodes: list[DataNodeInfo], block: int,
               replication: int | None, attempts: int = 3, pause_s: float = 1.0) -> PlacementReport:
        """Rewrite the files with blocks outside R_j through other DataNodes of R_j; keep each rewrite that
        has fewer such blocks. Returns the report of the repaired upload with the blocks it brought into R_j."""
        before = self.verify(root, plans, racks, rack_set_unavailable=False)
        rewritten = set()
        for plan in plans:
            for attempt in range(attempts):
                time.sleep(pause_s * attempt)  # a refusal is often passing (a DataNode's heartbeat, its pending work)
                path = posixpath.join(root, plan.relative) if plan.relative else root
                outside = self._blocks_outside(path, racks)
                if not outside:
                    break
                refused = {s.datanode.name for s in plan.segments if s.datanode
                           and any(s.offset <= b.offset < s.offset + s.length for b in outside)}
                others = [d for d in datanodes if d.name not in refused] or datanodes
                fresh = plan_segments([(plan.local, plan.relative)], others, block)[0]
                if self._rewrite(fresh, path, block, replication, racks, len(outside)):
                    rewritten.add(plan.relative)
                    plan = fresh
        after = self.verify(root, plans, racks, rack_set_unavailable=False)
        repaired = max(0, after.blocks_in_rack_set - before.blocks_in_rack_set)
        log.info("%s: repaired %d of %d blocks outside %s by rewriting %d files", root, repaired,
                 before.blocks - before.blocks_in_rack_set, racks, len(rewritten))
        return replace(after, blocks_repaired=repaired, files_rewritten=len(rewritten))

    def _blocks_outside(self, path: str, racks: list[str]) -> list[BlockLocation]:
        wanted = {r.lower() for r in racks}
        return [b for b in self.client.block_locations(path) if not any(r.lower() in wanted for r in b.racks)]

    def _rewrite(self, plan: FilePlan, path: str, block: int, replication: int | None, racks: list[str],
                 outside: int) -> bool:
        """Write ``plan`` beside ``path``; replace ``path`` with it if fewer of its blocks are outside R_j."""
        fresh = path + ".repair"
        self.client.delete(fresh)
        with tqdm(total=plan.size, disable=True) as bar:
            self._write(replace(plan, relative=""), fresh, block, replication, bar)
        if len(self._blocks_outside(fresh, racks)) >= outside:
            self.client.delete(fresh)
            return False
        self.client.delete(path)
        self.client.rename(fresh, path)
        return True

    def verify(self, root: str, plans: list[FilePlan], racks: list[str], rack_set_unavailable: bool) -> PlacementReport:
        """Check every file's length and collect its blocks' racks into a PlacementReport."""
        wanted = {r.lower() for r in racks}
        per_rack: dict[str, int] = defaultdict(int)
        blocks = in_set = 0
        for plan in plans:
            path = posixpath.join(root, plan.relative) if plan.relative else root
            length = self.client.status(path)["length"]
            if length != plan.size:
                raise ClusterError(f"{path} has {length} bytes in HDFS but {plan.local} has {plan.size}")
            for b in self.client.block_locations(path):
                blocks += 1
                in_set += any(r.lower() in wanted for r in b.racks)
                for r in b.racks:
                    per_rack[r] += b.length
        return PlacementReport(root, tuple(racks), len(plans), sum(p.size for p in plans), blocks, in_set,
                               dict(sorted(per_rack.items())), rack_set_unavailable)


def _chunks(local: Path, offset: int, length: int, bar: tqdm) -> Iterator[bytes]:
    with local.open("rb") as f:
        f.seek(offset)
        left = length
        while left > 0:
            chunk = f.read(min(CHUNK_BYTES, left))
            if not chunk:
                raise ClusterError(f"{local} shrank while it was being uploaded")
            left -= len(chunk)
            bar.update(len(chunk))
            yield chunk
