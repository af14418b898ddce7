"""Two jobs sharing a rack: the higher-priority one gets its containers first (thesis §4.1: "assigns
the slot to the job with the highest priority"). Blockers fill the rack first, so both jobs wait
for the same freed capacity; the lower-priority job is submitted first."""

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
BLOCKER_S = 20


def wait_until_rack_full(cluster: Cluster, rack: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while any(n.available_memory_mb > 0 for n in cluster.rm.nodes() if n.rack == rack):
        assert time.monotonic() < deadline, "the blockers never got the rack's nodes"
        time.sleep(0.5)


def test_higher_priority_job_gets_its_containers_first(minicluster: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    topo = cluster.topology()
    rack = topo.racks[1]
    run = random.Random().randrange(10**6)
    plan = f"prio-{run}"
    # Blockers: one sleeping AM container per NodeManager of the rack, as large as the node; they
    # end one after the other, so capacity comes back one node at a time.
    nodes = [n for n in topo.nodemanagers if n.rack == rack]
    blockers = []
    for k, node in enumerate(nodes):
        app = YarnApp(name=f"blocker-{k}", command=f"sleep {BLOCKER_S * (k + 1)}", memory_mb=node.memory_mb)
        tags = CorralTags(plan, f"blocker-{k}", (rack,))
        blockers.append(cluster.rm.submit(app.submission(cluster.hdfs, "", tags, priority=100)))
    wait_until_rack_full(cluster, rack)
    data = tmp_path / "words.txt"
    data.write_text("to be or not to be\n" * 4000)
    cluster.uploader(topo).upload(data, f"/it/{plan}/in/words.txt", [rack], block_bytes=BLOCK)
    jar = minicluster["examples_jar"]
    submitter = cluster.mapreduce()
    apps = {}
    # An AM of 3/4 of a node: a freed node takes one AM, so the order of the AMs is the scheduler's choice.
    am_mb = nodes[0].memory_mb * 3 // 4
    for name, priority in (("low", 1), ("high", 10)):  # the low one first: FIFO alone would favour it
        job = MapReduceJob(name=name, jar=jar, program="wordcount", inputs=[f"/it/{plan}/in"], output=f"/it/{plan}/{name}",
                           am_memory_mb=am_mb)
        apps[name] = submitter.submit(job, CorralTags(plan, name, (rack,)), priority=priority)
    for b in blockers:
        with pytest.raises(ApplicationFailedError):  # a sleeping AM never registers: its attempt fails when it exits
            cluster.rm.wait(b.app_id, timeout_s=300)
    finals = {name: cluster.rm.wait(app.app_id, timeout_s=900) for name, app in apps.items()}
    starts = {}  # when each job's AM, and its first task, started running (the history's container start times)
    for name, final in finals.items():
        cluster.history.wait_for_job(job_id_of(final.app_id))
        attempts = cluster.history.attempts(job_id_of(final.app_id))
        am_start = min(a.started_ms for a in attempts if a.type == "AM")
        task_start = min(a.started_ms for a in attempts if a.type in ("MAP", "REDUCE"))
        starts[name] = (am_start, task_start)
    assert starts["high"][0] < starts["low"][0], starts
    assert starts["high"][1] < starts["low"][1], starts
