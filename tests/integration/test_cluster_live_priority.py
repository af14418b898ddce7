"""Two jobs sharing a rack: the higher-priority one gets its containers first (thesis §4.1: "assigns
the slot to the job with the highest priority"). Both jobs' AMs run on the shared rack, which
blockers fill otherwise; when the first blocker ends, its one container's room must go to the
higher-priority job, though the lower-priority one was submitted first."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.errors import ApplicationFailedError
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob

pytestmark = pytest.mark.integration
BLOCK = 65536
CONTAINER_MB = 1024  # a multiple of the scheduler's allocation unit, so requests are not rounded up
FIRST_FREE_S = 30  # both AMs are up and asking for maps by then
REST_FREE_S = 50


def free_memory(cluster: Cluster, rack: str) -> int:
    return sum(n.available_memory_mb for n in cluster.rm.nodes() if n.rack == rack)


def wait_until_free(cluster: Cluster, rack: str, megabytes: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while free_memory(cluster, rack) > megabytes:
        assert time.monotonic() < deadline, "the blockers never got the rack's nodes"
        time.sleep(0.5)


def test_higher_priority_job_gets_its_containers_first(minicluster: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    topo = cluster.topology()
    rack = topo.racks[1]
    run = random.Random().randrange(10**6)
    plan = f"prio-{run}"
    data = tmp_path / "words.txt"
    data.write_text("to be or not to be\n" * 4000)
    cluster.uploader(topo).upload(data, f"/it/{plan}/in/words.txt", [rack], block_bytes=BLOCK)
    # Blockers: sleeping AMs of one task container each, filling the rack but for the two jobs' AMs.
    # The first ends after FIRST_FREE_S and frees one container's room; the rest end later.
    free_for_ams = 2 * CONTAINER_MB
    blockers = []
    for k in range((free_memory(cluster, rack) - free_for_ams) // CONTAINER_MB):
        app = YarnApp(name=f"blocker-{k}", command=f"sleep {FIRST_FREE_S if k == 0 else REST_FREE_S}", memory_mb=CONTAINER_MB)
        blockers.append(cluster.rm.submit(app.submission(cluster.hdfs, "", CorralTags(plan, f"blocker-{k}", (rack,)), priority=100)))
    wait_until_free(cluster, rack, free_for_ams)
    jar = minicluster["examples_jar"]
    submitter = cluster.mapreduce()
    apps = {}
    for name, priority in (("low", 1), ("high", 10)):  # the low one first: FIFO alone would favour it
        job = MapReduceJob(name=name, jar=jar, program="wordcount", inputs=[f"/it/{plan}/in"], output=f"/it/{plan}/{name}",
                           am_memory_mb=CONTAINER_MB, map_memory_mb=CONTAINER_MB, reduce_memory_mb=CONTAINER_MB)
        apps[name] = submitter.submit(job, CorralTags(plan, name, (rack,)), priority=priority)
    for b in blockers:
        with pytest.raises(ApplicationFailedError):  # a sleeping AM never registers: its attempt fails when it exits
            cluster.rm.wait(b.app_id, timeout_s=300)
    finals = {name: cluster.rm.wait(app.app_id, timeout_s=900) for name, app in apps.items()}
    first_task = {}  # when each job's first task container started (the history's start times)
    for name, final in finals.items():
        cluster.history.wait_for_job(job_id_of(final.app_id))
        attempts = cluster.history.attempts(job_id_of(final.app_id))
        first_task[name] = min(a.started_ms for a in attempts if a.type in ("MAP", "REDUCE"))
    am_start = {name: min(a.started_ms for a in cluster.history.attempts(job_id_of(f.app_id)) if a.type == "AM") for name, f in finals.items()}
    assert max(am_start.values()) < first_task["high"], (am_start, first_task)  # both AMs ran before any task: they competed
    assert first_task["high"] < first_task["low"], first_task
