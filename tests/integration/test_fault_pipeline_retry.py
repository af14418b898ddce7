"""Fault: the pipeline's task is killed (SIGKILL) between submitting its job and recording it, then retried.

The step runs in a child process driving the pipeline's own functions, as a run DAG's tasks do: take the
period lock, upload the input into R_j, submit (idempotent by the plan's, period's and job's tags), wait,
ingest the run into the history store, verify and record its locality, release the lock. The child is
killed once the ResourceManager lists its application; the whole step is then run again with the same
run id, and once more after it finished. Asserted: one application for the (plan, job), the run
completed, one history row, one record, no partial output (docs/reliability.md, "Fault injection").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.history import job_id_of
from corral_yarn.pipeline.catalog import RecurringJob
from corral_yarn.pipeline.execution import PlannedRun, record_path
from corral_yarn.pipeline.lock import lock_path
from corral_yarn.pipeline.settings import PipelineSettings
from corral_yarn.cluster.tags import period_id
from estimator.store import HistoryStore

pytestmark = pytest.mark.integration

# The step, as corral_run's tasks chain it (pipeline.execution), holding the period lock as its DAG run does.
STEP = """
import json, logging, sys
from corral_yarn.cluster import Cluster
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.execution import PlannedRun
from corral_yarn.pipeline.lock import PeriodLock, holding
from corral_yarn.pipeline.settings import PipelineSettings

logging.basicConfig(level=logging.INFO, stream=sys.stderr)
description, run_file, home, run_id = sys.argv[1:5]
cluster = Cluster.from_description(description, progress=False)
run = PlannedRun.model_validate_json(open(run_file).read())
settings = PipelineSettings(home=home, plans_dir=run.period_lock, runs_dir="/unused")
with holding(PeriodLock.of(cluster.hdfs, run.period_lock, run.period_start, run_id, wait_s=30, poll_s=1)):
    execution.upload_input(cluster, run)
    app_id = execution.submit(cluster, run)
    print(json.dumps({"submitted": app_id}), flush=True)
    cluster.rm.wait(app_id, timeout_s=600)
    print(execution.ingest_run(cluster, settings, app_id), file=sys.stderr)
    doc = execution.record(settings, run, execution.application(cluster, app_id), execution.verify_locality(cluster, run, app_id))
print(json.dumps({"recorded": doc["app_id"]}), flush=True)
"""


def _step(description: Path, run_file: Path, home: Path, run_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", STEP, str(description), str(run_file), str(home), run_id],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.fixture(scope="module")
def killed_then_retried(minicluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fault-retry")
    description = root / "cluster.json"
    description.write_text(json.dumps(minicluster))
    cluster = Cluster.from_description(minicluster, progress=False)
    stamp = f"{time.time_ns() % 10**9}"
    start = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(days=int(stamp) % 1000)  # a period of its own
    landing = root / "landing"
    landing.mkdir()
    (landing / "part-0").write_text("".join(f"error {i} timeout word{i % 37}\n" for i in range(20000)))  # ~0.5 MB
    hdfs_base = f"/it-fault-retry-{stamp}"
    run = PlannedRun(version=f"{period_id(start)}-p{stamp}", plan_id=f"p{stamp}", scenario="batch", name=f"faultwc@{stamp}",
                     racks=["/rack-b"], priority=1, order=0, planned_start=start, arrival=start, period_start=start,
                     period_end=start + timedelta(days=1),
                     job=RecurringJob(key="faultwc", program="wordcount", reduces=0, local_input=str(landing)),
                     jar=minicluster["examples_jar"], hdfs_input=f"{hdfs_base}/input", hdfs_output=f"{hdfs_base}/output",
                     period_lock=f"{hdfs_base}/plans")
    run_file = root / "run.json"
    run_file.write_text(run.model_dump_json())
    home, run_id = root / "home", f"corral_run/manual__{stamp}"

    child = _step(description, run_file, home, run_id)
    deadline, listed = time.monotonic() + 180, []
    while not listed and time.monotonic() < deadline and child.poll() is None:
        listed = cluster.rm.find(run.tags)
        time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    killed_rc = child.wait(timeout=30)
    stdout_killed = child.stdout.read() if child.stdout else ""
    after_kill = {"listed": [a.app_id for a in listed], "rc": killed_rc, "stdout": stdout_killed,
                  "record_exists": record_path(PipelineSettings(home=home), run.version, run.name).exists(),
                  "lock_left": cluster.hdfs.status(lock_path(run.period_lock, period_id(start)), strict=False) is not None}

    retries = []
    for _ in range(2):  # the retry, then one more run of the finished step
        retry = _step(description, run_file, home, run_id)
        out, err = retry.communicate(timeout=600)
        retries.append({"rc": retry.returncode, "stdout": out, "stderr": err})
    return {"cluster": cluster, "run": run, "home": home, "after_kill": after_kill, "retries": retries, "start": start}


def test_the_step_was_killed_after_its_application_was_listed_and_before_its_record(killed_then_retried: dict[str, Any]) -> None:
    after = killed_then_retried["after_kill"]
    assert len(after["listed"]) == 1, after
    assert after["rc"] == -signal.SIGKILL
    assert "recorded" not in after["stdout"] and not after["record_exists"]
    assert after["lock_left"]  # a killed holder cannot release: its retry re-enters the lock (same run id)


def test_the_retry_completes_with_no_second_application(killed_then_retried: dict[str, Any]) -> None:
    first = killed_then_retried["after_kill"]["listed"][0]
    for retry in killed_then_retried["retries"]:
        assert retry["rc"] == 0, retry["stderr"][-3000:]
        assert json.loads(retry["stdout"].splitlines()[0]) == {"submitted": first}
        assert "re-entered its lock" in retry["stderr"] or "taken by run" in retry["stderr"]
    apps = killed_then_retried["cluster"].rm.find(killed_then_retried["run"].tags)
    assert [a.app_id for a in apps] == [first]  # duplicates: 0
    assert apps[0].succeeded


def test_one_history_row_one_record_and_no_partial_output(killed_then_retried: dict[str, Any]) -> None:
    run, home, cluster = killed_then_retried["run"], killed_then_retried["home"], killed_then_retried["cluster"]
    app_id = killed_then_retried["after_kill"]["listed"][0]
    rows = [r for r in HistoryStore(home / "history").runs() if r.run_id == f"jobhistory:{job_id_of(app_id)}"]
    assert len(rows) == 1
    record = record_path(PipelineSettings(home=home), run.version, run.name)
    assert json.loads(record.read_text())["app_id"] == app_id and json.loads(record.read_text())["final_status"] == "SUCCEEDED"
    assert sorted(p.name for p in record.parent.iterdir()) == [record.name]  # no temporary file left
    assert not any(p.name.endswith(".tmp") for p in (home / "history").rglob("*"))
    output = cluster.hdfs.list(run.hdfs_output)
    assert "_SUCCESS" in output and "_temporary" not in output and any(n.startswith("part-m-") for n in output), output
    assert cluster.hdfs.status(lock_path(run.period_lock, period_id(killed_then_retried["start"])), strict=False) is None  # released
