"""Two jobs sharing a rack: the higher-priority one gets its containers first (thesis §4.1: "assigns
the slot to the job with the highest priority"). Both jobs' AMs run on the shared rack, which
blockers fill otherwise; when the first blocker is killed, its one container's room must go to the
higher-priority job, though the lower-priority one was submitted first. Blockers are killed, not
timed, and the rest of them only once that container runs (its NodeManager says so), so the test does
not depend on how fast this machine starts JVMs."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.cluster.rest import as_list

pytestmark = pytest.mark.integration
BLOCK = 65536
CONTAINER_MB = 1024  # a multiple of the scheduler's allocation unit, so requests are not rounded up


def free_memory(cluster: Cluster, rack: str) -> int:
    return sum(n.available_memory_mb for n in cluster.rm.nodes() if n.rack == rack)


def wait_for(what: str, ready: Callable[[], bool], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.5)


def asking_for_tasks(cluster: Cluster, app_id: str) -> bool:
    """The application's AM registered (state RUNNING) and has outstanding container requests: task containers.
    Before it registers, the RM lists the request for the AM's own container, which is not a task's."""
    app = cluster.rm.rest.get(f"/ws/v1/cluster/apps/{app_id}")["app"]
    return app.get("state") == "RUNNING" and any(
        r.get("numContainers", 0) > 0 and r.get("resourceName") == "*" for r in app.get("resourceRequests") or [])


def running_containers(cluster: Cluster, app_id: str) -> int:
    return int(cluster.rm.rest.get(f"/ws/v1/cluster/apps/{app_id}")["app"].get("runningContainers", 0))


def task_container_runs(minicluster: dict[str, Any], rack: str, app_id: str) -> bool:
    """A NodeManager of ``rack`` runs a task container of the application (not its AM's, container 1): its AM
    has already recorded the task attempt's launch, the start time the history gives."""
    prefix = "container_" + app_id.removeprefix("application_") + "_"
    for node in next(r for r in minicluster["racks"] if r["name"] == rack)["nodes"]:
        listed = requests.get(f"{node['nodemanager_http']}/ws/v1/node/containers", headers={"Accept": "application/json"}, timeout=30)
        containers = as_list((listed.json().get("containers") or {}).get("container"))
        if any(c["id"].startswith(prefix) and not c["id"].endswith("_000001") and c["state"] == "RUNNING" for c in containers):
            return True
    return False


def test_higher_priority_job_gets_its_containers_first(minicluster: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    topo = cluster.topology()
    rack = topo.racks[1]
    run = random.Random().randrange(10**6)
    plan = f"prio-{run}"
    data = tmp_path / "words.txt"
    data.write_text("to be or not to be\n" * 4000)
    cluster.uploader(topo).upload(data, f"/it/{plan}/in/words.txt", [rack], block_bytes=BLOCK)
    capacity = sum(n.memory_mb for n in topo.nodemanagers if n.rack == rack)
    wait_for(f"{rack} is idle", lambda: free_memory(cluster, rack) == capacity)  # earlier jobs' AMs may still be exiting
    # Blockers: sleeping AMs of one task container each, filling the rack but for the two jobs' AMs.
    free_for_ams = 2 * CONTAINER_MB
    blockers = []
    for k in range((capacity - free_for_ams) // CONTAINER_MB):
        app = YarnApp(name=f"blocker-{k}", command="sleep 600", memory_mb=CONTAINER_MB)
        blockers.append(cluster.rm.submit(app.submission(cluster.hdfs, "", CorralTags(plan, f"blocker-{k}", (rack,)), priority=100)))
    wait_for("the blockers hold the rack", lambda: free_memory(cluster, rack) <= free_for_ams)
    submitter = cluster.mapreduce()
    apps = {}
    for name, priority in (("low", 1), ("high", 10)):  # the low one first: FIFO alone would favour it
        job = MapReduceJob(name=name, jar=minicluster["examples_jar"], program="wordcount", inputs=[f"/it/{plan}/in"],
                           output=f"/it/{plan}/{name}", am_memory_mb=CONTAINER_MB, map_memory_mb=CONTAINER_MB,
                           reduce_memory_mb=CONTAINER_MB)
        apps[name] = submitter.submit(job, CorralTags(plan, name, (rack,)), priority=priority)
    wait_for("both AMs ask for task containers", lambda: all(asking_for_tasks(cluster, a.app_id) for a in apps.values()), 300)
    # Free one container's room; it must go to the higher priority. Then free the rest.
    cluster.rm.kill(blockers[0].app_id)
    running: dict[str, int] = {}

    def room_used() -> bool:
        running.update({name: running_containers(cluster, a.app_id) for name, a in apps.items()})
        return sum(running.values()) > 2

    wait_for("the freed room is used", room_used)
    assert running == {"low": 1, "high": 2}, running  # the AMs, and the one task container went to "high"
    # so that the start times below cannot be confused by JVM start-up jitter (a 10 s sleep before session 13)
    wait_for("the high job's task container runs", lambda: task_container_runs(minicluster, rack, apps["high"].app_id))
    for b in blockers[1:]:
        cluster.rm.kill(b.app_id)
    finals = {name: cluster.rm.wait(app.app_id, timeout_s=900) for name, app in apps.items()}
    first_task = {}  # when each job's first task container started (the history's start times)
    for name, final in finals.items():
        cluster.history.wait_for_job(job_id_of(final.app_id))
        first_task[name] = min(a.started_ms for a in cluster.history.attempts(job_id_of(final.app_id)) if a.type in ("MAP", "REDUCE"))
    assert first_task["high"] < first_task["low"], first_task
