"""Fault: two pipeline runs of the same period at once. The period lock on HDFS (pipeline.lock, taken by
``CorralPlanOperator`` and corral_run's ``planned_jobs``) lets one proceed while the other waits, with
progress in its log, or fails naming the holder; a retry of the holding run re-enters it; a stale lock is
broken; an operator sees and breaks locks with ``corral pipeline-lock`` (docs/pipeline.md, "One run per period").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cli import main
from corral_yarn.cluster import Cluster
from corral_yarn.pipeline.lock import Holder, PeriodLock, lock_path

pytestmark = pytest.mark.integration
PERIOD_START = datetime(2026, 11, 25, tzinfo=UTC)

# One run of a period: hold its lock for HOLD_S seconds of work, print when it held it.
RUN = """
import json, logging, sys, time
from datetime import datetime
from corral_yarn.cluster import Cluster
from corral_yarn.pipeline.lock import PeriodLock, holding

logging.basicConfig(level=logging.INFO, stream=sys.stderr)
description, plans_dir, run_id, wait_s, hold_s, go = sys.argv[1:7]
hdfs = Cluster.from_description(description, progress=False).hdfs
hdfs.status("/")
while time.time() < float(go):  # both runs start together
    time.sleep(0.01)
with holding(PeriodLock.of(hdfs, plans_dir, datetime.fromisoformat("2026-11-25T00:00:00+00:00"), run_id, wait_s=float(wait_s), poll_s=0.5)):
    began = time.time()
    time.sleep(float(hold_s))
print(json.dumps({"run_id": run_id, "held": [began, time.time()]}), flush=True)
"""


@pytest.fixture(scope="module")
def where(minicluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    description = tmp_path_factory.mktemp("fault-lock") / "cluster.json"
    description.write_text(json.dumps(minicluster))
    return {"description": description, "cluster": Cluster.from_description(minicluster, progress=False),
            "plans_dir": f"/it-fault-lock-{time.time_ns() % 10**9}/plans"}


def _runs(where: dict[str, Any], plans_dir: str, specs: list[tuple[str, float, float]]) -> list[subprocess.CompletedProcess[str]]:
    """Start one child per (run id, wait_s, hold_s) at the same instant; their results."""
    go = time.time() + 8.0  # after every child has imported and reached the NameNode
    children = [subprocess.Popen([sys.executable, "-c", RUN, str(where["description"]), plans_dir, run_id, str(wait), str(hold), str(go)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
                for run_id, wait, hold in specs]
    outputs = [c.communicate(timeout=120) for c in children]
    return [subprocess.CompletedProcess(c.args, c.returncode, *out) for c, out in zip(children, outputs, strict=True)]


def test_two_runs_at_once_one_proceeds_the_other_waits_for_it(where: dict[str, Any]) -> None:
    plans_dir = where["plans_dir"] + "-wait"
    results = _runs(where, plans_dir, [("corral_run/a", 60, 4), ("corral_run/b", 60, 4)])
    assert [r.returncode for r in results] == [0, 0], [r.stderr[-2000:] for r in results]
    held = sorted(tuple(json.loads(r.stdout)["held"]) + (json.loads(r.stdout)["run_id"],) for r in results)
    assert held[0][1] <= held[1][0], held  # never both at once
    first, second = held[0][2], held[1][2]
    waiter = next(r for r in results if json.loads(r.stdout)["run_id"] == second)
    assert f"is held by run '{first}'" in waiter.stderr and "waiting (" in waiter.stderr  # progress in its log
    assert where["cluster"].hdfs.status(lock_path(plans_dir, "20261125T000000Z"), strict=False) is None  # released


def test_a_run_that_cannot_wait_fails_naming_the_holder(where: dict[str, Any]) -> None:
    plans_dir = where["plans_dir"] + "-fail"
    holder = PeriodLock.of(where["cluster"].hdfs, plans_dir, PERIOD_START, "corral_plan/scheduled__first")
    held = holder.acquire()
    try:
        [result] = _runs(where, plans_dir, [("corral_plan/manual__second", 2, 0)])
    finally:
        assert holder.release()
    assert result.returncode != 0
    assert "PeriodLockedError: period 20261125T000000Z is being run by run 'corral_plan/scheduled__first'" in result.stderr
    assert f"{held.owner}@{held.host}, pid {held.pid}" in result.stderr and "corral pipeline-lock break 20261125T000000Z" in result.stderr


def test_a_retry_of_the_holding_run_re_enters_its_lock(where: dict[str, Any]) -> None:
    plans_dir = where["plans_dir"] + "-retry"
    PeriodLock.of(where["cluster"].hdfs, plans_dir, PERIOD_START, "corral_run/manual__1").acquire()  # its task then dies
    [retry] = _runs(where, plans_dir, [("corral_run/manual__1", 0, 0)])  # the same run id, no wait allowed
    assert retry.returncode == 0, retry.stderr[-2000:]
    assert "run 'corral_run/manual__1' re-entered its lock" in retry.stderr
    assert "lock released by run 'corral_run/manual__1'" in retry.stderr
    assert where["cluster"].hdfs.status(lock_path(plans_dir, "20261125T000000Z"), strict=False) is None


def test_a_stale_lock_is_broken_and_an_operator_sees_and_breaks_locks(where: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    hdfs, plans_dir = where["cluster"].hdfs, where["plans_dir"] + "-stale"
    old = datetime.now(UTC) - timedelta(hours=8)
    gone = Holder(period="20261125T000000Z", run_id="corral_run/gone", owner="etl", host="worker-9", pid=4242, acquired=old, heartbeat=old)
    assert hdfs.create_exclusive(lock_path(plans_dir, gone.period), gone.model_dump_json().encode())
    assert main(["pipeline-lock", "show", "--cluster", str(where["description"]), "--plans-dir", plans_dir]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert (shown["run_id"], shown["stale"], shown["host"], shown["pid"]) == ("corral_run/gone", True, "worker-9", 4242)

    taker = PeriodLock.of(hdfs, plans_dir, PERIOD_START, "corral_run/next", wait_s=0)
    assert taker.acquire().run_id == "corral_run/next"  # broke the stale one
    assert main(["pipeline-lock", "break", "2026-11-25", "--run-id", "corral_run/other", "--cluster", str(where["description"]),
                 "--plans-dir", plans_dir]) == 2
    assert "held by run 'corral_run/next'" in capsys.readouterr().err
    assert main(["pipeline-lock", "break", "20261125T000000Z", "--cluster", str(where["description"]), "--plans-dir", plans_dir]) == 0
    assert json.loads(capsys.readouterr().out)["holder"]["run_id"] == "corral_run/next"
    assert not taker.release()  # nothing left to release
    assert main(["pipeline-lock", "show", "--cluster", str(where["description"]), "--plans-dir", plans_dir]) == 0
    assert json.loads(capsys.readouterr().out) == []
