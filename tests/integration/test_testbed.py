"""The shaped testbed (docs/testbed.md): up, real transfers held to the configured rates (a node-to-node
stream, a task's HDFS read, a shuffle fetch), down with nothing left."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cli import main
from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.contracts import ClusterSpec, Rack, Workload
from corral_yarn.minicluster import processes
from corral_yarn.nomora import latency
from corral_yarn.planner.build import build_plan
from corral_yarn.testbed import control, cpu
from corral_yarn.testbed.monitor import UplinkMonitor
from corral_yarn.testbed.shaping import Network
from corral_yarn.workloads import w1_like

pytestmark = pytest.mark.integration
NAMESPACE = "corral-testbed-test"
# O = 20 so that the uplink (2 x 400 / 20 = 40 Mbit/s) is a tenth of the in-rack NIC rate.
NET = Network(racks=3, nodes_per_rack=2, node_mbit_s=400.0, oversubscription=20.0)
INPUT_BYTES = 4 * 2**20
RACK_CPUS = {"a": 0.5, "b": 0.25, "c": 0.5}  # two node classes: rack b's nodes have half the cores


@pytest.fixture(scope="module")
def testbed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("testbed")
    state = control.up(NET, home, NAMESPACE, rack_cpus=RACK_CPUS)
    try:
        yield state, home
    finally:
        control.down(home, NAMESPACE)
        assert not control.namespace_exists(NAMESPACE)
        assert not cpu.group_root(NAMESPACE).exists(), "the nodes' CPU groups outlived the testbed"
        assert not processes.find_by_path(home / "cluster"), "container processes outlived the testbed"


def test_a_stream_across_racks_is_held_to_the_uplink_and_one_inside_a_rack_is_not(testbed: Any) -> None:
    shaping = testbed[0]["shaping"]
    assert shaping["measured_cross_rack_mbit_s"] <= 1.2 * NET.uplink_mbit_s
    assert shaping["measured_cross_rack_mbit_s"] >= 0.5 * NET.uplink_mbit_s  # shaped, not broken
    assert shaping["measured_in_rack_mbit_s"] >= 5 * NET.uplink_mbit_s


def _sort_input(path: Path) -> None:
    rng = random.Random(7)
    with path.open("w") as f:
        while f.tell() < INPUT_BYTES:
            f.write(f"{rng.randrange(10**9):09d}\t{'x' * 90}\n")


def test_task_reads_and_shuffle_fetches_across_racks_are_shaped(testbed: Any, tmp_path: Path) -> None:
    """Input only in rack b; the job runs in racks a and c: every map reads across the core, and the
    shuffle between a and c crosses it too. Without each container bound to its node's address, tc
    would see neither (their source would be 127.0.0.1)."""
    state, _ = testbed
    description = json.loads(Path(state["cluster_json"]).read_text())
    local = tmp_path / "input.txt"
    _sort_input(local)
    monitor = UplinkMonitor(NET, NAMESPACE, interval_s=0.5)

    def run_job() -> tuple[int, list[Any]]:
        cluster = Cluster.from_description(description, progress=False)
        cluster.uploader().upload(local, "/testbed/in", ["/rack-b"], block_bytes=2**20, replication=1)
        monitor.start()
        job = MapReduceJob(name="testbed-sort", jar=description["examples_jar"], program="sort",
                           inputs=["/testbed/in"], output="/testbed/out", reduces=2)
        app = cluster.mapreduce().submit(job, CorralTags("testbed", "sort", ("/rack-a", "/rack-c")), priority=1)
        cluster.rm.wait(app.app_id)
        monitor.stop()
        cluster.history.wait_for_job(job_id_of(app.app_id))
        return local.stat().st_size, cluster.history.attempts(job_id_of(app.app_id))

    before = {node: t["periods"] for node, t in cpu.throttled(NAMESPACE).items()}  # setting a quota counts a period or two
    size, attempts = control.in_namespace(NAMESPACE, run_job)
    pairs = monitor.pair_bytes()
    # A task's HDFS read: every input byte leaves rack b (1) for rack a (0) or c (2) through the shaped classes.
    assert pairs.get((1, 0), 0) + pairs.get((1, 2), 0) >= size
    # A shuffle fetch: map output (sort: about its input) goes from each map's rack to each reducer's rack.
    racks = {"/rack-a": 0, "/rack-c": 2}
    maps = [racks[a.rack] for a in attempts if a.type == "MAP"]
    reduces = [racks[a.rack] for a in attempts if a.type == "REDUCE"]
    crossing = {(m, r) for m in maps for r in reduces if m != r}
    assert crossing, f"maps on {maps} and reducers on {reduces}: no shuffle crossed racks to check"
    for m, r in crossing:
        expected = size * maps.count(m) / len(maps) * reduces.count(r) / len(reduces)
        assert pairs.get((m, r), 0) >= 0.5 * expected, f"shuffle {m}->{r}: {pairs.get((m, r), 0)} bytes seen, ~{expected:.0f} sent"
    # Held to the configured rates while the job ran.
    assert monitor.peak_mbit_s(window_s=2.0) <= 1.2 * NET.uplink_mbit_s
    # Each container ran in its own node's CPU group: rack b's nodes ran none, so their groups never ran.
    used = {node: t["periods"] - before[node] for node, t in cpu.throttled(NAMESPACE).items()}
    assert all(used[NET.host(1, n)] == 0 for n in range(NET.nodes_per_rack)), used
    assert sum(used[NET.host(r, n)] for r in (0, 2) for n in range(NET.nodes_per_rack)) > 0, used


def test_racks_of_two_node_classes_hold_their_nodes_to_their_own_cores(testbed: Any) -> None:
    state, _ = testbed
    assert state["node_classes"] == {"a": "cpu0.5", "b": "cpu0.25", "c": "cpu0.5"}
    cores = cpu.quotas(NAMESPACE)  # as the kernel holds them
    assert cores == {NET.host(r, n): RACK_CPUS["abc"[r]] for r in range(NET.racks) for n in range(NET.nodes_per_rack)}


def test_the_cluster_lives_only_inside_the_namespace(testbed: Any) -> None:
    state, home = testbed
    worker = json.loads(Path(state["cluster_json"]).read_text())["racks"][0]["nodes"][0]["datanode_http"]
    host, port = worker.removeprefix("http://").split(":")
    probe = f"import socket; socket.create_connection(('{host}', {port}), timeout=5)"
    assert subprocess.run(["python3", "-c", probe], capture_output=True).returncode != 0
    assert control.exec_command(["python3", "-c", probe], home) == 0
    assert control.exec_command(["sh", "-c", 'test -f "$CORRAL_CLUSTER_JSON"'], home) == 0


def test_the_probe_mesh_writes_a_rack_latency_matrix_that_the_planner_reads(testbed: Any, tmp_path: Path) -> None:
    """NoMora item 2: round trips measured between the workers, aggregated per rack pair, fed to the planner."""
    state, home = testbed
    assert len(state["shaping"]["measured_rack_rtt_us"]) == NET.racks
    out = tmp_path / "racks.csv"
    assert main(["testbed", "latency", "--home", str(home), "--rounds", "5", "--out", str(out)]) == 0
    matrix = latency.load(out, latency.RackLatencyMatrix)
    assert matrix.names == ("/rack-a", "/rack-b", "/rack-c")
    assert ((matrix.latency_us > 0) & (matrix.latency_us < 1e6)).all(), matrix.latency_us  # two workers per rack: no zero
    cluster = ClusterSpec(racks=[Rack(name=name, machines=[f"{name}-1", f"{name}-2"]) for name in matrix.names], map_slots_per_machine=2,
                          reduce_slots_per_machine=2, nic_bandwidth_bytes_per_s=5e7, disk_bandwidth_bytes_per_s=1e8, oversubscription=20)
    jobs = Workload(jobs=[w1_like(1, seed=1).jobs[0].model_copy(update={"latency_profile": "memcached"})])
    planned = build_plan(jobs, cluster, "batch", rack_latency=matrix).jobs[0]
    assert planned.latency_function == "memcached" and planned.rack_set_latency_us == pytest.approx(
        max(matrix.latency(a, b) for a in planned.racks for b in planned.racks))
