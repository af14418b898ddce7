"""Thin Corral operators over :mod:`corral_yarn.pipeline.tasks`, and the deferrable ``YarnApplicationSensor``.

XCom carries references and small records only: the published plan's HDFS directory, a planned job's
run record (name, R_j, p_j, input path), an application id. Arguments are checked when the DAG is
parsed, with errors naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, get_args

from airflow.sdk import BaseOperator

from corral_yarn.contracts import Sharing
from corral_yarn.errors import InputError

SCENARIOS = ("batch", "online")
SHARING: tuple[str, ...] = get_args(Sharing)
APP_ID = re.compile(r"^application_\d+_\d+$")
RUN_FIELDS = ("name", "racks", "priority")


def _fail(operator: str, field: str, problem: str) -> InputError:
    return InputError(f"{operator}: {field} {problem}")


def _check_run(operator: str, run: Any) -> None:
    """A planned run as ``corral_run``'s planned_jobs task returns it (an XComArg is checked when it resolves)."""
    if isinstance(run, Mapping) and (missing := [f for f in RUN_FIELDS if f not in run]):
        raise _fail(operator, "run", f"lacks {', '.join(missing)}: pass one item of the planned jobs list")


def pipeline_run_id(context: Any) -> str:
    """The id a DAG run holds its period's lock under: ``<dag id>/<run id>``, the same for all its tasks and their retries."""
    ti = context["ti"]
    return f"{ti.dag_id}/{ti.run_id}"


