"""Per-node CPU groups of the testbed (testbed/cpu.py) and the shim that moves a container into its node's group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral_yarn.cli import main
from corral_yarn.errors import InputError
from corral_yarn.testbed import control, cpu

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
    assert "node_cpus" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@real_cgroups
def test_groups_hold_each_node_to_its_quota_and_are_removed() -> None:
    root = cpu.create(GROUP, NODES, 0.25)
    try:
        assert (root / "cpu.shares").read_text().strip() == str(cpu.TESTBED_SHARES)
        for node in NODES:
            group = cpu.node_group(GROUP, node)
            assert (group / "cpu.cfs_quota_us").read_text().strip() == str(cpu.PERIOD_US // 4)
        assert set(cpu.throttled(GROUP)) == set(NODES)
    finally:
        assert cpu.remove(GROUP)
    assert not root.exists()
    assert not cpu.remove(GROUP)


@real_cgroups
def test_the_shim_moves_a_container_into_its_node_s_group(tmp_path: Path) -> None:
    """A process started as a NodeManager starts a container (NM_HOST set, the shim preloaded) lands in its
    node's group; one without NM_HOST stays where it was."""
    root = cpu.create(GROUP, NODES, 0.5)
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
    cpu.create(GROUP, NODES, 0.5)
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
