"""The Airflow provider: example DAGs import cleanly, operators reject bad arguments by field, the trigger
waits on a real HTTP server shaped like the RM REST API, and a planned job's framework settings carry R_j."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import import_module
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "corral_yarn" / "airflow" / "example_dags"
os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="corral-airflow-"))
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"

from airflow.dag_processing.dagbag import DagBag  # noqa: E402  (after AIRFLOW_HOME is set)

from corral_yarn.airflow import get_provider_info  # noqa: E402
from corral_yarn.airflow.frameworks import job_settings  # noqa: E402
from airflow.providers.standard.triggers.temporal import DateTimeTrigger  # noqa: E402
from airflow.sdk.exceptions import TaskDeferred  # noqa: E402

from corral_yarn.airflow.operators import (CorralPlanOperator, CorralSubmitOperator, CorralUploadOperator,  # noqa: E402
                                           PlannedStartSensor, YarnApplicationSensor, _check_plan)
from corral_yarn.airflow.triggers import YarnApplicationTrigger  # noqa: E402
from corral_yarn.cluster import ApplicationFailedError, CorralTags  # noqa: E402
from corral_yarn.contracts import Plan, PlannedJob  # noqa: E402
from corral_yarn.errors import InputError  # noqa: E402
from corral_yarn.pipeline import demo_workload  # noqa: E402
from corral_yarn.pipeline.execution import PlannedRun  # noqa: E402

APP = "application_1700000000000_0007"


def _plan() -> Plan:
    job = PlannedJob(name="daily-report", racks=["/dc1/rack-b", "/dc1/rack-a"], priority=7, order=0, arrival_s=0, planned_start_s=0,
                     predicted_duration_s=1, planned_finish_s=1, input_bytes=1, cross_rack_shuffle_bytes=0)
    return Plan(plan_id="p42", planner_version="t", inputs_sha256="x", cluster_name="c", scenario="batch", objective="makespan",
                objective_s=1, lower_bound_s=None, gap=None, alpha_s_per_byte=0, jobs=[job], rack_input_bytes={},
                rack_input_cov=0, cross_rack_shuffle_bytes=0, all_racks_cross_rack_shuffle_bytes=0)


# --- example DAGs and provider info ---------------------------------------------------------------

def test_example_dags_import_without_errors_or_warnings() -> None:
    dagbag = DagBag(str(EXAMPLES))
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == {"example_corral_spark", "example_corral_operators"}
    assert not dagbag.dag_warnings
    spark = dagbag.dags["example_corral_spark"]
    assert spark.task_dict["corral_settings"].downstream_task_ids == {"daily_report"}
    ops = dagbag.dags["example_corral_operators"]
    assert [ops.task_dict[t].downstream_task_ids for t in ("plan", "planned_jobs", "upload", "submit")] == [
        {"planned_jobs"}, {"upload"}, {"submit"}, {"wait_for_job"}]
    assert all(t.doc_md for d in dagbag.dags.values() for t in d.tasks)


def test_example_dags_do_no_heavy_imports_at_top_level() -> None:
    code = (
        "import runpy, sys\n"
        f"for f in {sorted(str(p) for p in EXAMPLES.glob('example_*.py'))!r}: runpy.run_path(f)\n"
        "print('HEAVY:' + ','.join(m for m in ('corral_yarn.pipeline.tasks', 'corral_yarn.cluster', 'corral_yarn.planner', 'estimator',"
        " 'corral_yarn.airflow.triggers', 'pyspark', 'hdfs') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy(), check=True)
    assert [line for line in done.stdout.splitlines() if line.startswith("HEAVY:")] == ["HEAVY:"], done.stdout


def test_provider_entry_point_names_importable_modules() -> None:
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    target = pyproject["project"]["entry-points"]["apache_airflow_provider"]["provider_info"]
    module, _, function = target.partition(":")
    info = getattr(import_module(module), function)()
    assert info == get_provider_info() and info["package-name"] == pyproject["project"]["name"]
    for kind in ("hooks", "operators", "sensors", "triggers"):
        for entry in info[kind]:
            assert all(import_module(m) for m in entry["python-modules"])


# --- operators' argument validation ---------------------------------------------------------------

@pytest.mark.parametrize(("make", "message"), [
    (lambda: CorralPlanOperator(task_id="p", home="/h", scenario="nightly"), "CorralPlanOperator: scenario 'nightly' is not one of batch, online"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", slack=-1), "CorralPlanOperator: slack -1 must be a number >= 0"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", horizon="soon"), "CorralPlanOperator: horizon 'soon' is not a duration"),
    (lambda: CorralPlanOperator(task_id="p", home=""), "CorralPlanOperator: home is empty"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", period_start="tomorrow"), "CorralPlanOperator: period_start 'tomorrow': not an ISO"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", oversubscription=1), "CorralPlanOperator: oversubscription 1 must be a number > 1"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", nic_gbps="fast"), "CorralPlanOperator: nic_gbps 'fast' must be a number > 0"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", task_memory_mb=True), "CorralPlanOperator: task_memory_mb True must be an integer"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", interference=0), "CorralPlanOperator: interference 0 must be false, true or a number > 0"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", interference="often"), "CorralPlanOperator: interference 'often' must be false, true"),
    (lambda: CorralPlanOperator(task_id="p", home="/h", sharing="shared"), "CorralPlanOperator: sharing 'shared' is not one of whole-rack, slots"),
    (lambda: CorralUploadOperator(task_id="u", run={"name": "j"}), "CorralUploadOperator: run lacks racks, priority"),
    (lambda: CorralSubmitOperator(task_id="s", run={"racks": []}), "CorralSubmitOperator: run lacks name, priority"),
    (lambda: YarnApplicationSensor(task_id="w", application_id="job_1_1"), "YarnApplicationSensor: application_id 'job_1_1' is not a YARN id"),
    (lambda: YarnApplicationSensor(task_id="w", application_id=APP, poll_interval=0), "YarnApplicationSensor: poll_interval 0 must be"),
    (lambda: YarnApplicationSensor(task_id="w", application_id=APP, timeout=-5), "YarnApplicationSensor: timeout -5 must be"),
])
def test_operator_arguments_are_checked_by_field(make: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        make()  # type: ignore[operator]
    assert message in str(raised.value)


def test_valid_arguments_and_templates_are_accepted() -> None:
    assert CorralPlanOperator(task_id="p", home="{{ params.home }}", horizon="12h", scenario="online").scenario == "online"
    assert YarnApplicationSensor(task_id="w", application_id="{{ ti.xcom_pull('submit')['app_id'] }}").poll_interval == 10.0


def test_rendered_plan_arguments_are_checked_and_converted_before_any_work() -> None:
    plan = CorralPlanOperator(task_id="p", home="{{ params.home }}", slack="{{ params.slack }}", period_start="{{ params.period_start }}")
    plan.home, plan.slack, plan.period_start = "/h", "0.25", "2026-11-25 00:00:00"  # as Airflow renders them: text
    assert _check_plan("P", {"slack": plan.slack, "period_start": plan.period_start}) == {
        "slack": 0.25, "period_start": "2026-11-25T00:00:00+00:00"}  # the period travels as an ISO string, never a datetime
    assert _check_plan("P", {"interference": "True", "node_classes_file": "classes.json"}) == {"interference": True, "node_classes_file": "classes.json"}
    assert _check_plan("P", {"interference": "False"})["interference"] is False
    assert _check_plan("P", {"interference": "0.3"})["interference"] == 0.3
    assert _check_plan("P", {"sharing": "slots"}) == {"sharing": "slots"}
    assert CorralPlanOperator(task_id="p", home="/h").sharing == "whole-rack"  # the thesis's planner unless asked
    plan.slack = "-1"
    with pytest.raises(InputError, match="CorralPlanOperator: slack '-1' must be a number >= 0"):
        plan.execute({})  # raises before it touches the cluster (no Connection is set here)


def test_yarn_sensor_defers_at_once_to_the_trigger(monkeypatch: pytest.MonkeyPatch) -> None:
    """No poll on the worker: execute hands the wait to the triggerer straight away (no worker slot held while it runs)."""
    monkeypatch.setenv("AIRFLOW_CONN_CORRAL_RESOURCEMANAGER", json.dumps({"conn_type": "http", "host": "127.0.0.1", "port": 1}))
    with pytest.raises(TaskDeferred) as deferred:
        YarnApplicationSensor(task_id="w", application_id=APP, poll_interval=3).execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, YarnApplicationTrigger) and (trigger.rm_url, trigger.app_id) == ("http://127.0.0.1:1", APP)
    assert deferred.value.method_name == "execute_complete"


def _run_record(scenario: str, planned_start: datetime) -> dict[str, object]:
    entry = demo_workload.demo_catalog(Path("/h"), "/j.jar").jobs[0]
    return PlannedRun(version="v", plan_id="p", scenario=scenario, name="j", racks=["/rack-a"], priority=1, order=0,
                      planned_start=planned_start, arrival=planned_start, period_start=planned_start,
                      period_end=planned_start + timedelta(days=1), job=entry, jar="/j.jar", hdfs_input="/i",
                      hdfs_output="/o").model_dump(mode="json")


def test_planned_start_sensor_defers_until_tj_online_and_passes_at_once_in_batch() -> None:
    later = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    assert PlannedStartSensor(task_id="s", run=_run_record("batch", later)).execute({}) is None
    assert PlannedStartSensor(task_id="s", run=_run_record("online", later - timedelta(hours=3))).execute({}) is None
    with pytest.raises(TaskDeferred) as deferred:
        PlannedStartSensor(task_id="s", run=_run_record("online", later)).execute({})
    assert isinstance(deferred.value.trigger, DateTimeTrigger) and deferred.value.trigger.moment == later


def test_sensor_result_fails_unless_the_application_succeeded() -> None:
    sensor = YarnApplicationSensor(task_id="w", application_id=APP)
    ended = {"status": "ended", "app_id": APP, "state": "FINISHED", "final_status": "SUCCEEDED", "diagnostics": ""}
    assert sensor.execute_complete({}, ended) == {"app_id": APP, "state": "FINISHED", "final_status": "SUCCEEDED"}
    with pytest.raises(ApplicationFailedError, match="KILLED"):
        sensor.execute_complete({}, {**ended, "state": "KILLED", "final_status": "KILLED"})
    with pytest.raises(ApplicationFailedError, match="knows no application"):
        sensor.execute_complete({}, {"status": "error", "app_id": APP, "message": "the RM knows no application"})


# --- the trigger against a real local HTTP server -------------------------------------------------

class FakeRm:
    """An HTTP server on 127.0.0.1 answering GET /ws/v1/cluster/apps/<id> from a script of (status, state)."""

    def __init__(self, script: list[tuple[int, str]], ha_states: list[str] | None = None) -> None:
        self.script, self.requests = list(script), []
        self.ha_states = list(ha_states or [])  # GET /ws/v1/cluster/info's haState, in turn (none: scripted as any path)
        rm = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.endswith("/info") and rm.ha_states:
                    state = rm.ha_states.pop(0) if len(rm.ha_states) > 1 else rm.ha_states[0]
                    body = json.dumps({"clusterInfo": {"haState": state}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                rm.requests.append(self.path)
                status, state = rm.script.pop(0) if len(rm.script) > 1 else rm.script[0]
                body = json.dumps({"app": {"id": APP, "state": state, "finalStatus": "SUCCEEDED" if state == "FINISHED" else "UNDEFINED",
                                           "diagnostics": ""}} if status == 200 else {"RemoteException": {"message": state}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def fake_rm(request: pytest.FixtureRequest) -> Iterator[FakeRm]:
    rm = FakeRm(*request.param) if isinstance(request.param, tuple) else FakeRm(request.param)
    thread = threading.Thread(target=rm.server.serve_forever, daemon=True)
    thread.start()
    yield rm
    rm.server.shutdown()
    rm.server.server_close()


async def _first_event(trigger: YarnApplicationTrigger) -> dict[str, object]:
    async for event in trigger.run():
        return event.payload
    raise AssertionError("the trigger ended without an event")


@pytest.mark.parametrize("fake_rm", [[(200, "ACCEPTED"), (200, "RUNNING"), (503, "busy"), (200, "FINISHED")]], indirect=True)
def test_trigger_polls_until_the_application_ends_through_rm_errors(fake_rm: FakeRm) -> None:
    payload = asyncio.run(_first_event(YarnApplicationTrigger(fake_rm.url, APP, poll_interval_s=0.01)))
    assert payload == {"status": "ended", "app_id": APP, "state": "FINISHED", "final_status": "SUCCEEDED", "diagnostics": ""}
    assert fake_rm.requests == [f"/ws/v1/cluster/apps/{APP}"] * 4


@pytest.mark.parametrize("fake_rm", [[(404, "not found")]], indirect=True)
def test_trigger_reports_an_unknown_application(fake_rm: FakeRm) -> None:
    payload = asyncio.run(_first_event(YarnApplicationTrigger(fake_rm.url, APP, poll_interval_s=0.01)))
    assert payload["status"] == "error" and f"knows no application {APP}" in str(payload["message"])


@pytest.mark.parametrize("fake_rm", [([(200, "RUNNING"), (404, "not found"), (404, "not found"), (200, "FINISHED")],
                                      ["INITIALIZING", "ACTIVE"])], indirect=True)
def test_trigger_waits_through_a_restarting_rm_that_does_not_know_the_application_yet(fake_rm: FakeRm) -> None:
    """A restarted RM answers 404 until it has recovered its applications (haState not ACTIVE yet): poll
    again. The second 404 comes from an ACTIVE RM, so the trigger then reports the application unknown."""
    payload = asyncio.run(_first_event(YarnApplicationTrigger(fake_rm.url, APP, poll_interval_s=0.01)))
    assert payload["status"] == "error" and f"knows no application {APP}" in str(payload["message"])
    assert len(fake_rm.requests) == 3


@pytest.mark.parametrize("fake_rm", [([(200, "RUNNING"), (404, "not found"), (200, "RUNNING"), (200, "FINISHED")],
                                      ["INITIALIZING"])], indirect=True)
def test_trigger_ends_with_the_application_after_an_rm_restart(fake_rm: FakeRm) -> None:
    payload = asyncio.run(_first_event(YarnApplicationTrigger(fake_rm.url, APP, poll_interval_s=0.01)))
    assert payload["status"] == "ended" and payload["state"] == "FINISHED"


@pytest.mark.parametrize("fake_rm", [([(503, "restarting")], None)], indirect=True)
def test_trigger_gives_up_after_an_outage_longer_than_its_bound(fake_rm: FakeRm) -> None:
    payload = asyncio.run(_first_event(YarnApplicationTrigger(fake_rm.url, APP, poll_interval_s=0.01, outage_s=0.2)))
    assert payload["status"] == "error" and "could not report" in str(payload["message"])


def test_trigger_serializes_to_what_rebuilds_it() -> None:
    path, kwargs = YarnApplicationTrigger("http://rm:8088/", APP, 5.0, outage_s=30.0).serialize()
    module, _, name = path.rpartition(".")
    rebuilt = getattr(import_module(module), name)(**kwargs)
    assert (rebuilt.rm_url, rebuilt.app_id, rebuilt.poll_interval_s, rebuilt.outage_s) == ("http://rm:8088", APP, 5.0, 30.0)


# --- a planned job's settings for the user's own framework ------------------------------------------

def test_spark_conf_carries_rj_priority_queue_and_recurring_key() -> None:
    conf = job_settings(_plan(), "daily-report", queue="etl", recurring_key="Daily-Report").spark_conf()
    assert conf["spark.yarn.priority"] == "7" and conf["spark.yarn.queue"] == "etl"
    tags = conf["spark.yarn.tags"].split(",")
    assert CorralTags.decode(tags) == CorralTags("p42", "daily-report", ("/dc1/rack-a", "/dc1/rack-b"), key="daily-report")
    assert "corral-key:daily-report" in tags
    dated = job_settings(_plan(), "daily-report", recurring_key="daily-report", period_start=datetime(2026, 11, 25, tzinfo=UTC))
    assert CorralTags.decode(list(dated.tags)).period == "20261125t000000z"


def test_hadoop_jar_args_and_tez_conf_carry_the_same_tags() -> None:
    settings = job_settings(_plan(), "daily-report")
    args = settings.hadoop_args()
    assert args[0::2] == ["-D", "-D"]
    assert dict(a.split("=", 1) for a in args[1::2]) == {"mapreduce.job.tags": ",".join(settings.tags), "mapreduce.job.priority": "7"}
    assert settings.tez_conf() == {"tez.application.tags": ",".join(settings.tags)}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"job": "nightly"}, "plan p42 has no job 'nightly'"),
    ({"job": "daily-report", "recurring_key": "a,b"}, "recurring key 'a,b' cannot go into a YARN tag"),
    ({"job": "daily-report", "queue": "a b"}, "queue 'a b' is not a YARN queue name"),
])
def test_bad_job_settings_name_the_field(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        job_settings(_plan(), **kwargs)
