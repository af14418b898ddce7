"""The DAG files import without errors, without heavy imports, and wire the pipeline as docs/pipeline.md says."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

DAGS = Path(__file__).resolve().parents[2] / "corral_yarn" / "airflow" / "dags"
os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="corral-airflow-"))
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)

from airflow.dag_processing.dagbag import DagBag  # noqa: E402  (after AIRFLOW_HOME is set)
from airflow.sdk import TriggerRule  # noqa: E402


@pytest.fixture(scope="module")
def dagbag() -> DagBag:
    return DagBag(str(DAGS))


def test_both_dags_import_without_errors(dagbag: DagBag) -> None:
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == {"corral_plan", "corral_run"}


def test_dag_files_do_no_heavy_imports_at_top_level() -> None:
    code = (
        "import runpy, sys\n"
        f"for f in {sorted(str(p) for p in DAGS.glob('*.py'))!r}: runpy.run_path(f)\n"
        "heavy = [m for m in ('corral_yarn.pipeline.tasks', 'corral_yarn.cluster', 'corral_yarn.planner', 'estimator', 'pyarrow',"
        " 'matplotlib', 'scipy', 'hdfs') if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy(), check=True)
    assert [line for line in done.stdout.splitlines() if line.startswith("HEAVY:")] == ["HEAVY:"], done.stdout


def test_planning_dag_runs_ingest_estimate_plan_report_publish_in_order(dagbag: DagBag) -> None:
    dag = dagbag.dags["corral_plan"]
    assert dag.task_dict["ingest_history"].downstream_task_ids == {"estimate"}
    assert dag.task_dict["estimate"].downstream_task_ids == {"plan", "report", "publish"}
    assert dag.task_dict["plan"].downstream_task_ids == {"report"}
    assert dag.task_dict["report"].downstream_task_ids == {"publish"}
    assert [o.name for o in dag.task_dict["publish"].outlets] == ["corral_published_plan"]
    assert {"horizon", "scenario", "slack", "period_start", "home", "plans_dir"} <= set(dag.params.keys())
    assert dag.params["scenario"] == "batch"


def test_run_dag_maps_one_task_group_per_job_with_reschedule_sensors(dagbag: DagBag) -> None:
    dag = dagbag.dags["corral_run"]
    chain = ["upload", "wait_for_start", "submit", "wait_for_job", "ingest_history", "verify_locality"]
    for before, after in zip(chain, chain[1:]):
        assert dag.task_dict[f"run_job.{before}"].downstream_task_ids == {f"run_job.{after}"}
    assert dag.task_dict["planned_jobs"].downstream_task_ids >= {"run_job.upload", "summarize"}
    for name in ("wait_for_start", "wait_for_job"):
        sensor = dag.task_dict[f"run_job.{name}"]
        assert sensor.mode == "reschedule"
    assert all(dag.task_dict[f"run_job.{t}"].get_closest_mapped_task_group() is not None for t in chain)
    assert dag.task_dict["summarize"].trigger_rule == TriggerRule.ALL_DONE
    assert "plan_version" in dag.params.keys()


def test_endpoints_are_airflow_connections_not_literals() -> None:
    text = "".join(p.read_text() for p in DAGS.glob("*.py"))
    assert "http://" not in text and "hdfs://" not in text and "localhost" not in text
