"""The embedded multi-rack cluster, started once per test session (see docs/minicluster.md).

Set ``CORRAL_CLUSTER_JSON`` to the description JSON of an already running cluster
(``python -m corral_yarn.minicluster start``) to reuse it instead; it is then left running.

Fault-injection tests (``test_fault_*.py``, docs/reliability.md) get a cluster of their own,
``fault_cluster``, started only when one of them runs, and stop and start its daemons through
``faults``, which restores every daemon a test stopped when the test ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.minicluster import StartOptions, control, load_description, start_cluster, stop_cluster


@pytest.fixture(scope="session")
def minicluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The parsed cluster description JSON of a healthy 3-rack x 2-node embedded cluster."""
    yield from _session_cluster(tmp_path_factory, "CORRAL_CLUSTER_JSON", "minicluster")


@pytest.fixture(scope="session")
def fault_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A 3-rack x 2-node embedded cluster for fault injection only: faults change its state, so it is not
    ``minicluster``. Reuse one started by hand with ``CORRAL_FAULT_CLUSTER_JSON``."""
    yield from _session_cluster(tmp_path_factory, "CORRAL_FAULT_CLUSTER_JSON", "fault-cluster")


@pytest.fixture(scope="module")
def secure_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A secure 3-rack x 2-node cluster (docs/minicluster.md, "Secure mode") for the module that asks for it,
    stopped after it; reuse one started by hand (``start --secure``) with ``CORRAL_SECURE_CLUSTER_JSON``."""
    yield from _session_cluster(tmp_path_factory, "CORRAL_SECURE_CLUSTER_JSON", "secure", secure=True, timeout_s=600)


def _session_cluster(tmp_path_factory: pytest.TempPathFactory, reuse_env: str, name: str, **options: Any) -> Iterator[dict[str, Any]]:
    """A cluster started for the fixture's scope and stopped after it (``options`` as StartOptions'), or the one
    whose description ``reuse_env`` names (left running)."""
    existing = os.environ.get(reuse_env)
    if existing:
        yield load_description(Path(existing))
        return
    # exit_with: the cluster also stops if this pytest process dies without running the teardown.
    start = StartOptions(base_dir=tmp_path_factory.mktemp(name), exit_with=os.getpid(), **options)
    description = start_cluster(start)
    try:
        yield description
    finally:
        stop_cluster(start.description_path)


class Faults:
    """Faults injected into ``fault_cluster`` through its control channel; ``restore`` starts again every
    daemon stopped and not started since, so each test leaves the cluster whole."""

    def __init__(self, description: dict[str, Any]) -> None:
        self.description = description
        self.stopped: list[tuple[str, str]] = []  # (daemon, host), in stop order
        self.injected = 0

    def stop(self, daemon: str, host: str) -> str:
        """Stop ``daemon`` (``datanode`` or ``nodemanager``) on worker ``host``: one fault."""
        detail = control(self.description, f"stop-{daemon}", host)
        self.stopped.append((daemon, host))
        self.injected += 1
        return detail

    def start(self, daemon: str, host: str) -> str:
        detail = control(self.description, f"start-{daemon}", host)
        self.stopped.remove((daemon, host))
        return detail

    def restart(self, daemon: str) -> str:
        """Restart a master (``resourcemanager`` or ``namenode``) on its ports and state, in one command: one fault."""
        detail = control(self.description, f"restart-{daemon}")
        self.injected += 1
        return detail

    def restore(self) -> None:
        for daemon, host in reversed(list(self.stopped)):
            self.start(daemon, host)

    def hosts(self, rack: str) -> list[str]:
        """The workers of a rack, in the description's order."""
        return [n["host"] for r in self.description["racks"] if r["name"] == rack for n in r["nodes"]]


@pytest.fixture
def faults(fault_cluster: dict[str, Any]) -> Iterator[Faults]:
    """Stops and starts daemons of ``fault_cluster``; every daemon the test stopped is started again after it."""
    injected = Faults(fault_cluster)
    try:
        yield injected
    finally:
        injected.restore()
