"""``airflow dags test example_corral_operators`` on the embedded cluster: the provider's operators in a user's
DAG plan two recurring jobs, upload their input into R_j, submit them with R_j and p_j and wait for them through
the deferrable sensor (the trigger runs in line, as a triggerer would run it); each job ran inside its R_j (a
strict subset of the racks), was submitted once, and XCom holds only references and small JSON records. The
trigger polls every 2 s (``$CORRAL_PIPELINE_POLL_INTERVAL_S``, docs/pipeline.md) instead of 10 s.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.dag_params import POLL_INTERVAL_ENV
from corral_yarn.pipeline.demo import DemoPaths, LocalAirflow, prepare, today
from corral_yarn.pipeline.planning import load_published

pytestmark = pytest.mark.integration
EXAMPLES = Path(str(resources.files("corral_yarn") / "airflow" / "example_dags"))
# The two smallest bundled jobs; alone, a job is planned on every rack, together each gets a part of them.
JOBS = ("queries-wordcount", "events-sort")
XCOM_LIMIT = 4096  # bytes: a reference or a small record, never a plan or a data set


@pytest.fixture(scope="module")
def operators_dag(minicluster: dict[str, Any], migrated_airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("example-dags")
    prefix = f"/it-example-dags-{random.randrange(10**6)}"
    paths = DemoPaths(airflow_home=root / "airflow", pipeline_home=root / "pipeline", plans_dir=f"{prefix}/plans",
                      runs_dir=f"{prefix}/runs", dags_folder=EXAMPLES)
    start = today()
    settings = prepare(paths, minicluster, start, keys=JOBS)
    airflow = LocalAirflow(paths, minicluster)
    paths.airflow_home.mkdir(parents=True)
    shutil.copy(migrated_airflow_db, paths.airflow_home / "airflow.db")
    began = time.monotonic()
    with pytest.MonkeyPatch.context() as env:  # the airflow command inherits this environment
        env.setenv(POLL_INTERVAL_ENV, "2")
        airflow.test_dag("example_corral_operators", {"home": str(settings.home), "plans_dir": settings.plans_dir,
                                                      "runs_dir": settings.runs_dir}, logical_date=start)
    print(f"airflow dags test example_corral_operators: {time.monotonic() - began:.1f} s")  # the figure docs/pipeline.md quotes
    cluster = Cluster.from_description(minicluster, progress=False)
    published = load_published(cluster, settings)
    runs, unknown = execution.planned_runs(published, Catalog.load(settings.catalog), settings)
    return {"cluster": cluster, "runs": runs, "unknown": unknown, "paths": paths, "plans_dir": settings.plans_dir,
            "log": (paths.logs / "example_corral_operators.log").read_text(errors="replace")}


def test_the_planned_jobs_ran_once_inside_their_racks(operators_dag: dict[str, Any]) -> None:
    cluster, runs = operators_dag["cluster"], operators_dag["runs"]
    assert operators_dag["unknown"] == [] and sorted(r.job.key for r in runs) == sorted(JOBS)
    racks = cluster.topology().racks
    for run in runs:
        assert len(run.racks) < len(racks), f"{run.name} planned on every rack: its locality would prove nothing"
        [app] = cluster.rm.find(run.tags)  # one application for this plan and job: submitted once
        assert (app.state, app.final_status, app.priority) == ("FINISHED", "SUCCEEDED", run.priority)
        assert sorted(app.corral.racks) == sorted(r.lower() for r in run.racks)
        locality = execution.verify_locality(cluster, run, app.app_id)
        print(f"{run.name} on {run.racks}: {locality.containers_in_racks}/{locality.containers} containers, "
              f"{locality.blocks_with_replica_in_racks}/{locality.blocks} blocks inside R_j")
        assert locality.containers >= 3 and locality.containers_in_racks == locality.containers
        assert locality.blocks >= 1 and locality.blocks_with_replica_in_racks == locality.blocks


def test_the_wait_was_deferred_to_the_trigger(operators_dag: dict[str, Any]) -> None:
    """The sensor's task instance went to DEFERRED (its worker released) and the trigger polled the RM until the end."""
    log = operators_dag["log"]
    deferred = [line for line in log.splitlines() if "Pausing task as DEFERRED" in line]
    assert len(deferred) == len(JOBS) and all("task_id=wait_for_job" in line for line in deferred), deferred
    assert log.count("[DAG TEST] Trigger completed") == len(JOBS)


def test_the_run_logged_no_warning_of_ours(operators_dag: dict[str, Any]) -> None:
    ours = [line for line in operators_dag["log"].splitlines() if "[warning" in line and "corral_yarn" in line]
    assert ours == []


def test_xcom_holds_references_and_small_json_records(operators_dag: dict[str, Any]) -> None:
    with sqlite3.connect(operators_dag["paths"].airflow_home / "airflow.db") as db:
        rows = db.execute("SELECT task_id, key, value FROM xcom WHERE dag_id = 'example_corral_operators'").fetchall()
    values = {(task, key): json.loads(value) for task, key, value in rows}
    assert {("plan", "return_value"), ("planned_jobs", "return_value"), ("submit", "app_id")} <= set(values)
    version = operators_dag["runs"][0].version
    assert values[("plan", "return_value")] == f"{operators_dag['plans_dir']}/{version}"  # a reference
    for (task, key), value in values.items():
        text = json.dumps(value)
        assert len(text) < XCOM_LIMIT, (task, key)
        assert "__classname__" not in text and "__type" not in text, (task, key, text[:300])  # JSON-native, no serialized objects
    for record in values[("planned_jobs", "return_value")]:
        assert isinstance(record["period_start"], str)  # the planning period travels as ISO text, never as a datetime object
        assert datetime.fromisoformat(record["period_start"]) == today()
