"""Faults: NodeManagers of R_j die (thesis §4.1, §4.6; docs/reliability.md).

Each test runs one small wordcount through the pipeline's own run steps (upload into R_j, submit with R_j,
wait, verify locality, record) on ``fault_cluster`` and stops NodeManagers through the control channel:

* one NodeManager of R_j = {/rack-a, /rack-b} while the job's tasks run on it: the job still succeeds, the
  containers it lost run again, and every container of the job, re-runs included, ran in R_j (3 of R_j's 4
  NodeManagers stay live, above the scheduler's fallback threshold of half);
* the NodeManager of the job's ApplicationMaster, mid-job: MapReduce jobs are submitted with
  ``mapreduce.am.max-attempts`` (2 by default, as YARNRunner), so a second MRAppMaster, again inside R_j,
  finishes the job;
* every NodeManager of R_j = {/rack-c}: the scheduler's fallback (§4.6) runs the job on the other racks,
  and the run record says why.

Both check that the job was submitted once (one application for its plan, period and job tags).
"""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.rest import as_list
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.catalog import RecurringJob
from corral_yarn.pipeline.execution import PlannedRun
from corral_yarn.pipeline.settings import PipelineSettings

pytestmark = pytest.mark.integration
BLOCK = 65536
WORDS = [f"w{k:03d}" for k in range(200)]


@pytest.fixture(scope="module")
def cluster(fault_cluster: dict[str, Any]) -> Cluster:
    return Cluster.from_description(fault_cluster, progress=False)


