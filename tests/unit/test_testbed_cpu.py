"""Per-node CPU groups of the testbed (testbed/cpu.py) and the shim that moves a container into its node's group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral_yarn.cli import main
from corral_yarn.errors import InputError
from corral_yarn.testbed import control, cpu, experiment
from corral_yarn.testbed.shaping import Network

GROUP = f"corral-cpu-unit-{os.getpid()}"
NODES = ["127.0.100.10", "127.0.101.10"]
real_cgroups = pytest.mark.skipif(os.geteuid() != 0 or cpu.preflight() is not None,
                                  reason="needs root and cgroup v1's cpu controller")


def test_even_share_splits_the_machine_s_cores() -> None:
    assert cpu.even_share(6) == round((os.cpu_count() or 1) / 6, 3)


@pytest.mark.parametrize("cores", [0.0, -1.0, float("nan"), 10_000.0])
def test_node_cpus_out_of_range_names_the_field(cores: float) -> None:
    with pytest.raises(InputError, match="node_cpus"):
        cpu.check_node_cpus(cores)


def test_cli_rejects_negative_node_cpus_with_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["testbed", "up", "--node-cpus", "-1", "--home", str(tmp_path)]) == 2
    assert "argument --node-cpus: expected a finite number >= 0, got '-1'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_rack_cpus_give_every_node_its_rack_s_cores_and_equal_racks_one_class() -> None:
    rack_cpus = cpu.parse_rack_cpus("a=0.6, /rack-b=0.2,c=0.2", 3)
    assert rack_cpus == {"a": 0.6, "b": 0.2, "c": 0.2}
    nodes = [(rack, address) for _, rack, address in Network(racks=3, nodes_per_rack=2).nodes()]
    quotas = cpu.node_quotas(nodes, None, rack_cpus)
    assert quotas == {"127.0.100.10": 0.6, "127.0.100.11": 0.6, "127.0.101.10": 0.2, "127.0.101.11": 0.2,
                      "127.0.102.10": 0.2, "127.0.102.11": 0.2}
    assert cpu.node_quotas(nodes, 0.3, None) == dict.fromkeys(quotas, 0.3)
    assert cpu.node_quotas(nodes, None, None) is None
    assert cpu.rack_classes(rack_cpus) == {"a": "cpu0.6", "b": "cpu0.2", "c": "cpu0.2"}


def test_the_planner_s_spec_carries_the_classes_at_their_cores_over_the_mean() -> None:
    description = {"racks": [{"name": f"/rack-{r}", "nodes": [{"host": f"127.0.{100 + i}.10"}]} for i, r in enumerate("abc")]}
    spec = experiment.cluster_spec(description, Network(racks=3, nodes_per_rack=1), {"a": 0.6, "b": 0.2, "c": 0.2})
    assert [r.node_class for r in spec.racks] == ["cpu0.6", "cpu0.2", "cpu0.2"]
    assert spec.node_classes is not None
    assert spec.node_classes["cpu0.6"].speedup == pytest.approx(0.6 / (1.0 / 3))
    assert spec.node_classes["cpu0.2"].speedup == pytest.approx(0.2 / (1.0 / 3))
    assert experiment.cluster_spec(description, Network(racks=3, nodes_per_rack=1)).node_classes is None


@pytest.mark.parametrize(("text", "wrong"), [
    ("a=0.6,b=0.2", "missing c"), ("a=0.6,b=0.2,c=0.2,d=0.2", "'d=0.2'"), ("a=0.6,a=0.2,b=0.1,c=0.1", "twice"),
    ("a=fast,b=0.2,c=0.2", "'fast'"), ("a=0,b=0.2,c=0.2", "rack_cpus.a"), ("a=0.6,b=nan,c=0.2", "rack_cpus.b"),
    ("a 0.6,b=0.2,c=0.2", "RACK=CORES"), ("", "RACK=CORES")])
def test_bad_rack_cpus_name_the_field(text: str, wrong: str) -> None:
    with pytest.raises(InputError, match="rack_cpus") as error:
        cpu.parse_rack_cpus(text, 3)
    assert wrong in str(error.value)


@pytest.mark.parametrize("argv", [["--rack-cpus", "a=0.6,b=0.2"], ["--rack-cpus", "a=0.6,b=0.2,c=0.2", "--node-cpus", "0.3"]])
def test_cli_rejects_bad_rack_cpus_with_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["testbed", "up", *argv, "--home", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--rack-cpus" in err and "rack_cpus" not in err  # the option, not the API's field
    assert not list(tmp_path.iterdir())


@real_cgroups
def test_groups_hold_each_node_to_its_quota_and_are_removed() -> None:
    root = cpu.create(GROUP, {NODES[0]: 0.25, NODES[1]: 0.5})
    try:
        assert (root / "cpu.shares").read_text().strip() == str(cpu.TESTBED_SHARES)
        assert (cpu.node_group(GROUP, NODES[0]) / "cpu.cfs_quota_us").read_text().strip() == str(cpu.PERIOD_US // 4)
        assert (cpu.node_group(GROUP, NODES[1]) / "cpu.cfs_quota_us").read_text().strip() == str(cpu.PERIOD_US // 2)
        assert set(cpu.throttled(GROUP)) == set(NODES)
        assert cpu.quotas(GROUP) == {NODES[0]: 0.25, NODES[1]: 0.5}
    finally:
        assert cpu.remove(GROUP)
    assert not root.exists()
    assert not cpu.remove(GROUP)


@real_cgroups
def test_the_shim_moves_a_container_into_its_node_s_group(tmp_path: Path) -> None:
    """A process started as a NodeManager starts a container (NM_HOST set, the shim preloaded) lands in its
    node's group; one without NM_HOST stays where it was."""
    root = cpu.create(GROUP, dict.fromkeys(NODES, 0.5))
    try:
        shim = control._build_shim(tmp_path, root)
        sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
        inside = subprocess.Popen(sleeper, env={**os.environ, "LD_PRELOAD": str(shim), "NM_HOST": NODES[1]})
        outside = subprocess.Popen(sleeper, env={**os.environ, "LD_PRELOAD": str(shim), "NM_HOST": ""})
        try:
            for _ in range(50):
                if str(inside.pid) in (cpu.node_group(GROUP, NODES[1]) / "cgroup.procs").read_text().split():
                    break
                subprocess.run(["sleep", "0.1"])
            assert str(inside.pid) in (cpu.node_group(GROUP, NODES[1]) / "cgroup.procs").read_text().split()
            assert str(outside.pid) not in (cpu.node_group(GROUP, NODES[0]) / "cgroup.procs").read_text().split()
            assert not (cpu.node_group(GROUP, NODES[0]) / "cgroup.procs").read_text().split()
        finally:
            inside.kill()
            outside.kill()
            inside.wait()
            outside.wait()
    finally:
        cpu.remove(GROUP)


@real_cgroups
def test_groups_go_even_right_after_their_processes_are_killed() -> None:
    """down kills the testbed's processes and at once removes their groups: a process still exiting keeps
    its group busy (EBUSY), so removal waits for it instead of failing."""
    cpu.create(GROUP, dict.fromkeys(NODES, 0.5))
    busy = [sys.executable, "-c", "import threading, time\nfor _ in range(50): threading.Thread(target=time.sleep, args=(60,)).start()\ntime.sleep(60)"]
    process = subprocess.Popen(busy)
    (cpu.node_group(GROUP, NODES[0]) / "cgroup.procs").write_text(str(process.pid))
    process.kill()
    try:
        assert cpu.remove(GROUP)
        assert not cpu.group_root(GROUP).exists()
    finally:
        process.wait()
        cpu.remove(GROUP)
