"""The DAG files import without errors, without heavy imports, and wire the pipeline as docs/pipeline.md says."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest

DAGS = Path(__file__).resolve().parents[2] / "corral_yarn" / "airflow" / "dags"
os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="corral-airflow-"))
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)

from airflow.dag_processing.dagbag import DagBag  # noqa: E402  (after AIRFLOW_HOME is set)
from airflow.sdk import TriggerRule  # noqa: E402
from airflow.sdk.exceptions import ParamValidationError  # noqa: E402

from corral_yarn.errors import InputError  # noqa: E402
from corral_yarn.pipeline.dag_params import POLL_INTERVAL_ENV, RETRY_DELAY_ENV, dag_defaults, poll_interval_s  # noqa: E402


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


def test_planning_dag_is_one_plan_operator_taking_every_param(dagbag: DagBag) -> None:
    dag = dagbag.dags["corral_plan"]
    [plan] = dag.tasks
    assert (plan.task_id, type(plan).__name__) == ("plan", "CorralPlanOperator")
    assert [o.name for o in plan.outlets] == ["corral_published_plan"]
    planning = {"horizon", "scenario", "slack", "period_start", "home", "plans_dir", "nic_gbps", "disk_mbps", "oversubscription",
                "task_memory_mb", "node_classes_file", "interference", "sharing"}
    assert planning <= set(dag.params.keys())
    assert {field: getattr(plan, field) for field in planning} == {field: f"{{{{ params.{field} }}}}" for field in planning}
    assert dag.params["scenario"] == "batch"
    assert (dag.params["node_classes_file"], dag.params["interference"]) == ("", False)  # identical machines, no interference
    assert dag.params["sharing"] == "whole-rack"  # the thesis's planner unless asked


def test_the_sharing_param_offers_corral_plans_choices() -> None:
    from corral_yarn.pipeline.dag_params import planning_params
    from corral_yarn.planner.schedule import SHARING

    sharing = planning_params()["sharing"]
    assert sharing.schema["enum"] == list(SHARING) and "corral plan --sharing slots" in sharing.description


def test_the_interference_params_default_f_is_the_estimators() -> None:
    from corral_yarn.pipeline.dag_params import planning_params
    from estimator.interference import THRESHOLD

    assert f"true (F = {THRESHOLD:g}," in planning_params()["interference"].description


def test_run_dag_maps_one_task_group_per_job_on_the_provider_operators(dagbag: DagBag) -> None:
    dag = dagbag.dags["corral_run"]
    chain = ["upload", "wait_for_start", "submit", "wait_for_job", "ingest_history", "verify_locality"]
    for before, after in zip(chain, chain[1:]):
        assert f"run_job.{after}" in dag.task_dict[f"run_job.{before}"].downstream_task_ids
    assert dag.task_dict["planned_jobs"].downstream_task_ids >= {"run_job.upload", "summarize"}
    kinds = {name: type(dag.task_dict[f"run_job.{name}"]).__name__ for name in chain[:4]}
    assert kinds == {"upload": "CorralUploadOperator", "wait_for_start": "PlannedStartSensor", "submit": "CorralSubmitOperator",
                     "wait_for_job": "YarnApplicationSensor"}
    assert dag.task_dict["run_job.wait_for_job"].retries == 0
    assert not any(getattr(t, "mode", None) == "reschedule" for t in dag.tasks)  # waits defer to the triggerer instead
    assert all(dag.task_dict[f"run_job.{t}"].get_closest_mapped_task_group() is not None for t in chain)
    assert dag.task_dict["summarize"].trigger_rule == TriggerRule.ALL_DONE
    assert "plan_version" in dag.params.keys()


def test_every_dag_and_task_is_documented(dagbag: DagBag) -> None:
    assert all(dag.doc_md for dag in dagbag.dags.values())
    undocumented = [f"{dag.dag_id}.{t.task_id}" for dag in dagbag.dags.values() for t in dag.tasks if not t.doc_md]
    assert undocumented == []


def test_the_dags_import_with_no_warnings() -> None:
    """A fresh interpreter parses the DAG folder: no DagBag warning, and no Python warning raised from our code."""
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    from airflow.dag_processing.dagbag import DagBag\n"
        f"    bag = DagBag({str(DAGS)!r})\n"
        "ours = [f'{w.filename}:{w.lineno}: {w.message}' for w in caught if 'corral_yarn' in w.filename]\n"
        "print('ERRORS:' + repr(bag.import_errors)); print('DAG-WARNINGS:' + repr(bag.dag_warnings)); print('OURS:' + repr(ours))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy(), check=True)
    lines = [line for line in done.stdout.splitlines() if line.split(":")[0] in ("ERRORS", "DAG-WARNINGS", "OURS")]
    assert lines == ["ERRORS:{}", "DAG-WARNINGS:set()", "OURS:[]"], done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize(("dag_id", "conf", "field"), [
    ("corral_plan", {"scenario": "nightly"}, "scenario"),
    ("corral_plan", {"slack": -1}, "slack"),
    ("corral_plan", {"oversubscription": 1}, "oversubscription"),
    ("corral_plan", {"task_memory_mb": 64}, "task_memory_mb"),
    ("corral_plan", {"horizon": "soon"}, "horizon"),
    ("corral_plan", {"period_start": "tomorrow"}, "period_start"),
    ("corral_plan", {"plans_dir": "plans"}, "plans_dir"),
    ("corral_plan", {"interference": 0}, "interference"),
    ("corral_plan", {"interference": "yes"}, "interference"),
    ("corral_plan", {"node_classes_file": 7}, "node_classes_file"),
    ("corral_plan", {"sharing": "shared"}, "sharing"),
    ("corral_run", {"plan_version": ""}, "plan_version"),
])
def test_params_are_validated_before_a_run(dagbag: DagBag, dag_id: str, conf: dict[str, object], field: str) -> None:
    from airflow.sdk.definitions.param import ParamsDict

    params = ParamsDict(dagbag.dags[dag_id].params)
    params.validate()  # the defaults are valid
    with pytest.raises(ParamValidationError, match=f"param {field}"):
        params.update(conf)


def test_endpoints_are_airflow_connections_not_literals() -> None:
    text = "".join(p.read_text() for p in DAGS.glob("*.py"))
    assert "http://" not in text and "hdfs://" not in text and "localhost" not in text


# --- the timings read from the environment when the DAG files are parsed (docs/pipeline.md, "Params") ----------------

def test_unset_timings_keep_each_dags_own_retry_delay_and_the_10_s_poll(dagbag: DagBag) -> None:
    assert RETRY_DELAY_ENV not in os.environ and POLL_INTERVAL_ENV not in os.environ
    delays = {dag_id: {t.retry_delay for t in dag.tasks} for dag_id, dag in dagbag.dags.items()}
    assert delays == {"corral_plan": {timedelta(seconds=30)}, "corral_run": {timedelta(seconds=20)}}
    assert {t.retries for t in dagbag.dags["corral_plan"].tasks} == {2}
    assert dagbag.dags["corral_run"].task_dict["run_job.wait_for_job"].poll_interval == 10.0


def test_the_environment_sets_every_tasks_retry_delay_and_the_triggers_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RETRY_DELAY_ENV, "2")
    monkeypatch.setenv(POLL_INTERVAL_ENV, " 1.5 ")
    bag = DagBag(str(DAGS))
    assert bag.import_errors == {}
    assert {t.retry_delay for dag in bag.dags.values() for t in dag.tasks} == {timedelta(seconds=2)}
    assert {t.retries for t in bag.dags["corral_plan"].tasks} == {2}  # the same retries, sooner
    wait = bag.dags["corral_run"].task_dict["run_job.wait_for_job"]
    assert (wait.poll_interval, wait.retries) == (1.5, 0)


@pytest.mark.parametrize(("name", "value", "message"), [
    (RETRY_DELAY_ENV, "0", "CORRAL_PIPELINE_RETRY_DELAY_S: '0' must be a number of seconds > 0 and at most 1800"),
    (RETRY_DELAY_ENV, "-5", "CORRAL_PIPELINE_RETRY_DELAY_S: '-5' must be a number of seconds > 0 and at most 1800"),
    (RETRY_DELAY_ENV, "1801", "CORRAL_PIPELINE_RETRY_DELAY_S: '1801' must be a number of seconds > 0 and at most 1800"),
    (RETRY_DELAY_ENV, "20s", "CORRAL_PIPELINE_RETRY_DELAY_S: '20s' must be a number of seconds"),
    (POLL_INTERVAL_ENV, "nan", "CORRAL_PIPELINE_POLL_INTERVAL_S: 'nan' must be a number of seconds > 0"),
    (POLL_INTERVAL_ENV, "inf", "CORRAL_PIPELINE_POLL_INTERVAL_S: 'inf' must be a number of seconds > 0"),
    (POLL_INTERVAL_ENV, "0", "CORRAL_PIPELINE_POLL_INTERVAL_S: '0' must be a number of seconds > 0"),
])
def test_a_bad_timing_is_refused_naming_its_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as raised:
        dag_defaults(20) if name == RETRY_DELAY_ENV else poll_interval_s()
    assert str(raised.value).startswith(message) and raised.value.field == name


def test_a_bad_timing_fails_the_dag_files_import_naming_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RETRY_DELAY_ENV, "soon")
    bag = DagBag(str(DAGS))
    assert sorted(Path(f).name for f in bag.import_errors) == ["corral_plan.py", "corral_run.py"]
    assert all("CORRAL_PIPELINE_RETRY_DELAY_S: 'soon' must be a number of seconds" in e for e in bag.import_errors.values())


def test_an_empty_timing_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RETRY_DELAY_ENV, "")
    monkeypatch.setenv(POLL_INTERVAL_ENV, "  ")
    assert (dag_defaults(20)["default_args"]["retry_delay"], poll_interval_s()) == (timedelta(seconds=20), 10.0)
