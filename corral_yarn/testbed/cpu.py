"""Each testbed node's own CPU: a cgroup (v1 ``cpu`` controller) per node with a CFS quota (docs/testbed.md).

The embedded cluster's six nodes share this machine's cores, so a rack given to a job brings it no compute
of its own: only network. On the thesis testbed (§4.5.1) every machine has its own cores, and MRCute
(§3.1.2) assumes a job's racks bring their slots' compute with them. Here every container of node ``addr``
runs in ``/sys/fs/cgroup/cpu/<namespace>/node-<addr>`` with a quota of ``node_cpus`` cores; the cluster's
daemons run in ``<namespace>/daemons`` without a quota. The shim ``nodebind.c`` (compiled with
``CORRAL_CPU_GROUPS``) moves each container JVM into its node's group as it starts.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from pathlib import Path

from corral_yarn.errors import CorralError, InputError

LOG = logging.getLogger(__name__)

CPU_ROOT = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000
DAEMONS = "daemons"
# The testbed's group against every other process of the machine: the cgroup v1 maximum, so a busy machine
# slows the testbed's nodes as little as it can.
TESTBED_SHARES = 262_144
MIN_NODE_CPUS = 0.01


class CpuGroupError(CorralError):
    """The nodes' CPU groups cannot be made or removed."""


def even_share(nodes: int) -> float:
    """This machine's cores split evenly over the nodes (each node's quota when none is given)."""
    return round((os.cpu_count() or 1) / nodes, 3)


def check_node_cpus(node_cpus: float, field: str = "node_cpus") -> None:
    cores = os.cpu_count() or 1
    if not MIN_NODE_CPUS <= node_cpus <= cores:
        raise InputError(f"must be in {MIN_NODE_CPUS}..{cores} cores, this machine's count (got {node_cpus})", field=field)


def rack_letter(rack: int) -> str:
    """The embedded cluster's rack r is /rack-<letter>: a, b, c, ..."""
    return chr(ord("a") + rack)


def parse_rack_cpus(text: str, racks: int) -> dict[str, float]:
    """``a=0.6,b=0.2,c=0.2`` -> each rack's cores per node (every rack of the testbed named once)."""
    known = [rack_letter(r) for r in range(racks)]
    out: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        rack, sep, value = item.partition("=")
        rack = rack.strip().removeprefix("/rack-")
        if not sep or rack not in known:
            raise InputError(f"expected RACK=CORES for the racks {', '.join(known)} (e.g. a=0.6,b=0.2), got {item!r}", field="rack_cpus")
        if rack in out:
            raise InputError(f"rack {rack} given twice", field="rack_cpus")
        try:
            cores = float(value)
        except ValueError:
            raise InputError(f"rack {rack}: cores must be a number, got {value!r}", field="rack_cpus") from None
        check_node_cpus(cores, field=f"rack_cpus.{rack}")
        out[rack] = cores
    if missing := [r for r in known if r not in out]:
        raise InputError(f"every rack needs its cores; missing {', '.join(missing)}", field="rack_cpus")
    return out


def node_quotas(addresses: list[tuple[int, str]], node_cpus: float | None, rack_cpus: dict[str, float] | None) -> dict[str, float] | None:
    """Cores of every node (address), from one figure for all nodes or one per rack; None: no quotas.
    ``addresses``: (rack index, address) of every node."""
    if rack_cpus is not None:
        return {address: rack_cpus[rack_letter(rack)] for rack, address in addresses}
    return None if node_cpus is None else {address: node_cpus for _, address in addresses}


def rack_classes(rack_cpus: dict[str, float]) -> dict[str, str]:
    """Racks of equal cores form one node class (Paragon's server configuration, paper 003 §2.1), named
    by its cores: rack letter -> ``cpu<cores>``."""
    return {rack: f"cpu{cores:g}" for rack, cores in rack_cpus.items()}


def group_root(namespace: str) -> Path:
    return CPU_ROOT / namespace


def node_group(namespace: str, address: str) -> Path:
    return group_root(namespace) / f"node-{address}"


def preflight() -> str | None:
    """None when cgroup v1's cpu controller with CFS quotas is mounted; else what is missing."""
    if not (CPU_ROOT / "cpu.cfs_quota_us").exists():
        return f"{CPU_ROOT} (cgroup v1 cpu controller with CFS quotas) is not mounted"
    return None


def create(namespace: str, quotas: dict[str, float]) -> Path:
    """The testbed's group, its daemons' group and one group per node (address) held to its cores in ``quotas``."""
    for address, cores in quotas.items():
        check_node_cpus(cores, field=f"node_cpus ({address})")
    root = group_root(namespace)
    try:
        root.mkdir(exist_ok=True)
        (root / "cpu.shares").write_text(str(TESTBED_SHARES))
        (root / DAEMONS).mkdir(exist_ok=True)
        for address, cores in quotas.items():
            group = node_group(namespace, address)
            group.mkdir(exist_ok=True)
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(int(cores * PERIOD_US)))
    except OSError as e:
        remove(namespace)
        raise CpuGroupError(f"cannot create the nodes' CPU groups under {root}: {e}") from e
    LOG.info("CPU groups under %s: cores per node %s", root, quotas)
    return root


def join_daemons(namespace: str) -> None:
    """Moves the calling process into the daemons' group (used as a preexec function)."""
    (group_root(namespace) / DAEMONS / "cgroup.procs").write_text(str(os.getpid()))


def throttled(namespace: str) -> dict[str, dict[str, float]]:
    """Per node: CFS periods run, periods throttled and seconds throttled (cpu.stat)."""
    root = group_root(namespace)
    figures: dict[str, dict[str, float]] = {}
    for group in sorted(root.glob("node-*")) if root.exists() else []:
        stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
        figures[group.name.removeprefix("node-")] = {
            "periods": int(stat["nr_periods"]), "throttled_periods": int(stat["nr_throttled"]),
            "throttled_s": round(int(stat["throttled_time"]) / 1e9, 2)}
    return figures


def quotas(namespace: str) -> dict[str, float]:
    """Per node: the cores its group's CFS quota allows, as set in the kernel."""
    root = group_root(namespace)
    return {group.name.removeprefix("node-"): int((group / "cpu.cfs_quota_us").read_text()) / PERIOD_US
            for group in (sorted(root.glob("node-*")) if root.exists() else [])}


def remove(namespace: str, timeout_s: float = 30.0) -> bool:
    """Removes the testbed's groups, moving any process still in them back to the root group. A process
    killed a moment ago stays in its group until it has exited, so each group is retried until ``timeout_s``."""
    root = group_root(namespace)
    if not root.exists():
        return False
    deadline = time.monotonic() + timeout_s
    for group in [*(g for g in root.iterdir() if g.is_dir()), root]:
        _remove_group(group, deadline)
    return True


def _remove_group(group: Path, deadline: float) -> None:
    while True:
        _empty(group)
        try:
            group.rmdir()
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                raise CpuGroupError(f"cannot remove CPU group {group}: {e.strerror} (processes still in it: "
                                    f"{(group / 'cgroup.procs').read_text().split()})") from e
            time.sleep(0.2)


def _empty(group: Path) -> None:
    for pid in (group / "cgroup.procs").read_text().split():
        try:
            (CPU_ROOT / "cgroup.procs").write_text(pid)
        except ProcessLookupError:  # exited meanwhile
            pass
