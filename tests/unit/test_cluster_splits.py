"""Input splits and the job.split / job.splitmetainfo encoding MRAppMaster reads."""

from __future__ import annotations

import io
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cluster.splits import FILE_SPLIT_CLASS, FileSplit, InputBlock, file_splits, split_files, write_vlong


def read_vlong(f: io.BytesIO) -> int:
    """WritableUtils.readVLong, written from Hadoop's reader side."""
    first = struct.unpack(">b", f.read(1))[0]
    if first >= -112:
        return first
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    value = 0
    for _ in range(size - 1):
        value = (value << 8) | f.read(1)[0]
    return value ^ -1 if negative else value


def read_text(f: io.BytesIO) -> str:
    return f.read(read_vlong(f)).decode()


@pytest.mark.parametrize(("value", "encoded"), [
    (0, b"\x00"), (127, b"\x7f"), (-112, b"\x90"), (128, b"\x8f\x80"), (255, b"\x8f\xff"), (256, b"\x8e\x01\x00"),
    (-113, b"\x87\x70"),
])
def test_vlong_matches_hadoop_bytes(value: int, encoded: bytes) -> None:
    out = io.BytesIO()
    write_vlong(out, value)
    assert out.getvalue() == encoded


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_vlong_round_trips(value: int) -> None:
    out = io.BytesIO()
    write_vlong(out, value)
    assert read_vlong(io.BytesIO(out.getvalue())) == value


def test_splits_follow_block_size_with_ten_percent_slop() -> None:
    mb = 2**20
    blocks = [InputBlock(0, mb, ("h1",)), InputBlock(mb, mb, ("h2",)), InputBlock(2 * mb, mb // 20, ("h3",))]
    splits = file_splits("hdfs://nn/f", 2 * mb + mb // 20, mb, blocks)
    assert [(s.start, s.length) for s in splits] == [(0, mb), (mb, mb + mb // 20)]  # last one absorbs the 5 % tail
    assert [s.hosts for s in splits] == [("h1",), ("h2",)]
    assert file_splits("hdfs://nn/empty", 0, mb, []) == [FileSplit("hdfs://nn/empty", 0, 0, ())]


def test_split_files_decode_back_to_the_splits() -> None:
    splits = [FileSplit("hdfs://nn:8020/in/a", 0, 100, ("h1", "h2")), FileSplit("hdfs://nn:8020/in/b", 0, 7, ())]
    split_bytes, meta_bytes = split_files(splits)
    meta = io.BytesIO(meta_bytes)
    assert meta.read(8) == b"META-SPL" and read_vlong(meta) == 1 and read_vlong(meta) == 2
    assert split_bytes[:7] == b"SPL\x00\x00\x00\x01"
    for expected in splits:
        hosts = tuple(read_text(meta) for _ in range(read_vlong(meta)))
        offset, length = read_vlong(meta), read_vlong(meta)
        record = io.BytesIO(split_bytes[offset:])
        assert read_text(record) == FILE_SPLIT_CLASS
        assert read_text(record) == expected.path
        assert struct.unpack(">qq", record.read(16)) == (expected.start, expected.length)
        assert (hosts, length) == (expected.hosts, expected.length)