def planned_run(fault_cluster: dict[str, Any], tmp_path: Path, name: str, racks: list[str], blocks: int) -> PlannedRun:
    """A one-job plan entry for a wordcount of ``blocks`` blocks, with its local input written."""
    local = tmp_path / "input"
    local.mkdir()
    rng = random.Random(name)
    (local / "words.txt").write_text("\n".join(" ".join(rng.choices(WORDS, k=10)) for _ in range(blocks * BLOCK // 50)) + "\n")
    start = datetime.now(UTC).replace(microsecond=0)
    base = f"/it/fault-nm-{random.randrange(10**6)}/{name}"
    job = RecurringJob(key=name, program="wordcount", reduces=1, local_input=str(local), block_bytes=BLOCK)
    return PlannedRun(version=f"{start:%Y%m%dT%H%M%SZ}-it", plan_id=f"it-{random.randrange(10**6)}", scenario="batch",
                      name=name, racks=racks, priority=5, order=0, planned_start=start, arrival=start, period_start=start,
                      period_end=start + timedelta(days=1), job=job, jar=fault_cluster["examples_jar"],
                      hdfs_input=f"{base}/input", hdfs_output=f"{base}/output")


def task_container_host(fault_cluster: dict[str, Any], app_id: str, racks: list[str], timeout_s: float = 600.0) -> str:
    """A worker of ``racks`` whose NodeManager runs a task container of the application, and not its AM."""
    nodes = {n["host"]: n["nodemanager_http"] for r in fault_cluster["racks"] if r["name"] in racks for n in r["nodes"]}
    prefix = "container_" + app_id.removeprefix("application_") + "_"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for host, http in nodes.items():
            containers = as_list((requests.get(f"{http}/ws/v1/node/containers", headers={"Accept": "application/json"},
                                               timeout=30).json().get("containers") or {}).get("container"))
            mine = [c for c in containers if c["id"].startswith(prefix)]
            # not the AM's node: that fault is the AM test's
            if any(c["state"] == "RUNNING" for c in mine) and not any(c["id"].endswith("_000001") for c in mine):
                return host
        time.sleep(0.5)
    raise AssertionError(f"no task container of {app_id} ran in {racks} within {timeout_s:.0f} s")


def run_record(cluster: Cluster, settings: PipelineSettings, run: PlannedRun, app_id: str) -> dict[str, Any]:
    """Wait for the job, then verify and record it as the pipeline does; the record as written."""
    app = cluster.rm.wait(app_id, timeout_s=900)
    locality = execution.verify_locality(cluster, run, app.app_id)
    execution.record(settings, run, app, locality)
    record: dict[str, Any] = json.loads(execution.record_path(settings, run.version, run.name).read_text())
    return record


def test_job_survives_a_nodemanager_of_its_racks_and_reruns_inside_them(cluster: Cluster, faults: Any,
                                                                         fault_cluster: dict[str, Any], tmp_path: Path) -> None:
    racks = ["/rack-a", "/rack-b"]
    run = planned_run(fault_cluster, tmp_path, "fault-nm-one", racks, blocks=8)
    settings = PipelineSettings(home=tmp_path / "home")
    execution.upload_input(cluster, run)
    app_id = execution.submit(cluster, run)

    victim = task_container_host(fault_cluster, app_id, racks)
    faults.stop("nodemanager", victim)
    record = run_record(cluster, settings, run, app_id)

    assert (record["state"], record["final_status"]) == ("FINISHED", "SUCCEEDED"), record
    loc = record["locality"]
    assert loc["containers"] >= 4 and loc["containers_in_racks"] == loc["containers"], loc
    assert loc["rack_set_fallbacks"] == [], "3 of 4 NodeManagers of R_j live: the restriction held"
    attempts = cluster.history.attempts(job_id_of(app_id))
    on_victim = [a for a in attempts if a.node_http_address.startswith(f"{victim}:")]
    assert on_victim and any(a.state != "SUCCEEDED" for a in on_victim), ("the fault hit a running task", on_victim)
    assert [a.app_id for a in cluster.rm.find(run.tags)] == [app_id], "submitted once"
    assert execution.submit(cluster, run) == app_id, "a retried submit finds the application, submits nothing"


def test_job_survives_the_loss_of_its_application_masters_node_with_a_second_attempt_in_its_racks(
        cluster: Cluster, faults: Any, fault_cluster: dict[str, Any], tmp_path: Path) -> None:
    racks = ["/rack-a", "/rack-b"]
    run = planned_run(fault_cluster, tmp_path, "fault-nm-am", racks, blocks=4)
    settings = PipelineSettings(home=tmp_path / "home")
    execution.upload_input(cluster, run)
    app_id = execution.submit(cluster, run)

    task_container_host(fault_cluster, app_id, racks)  # the job is past its AM's start: tasks run
    first = cluster.rm.attempts(app_id)
    assert len(first) == 1, first
    faults.stop("nodemanager", first[0].am.node_id.split(":")[0])
    record = run_record(cluster, settings, run, app_id)

    assert (record["state"], record["final_status"]) == ("FINISHED", "SUCCEEDED"), record
    attempts = cluster.rm.attempts(app_id)
    assert len(attempts) == 2, attempts
    hosts = {n["host"] for r in fault_cluster["racks"] if r["name"] in racks for n in r["nodes"]}
    assert attempts[1].am.node_id.split(":")[0] in hosts - {first[0].am.node_id.split(":")[0]}, attempts
    assert record["locality"]["containers_in_racks"] == record["locality"]["containers"], record["locality"]
    assert [a.app_id for a in cluster.rm.find(run.tags)] == [app_id], "submitted once"


def test_job_falls_back_outside_its_racks_when_all_of_them_are_down_and_the_record_says_why(
        cluster: Cluster, faults: Any, fault_cluster: dict[str, Any], tmp_path: Path) -> None:
    rack = "/rack-c"
    run = planned_run(fault_cluster, tmp_path, "fault-nm-rack", [rack], blocks=4)
    settings = PipelineSettings(home=tmp_path / "home")
    execution.upload_input(cluster, run)
    for host in faults.hosts(rack):
        faults.stop("nodemanager", host)
    app_id = execution.submit(cluster, run)
    record = run_record(cluster, settings, run, app_id)

    assert (record["state"], record["final_status"]) == ("FINISHED", "SUCCEEDED"), record
    loc = record["locality"]
    assert loc["containers"] >= 3 and loc["containers_in_racks"] == 0, loc
    assert loc["blocks_with_replica_in_racks"] == loc["blocks"], "the input still has a replica of every block in R_j"
    assert any(f.startswith("lifted: 0 of 2 NodeManagers of racks [/rack-c] are live") for f in loc["rack_set_fallbacks"]), loc
    assert [a.app_id for a in cluster.rm.find(run.tags)] == [app_id], "submitted once"
