"""NameNode restart during a run (issue 20 item 1; docs/reliability.md): the job finishes (its tasks' HDFS
clients retry through the outage) or fails with the reason in its diagnostics; its input is intact to the
byte, its output complete, and the pipeline writes one record for its one application."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fault_runs import await_running, digest, expected_counts, output_counts, planned_run

from corral_yarn.cluster import ApplicationFailedError, Cluster
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.settings import PipelineSettings

pytestmark = pytest.mark.integration


def test_job_outlives_a_namenode_restart_without_losing_a_byte(fault_cluster: dict[str, Any], faults: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(fault_cluster, progress=False)
    rack = cluster.topology().racks[2]
    run = planned_run(fault_cluster, tmp_path / "in", "fault-nn", rack)
    execution.upload_input(cluster, run)
    data = f"{run.hdfs_input}/words.txt"
    before = digest(cluster, data)
    assert before[0] == (tmp_path / "in" / "words.txt").stat().st_size
    app_id = execution.submit(cluster, run)
    await_running(cluster, app_id)

    detail = faults.restart("namenode")

    assert "out of safe mode" in detail
    try:
        app = cluster.rm.wait(app_id, timeout_s=600)
    except ApplicationFailedError as failed:  # allowed, with its reason
        assert failed.diagnostics.strip(), f"{app_id} failed without a reason"
        app = cluster.rm.application(app_id)
    else:
        assert output_counts(cluster, run.hdfs_output) == expected_counts(tmp_path / "in"), "output complete"
    assert digest(cluster, data) == before, "0 input bytes lost"
    assert [a.app_id for a in cluster.rm.find(run.tags)] == [app_id]
    settings = PipelineSettings(home=tmp_path / "home")
    execution.record(settings, run, app, execution.verify_locality(cluster, run, app_id))
    records = list((settings.records / run.version).iterdir())
    assert [p.name for p in records] == ["fault-nn.json"]
    assert json.loads(records[0].read_text())["app_id"] == app_id
