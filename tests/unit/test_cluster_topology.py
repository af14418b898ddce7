"""Topology reconciliation and the rack-aware upload's segment plan (no cluster needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tqdm import tqdm

from corral_yarn.cluster.errors import ClusterError, DataNodeWriteError
from corral_yarn.cluster.rm import NodeReport
from corral_yarn.cluster.topology import DataNodeInfo, Topology, reconcile
from corral_yarn.cluster.upload import RackAwareUploader, local_files, plan_segments
from corral_yarn.errors import InputError

GB = 10**9


def dn(name: str, rack: str, remaining: int = GB, state: str = "In Service") -> DataNodeInfo:
    return DataNodeInfo(name=f"{name}:9866", host=name, rack=rack, http_address=f"{name}:9864",
                        capacity_bytes=2 * GB, remaining_bytes=remaining, admin_state=state)


def nm(name: str, rack: str, memory: int = 4096, state: str = "RUNNING") -> NodeReport:
    return NodeReport(node_id=f"{name}:45454", host=name, rack=rack, state=state, http_address=f"{name}:8042",
                      memory_mb=memory, vcores=4, available_memory_mb=memory)


def test_agreeing_views_have_no_disagreements() -> None:
    assert reconcile([dn("a1", "/a"), dn("b1", "/b")], [nm("a1", "/a"), nm("b1", "/b")]) == []


def test_each_kind_of_disagreement_is_one_clear_sentence() -> None:
    found = reconcile([dn("a1", "/a"), dn("c1", "/c"), dn("x", "/a")],
                      [nm("a1", "/a"), nm("b1", "/b"), nm("x", "/b"), nm("d1", "/a", state="LOST")])
    assert "rack /c has 1 live DataNode(s) but no running NodeManager" in found
    assert "rack /b has 2 running NodeManager(s) but no live DataNode" in found
    assert "rack /a: the NameNode sees 2 DataNode(s), the ResourceManager 1 NodeManager(s)" in found
    assert "host x is in rack /a for the NameNode but in rack /b for the ResourceManager" in found
    assert "NodeManager d1:45454 is LOST" in found


def test_cluster_spec_takes_racks_with_storage_and_compute() -> None:
    topo = Topology((dn("a1", "/a"), dn("b1", "/b"), dn("c1", "/c")), (nm("a1", "/a", 3072), nm("b1", "/b")), ())
    spec = topo.cluster_spec("t", 1.25e9, 1e8, 5.0, task_memory_mb=1024)
    assert spec.rack_names == ["/a", "/b"]
    assert spec.map_slots_per_machine == 3


def test_mini_cluster_hosts_shared_by_nodemanagers_become_node_ids() -> None:
    topo = Topology((dn("h", "/a"),), (nm("h", "/a"), NodeReport("h:2", "h", "/a", "RUNNING", "h:2", 4096, 4, 4096)), ())
    assert topo.cluster_spec("t", 1.0e9, 1e8, 2.0).racks[0].machines == ["h:2", "h:45454"]


def test_a_stopped_nodemanagers_rack_is_found_by_its_host() -> None:
    gone = NodeReport("h2:45454", "h2", "/b", "SHUTDOWN", "", 4096, 4, 0)  # the RM drops a stopped node's HTTP address
    topo = Topology((), (nm("h1", "/a"), gone, NodeReport("h3:1", "h3", "/a", "RUNNING", "h3:1", 4096, 4, 4096),
                         NodeReport("h3:2", "h3", "/c", "RUNNING", "h3:2", 4096, 4, 4096)), ())
    assert topo.rack_of_node("h1:8042") == "/a" and topo.rack_of_node("h2:8042") == "/b"
    assert topo.rack_of_node("h3:2") == "/c" and topo.rack_of_node("h3:9") is None, "a host on two racks: only exact ids"
    assert topo.rack_of_node("h4:8042") is None


def test_no_usable_rack_is_a_cluster_error() -> None:
    with pytest.raises(ClusterError, match="no rack has both"):
        Topology((dn("a1", "/a"),), (nm("b1", "/b"),), ("x",)).cluster_spec("t", 1e9, 1e8, 2.0)


def test_datanodes_in_matches_lower_cased_rack_names_and_skips_decommissioning() -> None:
    topo = Topology((dn("a1", "/Rack-A"), dn("a2", "/Rack-A", state="Decommission In Progress"), dn("b1", "/b")), (), ())
    assert [d.host for d in topo.datanodes_in(["/rack-a"])] == ["a1"]
    assert topo.canonical_racks(["/rack-a", "/zz"]) == ["/Rack-A", "/zz"]


def write(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def test_segments_spread_blocks_over_racks_then_nodes_then_free_space(tmp_path: Path) -> None:
    f = write(tmp_path / "big", 10 * 100)
    nodes = [dn("a1", "/a", remaining=10_000), dn("c1", "/c", remaining=10_000), dn("c2", "/c", remaining=10_200)]
    [plan] = plan_segments([(f, "")], nodes, block_bytes=100)
    assert [(s.offset, s.length, s.datanode.host) for s in plan.segments if s.datanode] == [
        (0, 400, "c2"), (400, 400, "a1"), (800, 200, "c1")]  # at most one segment per node


def test_every_rack_of_the_rack_set_gets_data_even_if_another_has_more_free_space(tmp_path: Path) -> None:
    """Nodes sharing a disk report free space that differs by more than a small upload: racks still take turns."""
    files = [(write(tmp_path / f"part-{k}", 500), f"part-{k}") for k in range(3)]
    nodes = [dn("a1", "/a", remaining=10**9), dn("a2", "/a", remaining=10**9 - 1), dn("c1", "/C", remaining=10**6),
             dn("c2", "/C", remaining=10**6 - 1)]
    plans = plan_segments(files, nodes, block_bytes=100)
    per_rack = {"/a": 0, "/C": 0}
    for seg in (s for p in plans for s in p.segments):
        per_rack[seg.datanode.rack] += seg.length
    assert per_rack == {"/a": 800, "/C": 700}


def test_nodes_without_room_are_skipped_while_others_have_it(tmp_path: Path) -> None:
    [plan] = plan_segments([(write(tmp_path / "f", 400), "")], [dn("a1", "/a", remaining=50), dn("b1", "/b", remaining=10**6)],
                           block_bytes=100)
    assert [(s.length, s.datanode.host) for s in plan.segments] == [(400, "b1")]


def test_many_files_take_the_datanodes_in_turn(tmp_path: Path) -> None:
    files = [(write(tmp_path / f"f{k}", 100), f"f{k}") for k in range(6)]
    plans = plan_segments(files, [dn("a1", "/a"), dn("b1", "/b")], block_bytes=100)
    hosts = [p.segments[0].datanode.host for p in plans if p.segments[0].datanode]
    assert sorted(hosts) == ["a1"] * 3 + ["b1"] * 3


def test_consecutive_blocks_on_one_node_are_one_segment_and_empty_files_have_one(tmp_path: Path) -> None:
    f, empty = write(tmp_path / "f", 250), write(tmp_path / "e", 0)
    plans = plan_segments([(f, "f"), (empty, "e")], [dn("a1", "/a"), dn("a2", "/a", remaining=1)], block_bytes=100)
    assert [(s.offset, s.length) for s in plans[0].segments] == [(0, 250)]
    assert [(s.offset, s.length) for s in plans[1].segments] == [(0, 0)]


def test_without_datanodes_in_the_rack_set_the_namenode_chooses(tmp_path: Path) -> None:
    [plan] = plan_segments([(write(tmp_path / "f", 300), "")], [], block_bytes=100)
    assert [s.datanode for s in plan.segments] == [None]


def test_local_files_walks_directories_sorted(tmp_path: Path) -> None:
    write(tmp_path / "d" / "b.txt", 1)
    write(tmp_path / "d" / "sub" / "a.txt", 1)
    assert [r for _, r in local_files(tmp_path / "d")] == ["b.txt", "sub/a.txt"]
    with pytest.raises(InputError, match="no such file"):
        local_files(tmp_path / "missing")


class BrokenWriters:
    """A WebHDFS client whose every write through a DataNode breaks off (the failure path of a dead writer)."""

    def __init__(self) -> None:
        self.writers: list[str | None] = []
        self.deleted: list[str] = []

    def create_through(self, path: str, data: Any, datanode_http: str | None, **options: Any) -> None:
        self.writers.append(datanode_http)
        next(iter(data))
        raise DataNodeWriteError(datanode_http or "chosen-by-namenode:9864", ClusterError("connection reset"))

    def delete(self, path: str, recursive: bool = False) -> bool:
        self.deleted.append(path)
        return True


def test_a_file_whose_writers_die_is_tried_once_per_datanode_of_the_rack_set_then_fails(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 4096)
    nodes = [dn("a1", "/rack-a"), dn("a2", "/rack-a")]
    client = BrokenWriters()
    uploader = RackAwareUploader(client, Topology(tuple(nodes), (), ()), progress=False)  # type: ignore[arg-type]
    plan = plan_segments([(tmp_path / "f", "")], nodes, 1024)[0]
    lost: set[str] = set()
    with pytest.raises(DataNodeWriteError, match="chosen-by-namenode"):
        uploader._write_file(plan, "/t._COPYING_", 1024, None, tqdm(disable=True), nodes, lost)
    assert sorted(w for w in client.writers[:2] if w) == ["a1:9864", "a2:9864"] and client.writers[2] is None
    assert lost == {"a1:9866", "a2:9866"} and client.deleted == ["/t._COPYING_"] * 2
