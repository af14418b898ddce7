"""ResourceManager restart during a run (issue 20 item 1; docs/reliability.md): with work-preserving
recovery a running MapReduce job survives, the pipeline's wait (the Airflow trigger) keeps waiting through
the restart, a retried submit finds the same application, and every container ran inside R_j."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fault_runs import await_running, expected_counts, output_counts, planned_run

from corral_yarn.airflow.triggers import YarnApplicationTrigger
from corral_yarn.cluster import Cluster
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.settings import PipelineSettings

pytestmark = pytest.mark.integration


async def _first_event(trigger: YarnApplicationTrigger) -> dict[str, Any]:
    async for event in trigger.run():
        return dict(event.payload)
    raise AssertionError("the trigger ended without an event")


def test_running_job_survives_a_resourcemanager_restart(fault_cluster: dict[str, Any], faults: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(fault_cluster, progress=False)
    rack = cluster.topology().racks[1]
    run = planned_run(fault_cluster, tmp_path / "in", "fault-rm", rack)
    execution.upload_input(cluster, run)
    app_id = execution.submit(cluster, run)
    await_running(cluster, app_id)
    trigger = YarnApplicationTrigger(fault_cluster["resourcemanager"], app_id, poll_interval_s=1.0)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(asyncio.run, _first_event(trigger))  # the pipeline's wait_for_job, polling all along

        detail = faults.restart("resourcemanager")

        assert "applications recovered" in detail
        assert not waiting.done(), f"the wait ended during the restart: {waiting.result()}"
        assert execution.submit(cluster, run) == app_id, "a retried submit found the running application"
        event = waiting.result(timeout=600)
    assert (event["status"], event.get("state"), event.get("final_status")) == ("ended", "FINISHED", "SUCCEEDED"), event
    assert [a.app_id for a in cluster.rm.find(run.tags)] == [app_id], "0 duplicate applications by the job's tags"
    assert len(cluster.rm.attempts(app_id)) == 1, "work-preserving: the AM was not restarted"
    locality = execution.verify_locality(cluster, run, app_id)
    assert locality.containers > 0 and locality.containers_in_racks == locality.containers, locality
    assert output_counts(cluster, run.hdfs_output) == expected_counts(tmp_path / "in")
    settings = PipelineSettings(home=tmp_path / "home")
    execution.record(settings, run, cluster.rm.application(app_id), locality)
    assert [p.name for p in (settings.records / run.version).iterdir()] == ["fault-rm.json"]
