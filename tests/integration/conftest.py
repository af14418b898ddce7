"""The embedded multi-rack cluster, started once per test session (see docs/minicluster.md).

Set ``CORRAL_CLUSTER_JSON`` to the description JSON of an already running cluster
(``python -m corral_yarn.minicluster start``) to reuse it instead; it is then left running.

Fault-injection tests (``test_fault_*.py``, docs/reliability.md) get a cluster of their own,
``fault_cluster``, started only when one of them runs, and stop and start its daemons through
``faults``, which restores every daemon a test stopped when the test ends.

The two Airflow modules start from copies of one Airflow database migrated once (``migrated_airflow_db``).

A cluster's stop mostly waits for its daemons to shut down (about 17 s), so it runs in the background
(``cluster_stops``) while the next tests run; a session cluster's stop begins right after the last test that
uses it, and the session ends once every stop has finished.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.minicluster import StartOptions, control, load_description, start_cluster, stop_cluster
from corral_yarn.pipeline.demo import DemoPaths, LocalAirflow


SESSION_CLUSTERS = ("minicluster", "fault_cluster")
LAST_USE = pytest.StashKey[dict[str, list[str]]]()  # test node id -> the session clusters it is the last collected user of
STOPS = pytest.StashKey["ClusterStops"]()


class ClusterStops:
    """Clusters started by this session, each stopped in the background: a stop mostly waits for the daemons to
    shut down (about 17 s). ``wait`` returns once every stop has finished and raises the first stop's error."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(thread_name_prefix="cluster-stop")
        self.stops: list[Future[bool]] = []
        self.running: dict[str, Path] = {}  # fixture name -> description path, until its stop begins

    def started(self, fixture: str, description_path: Path) -> None:
        self.running[fixture] = description_path

    def begin(self, fixture: str) -> None:
        """Begin stopping the cluster of ``fixture``, if it runs and its stop has not begun."""
        if (path := self.running.pop(fixture, None)) is not None:
            self.stops.append(self.pool.submit(stop_cluster, path))

    def wait(self) -> None:
        self.pool.shutdown(wait=True)
        for stop in self.stops:
            stop.result()


def _uses(item: pytest.Item, fixture: str) -> bool:
    return fixture in getattr(item, "fixturenames", ())


@pytest.hookimpl(trylast=True)  # after -k/-m/--deselect have removed their tests
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """The tests on ``fault_cluster`` run first (otherwise in their order), so that it and ``minicluster`` never
    run side by side idle; then find the last test, in run order, that uses each session cluster."""
    items[:] = [i for i in items if _uses(i, "fault_cluster")] + [i for i in items if not _uses(i, "fault_cluster")]
    last = {name: item.nodeid for item in items for name in SESSION_CLUSTERS if _uses(item, name)}
    session.stash[LAST_USE] = {}
    for name, nodeid in last.items():
        session.stash[LAST_USE].setdefault(nodeid, []).append(name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Once the last test using a session cluster is torn down, that cluster's stop begins: the tests after it (the
    unit tests among them) do not share this machine with an idle cluster, nor wait for its stop at the end."""
    try:
        return (yield)
    finally:
        if STOPS in item.session.stash:
            for name in item.session.stash.get(LAST_USE, {}).get(item.nodeid, []):
                item.session.stash[STOPS].begin(name)


@pytest.fixture(scope="session")
def cluster_stops(request: pytest.FixtureRequest) -> Iterator[ClusterStops]:
    """Set up before every cluster fixture, so torn down after all of them: the session waits for their stops."""
    stops = request.session.stash[STOPS] = ClusterStops()
    try:
        yield stops
    finally:
        stops.wait()


@pytest.fixture(scope="session")
def minicluster(tmp_path_factory: pytest.TempPathFactory, cluster_stops: ClusterStops) -> Iterator[dict[str, Any]]:
    """The parsed cluster description JSON of a healthy 3-rack x 2-node embedded cluster."""
    yield from _cluster(tmp_path_factory, cluster_stops, "minicluster", "CORRAL_CLUSTER_JSON", "minicluster")


@pytest.fixture(scope="session")
def fault_cluster(tmp_path_factory: pytest.TempPathFactory, cluster_stops: ClusterStops) -> Iterator[dict[str, Any]]:
    """A 3-rack x 2-node embedded cluster for fault injection only: faults change its state, so it is not
    ``minicluster``. Reuse one started by hand with ``CORRAL_FAULT_CLUSTER_JSON``."""
    yield from _cluster(tmp_path_factory, cluster_stops, "fault_cluster", "CORRAL_FAULT_CLUSTER_JSON", "fault-cluster")


@pytest.fixture(scope="module")
def secure_cluster(tmp_path_factory: pytest.TempPathFactory, cluster_stops: ClusterStops) -> Iterator[dict[str, Any]]:
    """A secure 3-rack x 2-node cluster (docs/minicluster.md, "Secure mode") for the module that asks for it,
    stopped after it; reuse one started by hand (``start --secure``) with ``CORRAL_SECURE_CLUSTER_JSON``."""
    yield from _cluster(tmp_path_factory, cluster_stops, "secure_cluster", "CORRAL_SECURE_CLUSTER_JSON", "secure",
                        secure=True, timeout_s=600)


@pytest.fixture(scope="session")
def migrated_airflow_db(minicluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Airflow metadata database (SQLite, ``airflow db migrate``) migrated once per session: copy it to
    ``<AIRFLOW_HOME>/airflow.db`` instead of migrating again (each module's own runs stay in its own copy)."""
    root = tmp_path_factory.mktemp("airflow-db")
    paths = DemoPaths(airflow_home=root / "airflow", pipeline_home=root / "pipeline")
    LocalAirflow(paths, minicluster).migrate()
    return paths.airflow_home / "airflow.db"


def _cluster(tmp_path_factory: pytest.TempPathFactory, stops: ClusterStops, fixture: str, reuse_env: str, name: str,
             **options: Any) -> Iterator[dict[str, Any]]:
    """A cluster started for ``fixture`` (``options`` as StartOptions') and stopped through ``stops`` after its last
    user, or the one whose description ``reuse_env`` names (left running)."""
    existing = os.environ.get(reuse_env)
    if existing:
        yield load_description(Path(existing))
        return
    # exit_with: the cluster also stops if this pytest process dies without running the teardown.
    start = StartOptions(base_dir=tmp_path_factory.mktemp(name), exit_with=os.getpid(), **options)
    description = start_cluster(start)
    stops.started(fixture, start.description_path)
    try:
        yield description
    finally:
        stops.begin(fixture)  # nothing to do if its last user began it


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
