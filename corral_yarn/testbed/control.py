"""Bring the shaped testbed up and down: a private network namespace, its tc shaping, the embedded
cluster inside it (docs/testbed.md).

Everything that talks to the testbed's cluster runs inside the namespace (``corral testbed exec``): its
loopback is its own, so the cluster's addresses exist only there and no traffic leaves it.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from corral_yarn.errors import CorralError, InputError
from corral_yarn.io import write_atomic
from corral_yarn.nomora.latency import LatencyMatrix, by_rack, parse_json
from corral_yarn.testbed import cpu
from corral_yarn.testbed.counters import rack_pair_bytes
from corral_yarn.testbed.shaping import Network, shaping_commands, tc_commands, unshaping_commands

LOG = logging.getLogger(__name__)

NAMESPACE = "corral-testbed"
DEFAULT_HOME = Path(".corral/testbed")
STATE = "testbed.json"
SCHEMA_VERSION = "corral-yarn/testbed/v1"
SHIM_SOURCE = Path(__file__).with_name("nodebind.c")
CLONE_NEWNET = 0x40000000


class TestbedError(CorralError):
    """The testbed cannot be brought up, inspected or brought down."""

    __test__ = False  # not a pytest class


class NoTestbedState(TestbedError):
    """No testbed is up under the home directory given (its state file is missing)."""


def preflight(cpu_quotas: bool = False) -> None:
    """Root, ip, tc, nsenter, a C compiler (and CPU quotas if asked); one error naming all that is missing."""
    missing = [tool for tool in ("ip", "tc", "nsenter", "cc") if shutil.which(tool) is None]
    problems = [f"'{tool}' not found on PATH" for tool in missing]
    if os.geteuid() != 0:
        problems.insert(0, "network namespaces and tc need root (run as root)")
    if cpu_quotas and (cgroup := cpu.preflight()):
        problems.append(f"per-node CPU quotas need {cgroup} (or --node-cpus 0)")
    if problems:
        hint = " (scripts/bootstrap.sh installs iproute2, util-linux and gcc)" if missing else ""
        raise TestbedError("the testbed cannot start: " + "; ".join(problems) + hint)


def run(command: list[str], namespace: str | None = None, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs a command (inside ``namespace`` if given); a failure becomes a TestbedError naming it."""
    full = ["ip", "netns", "exec", namespace, *command] if namespace else command
    result = subprocess.run(full, capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise TestbedError(f"'{' '.join(full)}' failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}")
    return result


def namespace_exists(namespace: str = NAMESPACE) -> bool:
    return namespace in run(["ip", "netns", "list"]).stdout.split()


def namespace_for(home: Path, prefix: str) -> str:
    """A namespace (and CPU group) name of the testbed whose state is in ``home``: ``prefix`` and a digest of
    the resolved path, so testbeds with different homes never share, or remove, each other's namespace."""
    return f"{prefix}-{hashlib.sha1(str(home.resolve()).encode()).hexdigest()[:8]}"


def namespace_of(home: Path) -> str:
    """The namespace of ``corral testbed --home DIR``: NAMESPACE for the default home, one of its own for any other."""
    return NAMESPACE if home.resolve() == DEFAULT_HOME.resolve() else namespace_for(home, NAMESPACE)


def up(net: Network, home: Path = DEFAULT_HOME, namespace: str = NAMESPACE, timeout_s: float = 300.0,
       node_cpus: float | None = None, rack_cpus: dict[str, float] | None = None) -> dict[str, Any]:
    """Namespace, shaping, CPU groups, shim and cluster; measures the shaping with real streams; writes the state.

    ``node_cpus``: each node's containers are held to that many cores (testbed/cpu.py); ``rack_cpus``
    instead: the cores of each rack's nodes (rack letter -> cores), racks of equal cores forming a node
    class; neither: they share the machine's cores."""
    if node_cpus is not None and rack_cpus is not None:
        raise InputError("give node_cpus or rack_cpus, not both", field="rack_cpus")
    quotas = cpu.node_quotas([(rack, address) for _, rack, address in net.nodes()], node_cpus, rack_cpus)
    for address, cores in (quotas or {}).items():
        cpu.check_node_cpus(cores, field=f"node_cpus ({address})")
    preflight(quotas is not None)
    home = home.resolve()
    if namespace_exists(namespace) and run(["ip", "netns", "pids", namespace], check=False).stdout.split():
        raise TestbedError(f"a testbed is already up in namespace {namespace} (processes run in it); "
                           "'corral testbed down' first (with its --home)")
    if namespace_exists(namespace) or (home / STATE).exists():
        LOG.warning("cleaning a stale testbed (namespace %s) first", namespace)
        down(home, namespace)
    try:
        run(["ip", "netns", "add", namespace])
    except TestbedError as e:
        raise TestbedError(f"network namespaces are refused here: {e}") from e
    try:
        for command in tc_commands(net):
            run(command, namespace)
        groups = cpu.create(namespace, quotas) if quotas is not None else None
        shim = _build_shim(home, groups)
        shaping = measure(net, namespace)
        shaping["measured_rack_rtt_us"] = by_rack(measure_latency(net, namespace, rounds=10), net.rack_of()).latency_us.round(1).tolist()
        description = _start_cluster(net, home, shim, namespace, timeout_s, groups is not None)
    except BaseException:
        down(home, namespace)
        raise
    state = {"schema_version": SCHEMA_VERSION, "namespace": namespace, "network": asdict(net),
             "uplink_mbit_s": net.uplink_mbit_s, "shaping": shaping, "cluster_json": str(_cluster_json(home)),
             "cluster_pid": description["pid"], "node_cpus": node_cpus, "rack_cpus": rack_cpus,
             "node_classes": cpu.rack_classes(rack_cpus) if rack_cpus is not None else None}
    write_atomic(home / STATE, json.dumps(state, indent=2) + "\n")
    return state


def down(home: Path = DEFAULT_HOME, namespace: str = NAMESPACE) -> bool:
    """Stops the cluster and every process in the namespace, then deletes it (and with it every qdisc)."""
    home = home.resolve()
    existed = namespace_exists(namespace)
    if existed:
        if _cluster_json(home).exists():
            run([sys.executable, "-m", "corral_yarn.minicluster", "stop", "--out", str(_cluster_json(home))], namespace, check=False)
        for pid in run(["ip", "netns", "pids", namespace], check=False).stdout.split():
            run(["kill", "-9", pid], check=False)
        run(["ip", "netns", "del", namespace])
    existed = cpu.remove(namespace) or existed
    _cluster_json(home).unlink(missing_ok=True)
    (home / STATE).unlink(missing_ok=True)
    return existed


def reshape(net: Network, namespace: str = NAMESPACE) -> None:
    """Replaces the shaping of a running testbed (same racks and nodes) without touching its cluster."""
    for command in [*unshaping_commands(), *shaping_commands(net)]:
        run(command, namespace)


def status(home: Path = DEFAULT_HOME) -> dict[str, Any]:
    """The state written at ``up``, whether the namespace and cluster live, and bytes per rack pair so far."""
    state = load_state(home)
    namespace = state["namespace"]
    state["namespace_exists"] = namespace_exists(namespace)
    if state["namespace_exists"]:
        net = Network(**state["network"])
        pairs = rack_pair_bytes(net, run(["tc", "-s", "class", "show", "dev", "lo"], namespace).stdout)
        state["bytes_by_rack_pair"] = {f"{src}->{dst}": sent for (src, dst), sent in sorted(pairs.items())}
        cluster = run([sys.executable, "-m", "corral_yarn.minicluster", "status", "--out", state["cluster_json"]], namespace, check=False)
        state["cluster"] = json.loads(cluster.stdout) if cluster.returncode == 0 else {"error": cluster.stderr.strip()}
        state["cpu_cores"] = cpu.quotas(namespace)
        state["cpu_throttled"] = cpu.throttled(namespace)
    return state


def load_state(home: Path = DEFAULT_HOME) -> dict[str, Any]:
    path = home.resolve() / STATE
    try:
        state: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise NoTestbedState(f"no testbed state at {path}; run 'corral testbed up' first") from e
    if state.get("schema_version") != SCHEMA_VERSION:
        raise TestbedError(f"{path}: schema_version {state.get('schema_version')!r}, expected {SCHEMA_VERSION!r}")
    return state


def exec_command(command: list[str], home: Path = DEFAULT_HOME) -> int:
    """Runs ``command`` inside the namespace with CORRAL_CLUSTER_JSON naming the testbed's cluster."""
    state = load_state(home)
    env = {**os.environ, "CORRAL_CLUSTER_JSON": state["cluster_json"]}
    return subprocess.run(["ip", "netns", "exec", state["namespace"], *command], env=env).returncode


def in_namespace(namespace: str, function: Callable[[], Any]) -> Any:
    """Calls ``function`` in a thread that has joined ``namespace`` (setns(2)), and returns its result.

    Only that thread (and the threads and processes it starts) sees the testbed's loopback, so a test or
    benchmark can drive the testbed's cluster with the project's own adapters.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            fd = os.open(f"/var/run/netns/{namespace}", os.O_RDONLY)
            try:
                if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                    raise TestbedError(f"cannot join namespace {namespace}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
            outcome["value"] = function()
        except BaseException as e:  # re-raised in the caller's thread
            outcome["error"] = e

    thread = threading.Thread(target=target, name=f"netns-{namespace}")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def measure(net: Network, namespace: str = NAMESPACE, seconds: float = 2.0) -> dict[str, float]:
    """Real streams inside the namespace: node 0 of rack 0 to rack 1 (cross-rack) and to its rack-mate."""
    def rate(src: str, dst: str) -> float:
        out = run([sys.executable, "-m", "corral_yarn.testbed.probe", src, dst, str(seconds)], namespace)
        return float(json.loads(out.stdout)["mbit_s"])

    figures = {"configured_uplink_mbit_s": net.uplink_mbit_s, "configured_node_mbit_s": net.node_mbit_s,
               "measured_cross_rack_mbit_s": rate(net.host(0, 0), net.host(1, 0))}
    if net.nodes_per_rack > 1:
        figures["measured_in_rack_mbit_s"] = rate(net.host(0, 0), net.host(0, 1))
    LOG.info("shaping measured: %s", figures)
    return figures


def measure_latency(net: Network, namespace: str = NAMESPACE, rounds: int = 20) -> LatencyMatrix:
    """Round trips (µs) between every two workers: the probe mesh, run inside the namespace (testbed/probe.py)."""
    if not 1 <= rounds <= 1000:
        raise TestbedError(f"rounds: must be in 1..1000 (got {rounds})")
    out = run([sys.executable, "-m", "corral_yarn.testbed.probe", "--rtt", str(rounds), *net.rack_of()], namespace)
    return parse_json(out.stdout)


def _cluster_json(home: Path) -> Path:
    return home / "cluster" / "cluster.json"


def _build_shim(home: Path, cpu_groups: Path | None) -> Path:
    """Compiles the containers' LD_PRELOAD shim (nodebind.c) into the testbed's home; with ``cpu_groups``
    it also moves each container into its node's CPU group."""
    home.mkdir(parents=True, exist_ok=True)
    library = home / "libcorralnodebind.so"
    groups = [f'-DCORRAL_CPU_GROUPS="{cpu_groups}"'] if cpu_groups else []
    run(["cc", "-shared", "-fPIC", "-O2", *groups, "-o", str(library), str(SHIM_SOURCE), "-ldl"])
    return library


def _start_cluster(net: Network, home: Path, shim: Path, namespace: str, timeout_s: float, cpu_groups: bool) -> dict[str, Any]:
    """Starts the cluster in the namespace's network only (nsenter): unlike 'ip netns exec', which mounts a
    /sys of its own, its containers still see the host's /sys/fs/cgroup and can join their CPU groups."""
    command = [sys.executable, "-m", "corral_yarn.minicluster", "start", "--racks", str(net.racks),
               "--nodes-per-rack", str(net.nodes_per_rack), "--base-dir", str(home / "cluster"),
               "--container-preload", str(shim), "--timeout", str(timeout_s)]
    run(["nsenter", f"--net=/var/run/netns/{namespace}", *command],
        preexec_fn=(lambda: cpu.join_daemons(namespace)) if cpu_groups else None)
    description: dict[str, Any] = json.loads(_cluster_json(home).read_text())
    return description
