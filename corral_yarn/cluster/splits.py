"""Input splits of a MapReduce job and the two staging files that carry them to MRAppMaster.

What ``JobSubmitter`` writes with ``JobSplitWriter`` (Hadoop's ``mapreduce.split``): ``job.split``
holds each split as (class name, ``FileSplit.write``) and ``job.splitmetainfo`` holds, per split,
its hosts, the offset of its record in ``job.split`` and its length. MRAppMaster creates one map
task per split and asks YARN for containers near the split's hosts. Splits follow
``FileInputFormat.getSplits``: size max(minSize, min(maxSize, blockSize)), the last one up to 10 %
longer (SPLIT_SLOP).
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

FILE_SPLIT_CLASS = "org.apache.hadoop.mapreduce.lib.input.FileSplit"
SPLIT_FILE_HEADER = b"SPL"
META_SPLIT_FILE_HEADER = b"META-SPL"
SPLIT_VERSION = 1  # JobSplit.META_SPLIT_VERSION, used for both files
SPLIT_SLOP = 1.1  # FileInputFormat.SPLIT_SLOP
MAX_SPLIT_LOCATIONS = 15  # mapreduce.job.max.split.locations default


@dataclass(frozen=True)
class FileSplit:
    """A byte range of an input file and the hosts holding it (the new-API ``FileSplit``)."""

    path: str  # fully qualified, hdfs://namenode:port/...
    start: int
    length: int
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class InputBlock:
    """One block of an input file, as GETFILEBLOCKLOCATIONS reports it."""

    offset: int
    length: int
    hosts: tuple[str, ...]


def file_splits(path: str, file_length: int, block_size: int, blocks: list[InputBlock],
                min_size: int = 1, max_size: int = 2**63 - 1) -> list[FileSplit]:
    """``FileInputFormat.getSplits`` for one splittable file (an empty file gives one empty split)."""
    if file_length == 0:
        return [FileSplit(path, 0, 0, ())]
    split_size = max(min_size, min(max_size, block_size))
    splits = []
    remaining = file_length
    while remaining / split_size > SPLIT_SLOP:
        start = file_length - remaining
        splits.append(FileSplit(path, start, split_size, _hosts_at(blocks, start)))
        remaining -= split_size
    if remaining:
        start = file_length - remaining
        splits.append(FileSplit(path, start, remaining, _hosts_at(blocks, start)))
    return splits


def _hosts_at(blocks: list[InputBlock], offset: int) -> tuple[str, ...]:
    block = next((b for b in blocks if b.offset <= offset < b.offset + b.length), None)
    return block.hosts if block else ()


def write_vlong(out: io.BytesIO, value: int) -> None:
    """Hadoop's ``WritableUtils.writeVLong`` zero-compressed encoding."""
    if -112 <= value <= 127:
        out.write(struct.pack(">b", value))
        return
    marker = -112
    if value < 0:
        value ^= -1
        marker = -120
    tmp = value
    while tmp:
        tmp >>= 8
        marker -= 1
    out.write(struct.pack(">b", marker))
    size = -(marker + 120) if marker < -120 else -(marker + 112)
    out.write(value.to_bytes(size, "big"))


def write_text(out: io.BytesIO, text: str) -> None:
    """Hadoop's ``Text.writeString``: a vint byte length, then UTF-8."""
    data = text.encode("utf-8")
    write_vlong(out, len(data))
    out.write(data)


def split_files(splits: list[FileSplit]) -> tuple[bytes, bytes]:
    """The bytes of ``job.split`` and ``job.splitmetainfo`` for these splits (``JobSplitWriter``)."""
    split = io.BytesIO()
    split.write(SPLIT_FILE_HEADER)
    split.write(struct.pack(">i", SPLIT_VERSION))
    meta = io.BytesIO()
    meta.write(META_SPLIT_FILE_HEADER)
    write_vlong(meta, SPLIT_VERSION)
    write_vlong(meta, len(splits))
    for s in splits:
        offset = split.tell()
        write_text(split, FILE_SPLIT_CLASS)
        write_text(split, s.path)  # FileSplit.write: path, start, length (hosts are not serialized)
        split.write(struct.pack(">qq", s.start, s.length))
        hosts = s.hosts[:MAX_SPLIT_LOCATIONS]
        write_vlong(meta, len(hosts))
        for h in hosts:
            write_text(meta, h)
        write_vlong(meta, offset)
        write_vlong(meta, s.length)
    return split.getvalue(), meta.getvalue()