def _templated(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _number(convert: type, ok: Any, expected: str) -> Any:
    """A check of a number argument (a rendered template arrives as a string)."""
    def check(value: Any) -> tuple[Any, str | None]:
        try:
            number = convert(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        return number, None if number is not None and ok(number) else f"{value!r} must be {expected}"
    return check


def _one_of(choices: tuple[str, ...]) -> Any:
    """A check of a choice argument."""
    def check(value: Any) -> tuple[Any, str | None]:
        return value, None if value in choices else f"{value!r} is not one of {', '.join(choices)}"
    return check


def _duration(value: Any) -> tuple[Any, str | None]:
    from corral_yarn.io import parse_duration

    try:
        parse_duration(str(value))
    except InputError as exc:
        return value, f"{value!r} is not a duration like 1d, 12h, 90m ({exc})"
    return str(value), None


def _time_or_empty(value: Any) -> tuple[Any, str | None]:
    from corral_yarn.io import parse_time

    if value in ("", None):
        return "", None
    try:
        return parse_time(str(value)).isoformat(), None  # an ISO string: the period travels as text, never a datetime
    except InputError as exc:
        return value, f"{value!r}: {exc}"


def _switch_or_number(value: Any) -> tuple[Any, str | None]:
    """false (off), true (on at the default) or a number > 0; a rendered template arrives as text."""
    if str(value).strip().lower() in ("false", "true"):
        return str(value).strip().lower() == "true", None
    return _number(float, lambda v: v > 0, "false, true or a number > 0")(value)


def _path_or_empty(value: Any) -> tuple[Any, str | None]:
    return ("", None) if value in ("", None) else (str(value), None)


def _not_empty(value: Any) -> tuple[Any, str | None]:
    return value, None if value else "is empty: give the pipeline's local state directory"


# The planning arguments (the planning DAG's Params, docs/pipeline.md) and their checks.
_PLAN_CHECKS = {
    "horizon": _duration,
    "scenario": _one_of(SCENARIOS),
    "slack": _number(float, lambda v: v >= 0, "a number >= 0"),
    "period_start": _time_or_empty,
    "home": _not_empty,
    "plans_dir": _not_empty,
    "nic_gbps": _number(float, lambda v: v > 0, "a number > 0 (Gbit/s)"),
    "disk_mbps": _number(float, lambda v: v > 0, "a number > 0 (MB/s)"),
    "oversubscription": _number(float, lambda v: v > 1, "a number > 1"),
    "task_memory_mb": _number(int, lambda v: v >= 128, "an integer >= 128 (MB)"),
    "node_classes_file": _path_or_empty,
    "interference": _switch_or_number,
    "sharing": _one_of(SHARING),
}


def _check_plan(operator: str, args: dict[str, Any]) -> dict[str, Any]:
    """The planning arguments checked and converted; a templated one is checked once rendered (in execute)."""
    checked = {}
    for field, value in args.items():
        if _templated(value):
            checked[field] = value
            continue
        checked[field], problem = _PLAN_CHECKS[field](value)
        if problem:
            raise _fail(operator, field, problem)
    return checked


class CorralPlanOperator(BaseOperator):
    """Ingest history -> estimate the period -> plan -> report -> publish (thesis §4.1, offline planning).

    Returns the published plan's HDFS directory (the report's local path is in the log). Every argument is
    templated, so a DAG can take them from its Params (``"{{ params.horizon }}"``); each is checked when the DAG
    is parsed, or once rendered if templated. The cluster figures REST cannot measure (``nic_gbps``,
    ``disk_mbps``, ``oversubscription``, ``task_memory_mb``) describe the cluster to the planner;
    ``node_classes_file`` (a cluster spec, the format of ``corral plan --cluster``) gives its racks their node
    classes and ``interference`` (false, true or the threshold F) marks jobs that slowed each other (docs/paragon.md);
    ``sharing`` is ``corral plan --sharing``: ``whole-rack`` (the default) or ``slots`` (docs/planner.md).
    """

    template_fields = tuple(_PLAN_CHECKS)

    def __init__(self, *, home: str, horizon: str = "1d", scenario: str = "batch", slack: float | str = 0.1, period_start: str = "",
                 plans_dir: str = "/corral/plans", nic_gbps: float | str = 10.0, disk_mbps: float | str = 100.0,
                 oversubscription: float | str = 5.0, task_memory_mb: int | str = 1024, node_classes_file: str = "",
                 interference: bool | float | str = False, sharing: str = "whole-rack", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        args = _check_plan(type(self).__name__, {
            "horizon": horizon, "scenario": scenario, "slack": slack, "period_start": period_start, "home": home, "plans_dir": plans_dir,
            "nic_gbps": nic_gbps, "disk_mbps": disk_mbps, "oversubscription": oversubscription, "task_memory_mb": task_memory_mb,
            "node_classes_file": node_classes_file, "interference": interference, "sharing": sharing})
        for field, value in args.items():
            setattr(self, field, value)

    def execute(self, context: Any) -> str:
        from corral_yarn.pipeline import tasks

        params = _check_plan(type(self).__name__, {field: getattr(self, field) for field in _PLAN_CHECKS})
        start = tasks.period_start(params.get("period_start"), context.get("data_interval_end"), context.get("logical_date"))
        with tasks.period_held(params, start, pipeline_run_id(context)):  # one run per period (docs/pipeline.md)
            tasks.ingest_history(params)
            period_dir = tasks.estimate(params, start)
            planned = tasks.plan(params, period_dir)
            bound = planned["lower_bound_s"]  # none for slots plans (docs/planner.md)
            self.log.info("plan %s: %s %.0f s (lower bound %s), racks per job %s", planned["plan_id"], planned["objective"],
                          planned["objective_s"], "none" if bound is None else f"{bound:.0f} s", planned["jobs"])
            self.log.info("plan report: %s", tasks.report(period_dir))
            return tasks.publish(params, period_dir)


class _PlannedRunOperator(BaseOperator):
    """An operator on one planned run record (an item of ``tasks.planned_jobs``), checked when the DAG is parsed."""

    template_fields = ("run",)

    def __init__(self, *, run: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_run(type(self).__name__, run)
        self.run = run


class CorralUploadOperator(_PlannedRunOperator):
    """Rack-aware upload of one planned job's input: every block gets a replica inside R_j. Returns the run record."""

    def execute(self, context: Any) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        return tasks.upload(self.run, run_id=pipeline_run_id(context))


class CorralSubmitOperator(_PlannedRunOperator):
    """Submit a planned job Corral launches itself (MapReduce over RM REST, R_j as tags, p_j); idempotent by tag.

    Returns the run record with its ``app_id``, and pushes the id alone under the XCom key ``app_id``
    (``submit.output["app_id"]``): wait for it with :class:`YarnApplicationSensor`.
    """

    def execute(self, context: Any) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        submitted = tasks.submit(self.run, run_id=pipeline_run_id(context))
        context["ti"].xcom_push(key="app_id", value=submitted["app_id"])  # ``op.output["app_id"]`` for the sensor
        return submitted


class PlannedStartSensor(_PlannedRunOperator):
    """Waits for job j's planned start T_j (online scenario; batch: at once) on the triggerer: no worker slot held.

    Returns nothing; put it between the upload and the submission.
    """

    def execute(self, context: Any) -> None:
        from airflow.providers.standard.triggers.temporal import DateTimeTrigger

        from corral_yarn.pipeline import tasks

        if tasks.start_due(self.run):
            return
        start = tasks.start_time(self.run)
        self.log.info("%s starts at its planned start %s", self.run["name"], start.isoformat())
        self.defer(trigger=DateTimeTrigger(moment=start), method_name="execute_complete")

    def execute_complete(self, context: Any, event: Any = None) -> None:
        self.log.info("planned start of %s reached", self.run["name"])


class YarnApplicationSensor(BaseOperator):
    """Waits for a YARN application to end; deferred to the triggerer, so no worker slot is held while it runs.

    ``application_id`` is templated (e.g. ``{{ ti.xcom_pull('submit')['app_id'] }}``). Fails unless the
    application FINISHED with final status SUCCEEDED; returns ``{app_id, state, final_status}``.
    """

    template_fields = ("application_id",)

    def __init__(self, *, application_id: str, poll_interval: float = 10.0, timeout: float = timedelta(hours=6).total_seconds(),
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(poll_interval, int | float) or poll_interval <= 0:
            raise _fail(type(self).__name__, "poll_interval", f"{poll_interval!r} must be a positive number of seconds")
        if "{{" not in str(application_id) and not APP_ID.match(str(application_id)):
            raise _fail(type(self).__name__, "application_id", f"{application_id!r} is not a YARN id like application_1700000000000_0001")
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise _fail(type(self).__name__, "timeout", f"{timeout!r} must be a positive number of seconds")
        self.application_id, self.poll_interval, self.timeout = application_id, float(poll_interval), float(timeout)

    def execute(self, context: Any) -> None:
        from corral_yarn.airflow.hooks import CorralHook
        from corral_yarn.airflow.triggers import YarnApplicationTrigger

        if not APP_ID.match(self.application_id):
            raise _fail(type(self).__name__, "application_id", f"{self.application_id!r} is not a YARN application id")
        trigger = YarnApplicationTrigger(CorralHook().rm_url(), self.application_id, self.poll_interval)
        self.defer(trigger=trigger, method_name="execute_complete", timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        from corral_yarn.cluster import ApplicationFailedError

        if event.get("status") != "ended":
            raise ApplicationFailedError(self.application_id, "unknown", event.get("message", "no report"))
        if event["state"] != "FINISHED" or event.get("final_status") != "SUCCEEDED":
            raise ApplicationFailedError(event["app_id"], f"{event['state']}/{event.get('final_status')}", event.get("diagnostics", ""))
        return {k: event[k] for k in ("app_id", "state", "final_status")}
