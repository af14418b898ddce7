"""Thin Corral operators over :mod:`corral_yarn.pipeline.tasks`, and the deferrable ``YarnApplicationSensor``.

XCom carries references and small records only: the published plan's HDFS directory, a planned job's
run record (name, R_j, p_j, input path), an application id. Arguments are checked when the DAG is
parsed, with errors naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from airflow.sdk import BaseOperator

from corral_yarn.errors import InputError

SCENARIOS = ("batch", "online")
APP_ID = re.compile(r"^application_\d+_\d+$")
RUN_FIELDS = ("name", "racks", "priority")


def _fail(operator: str, field: str, problem: str) -> InputError:
    return InputError(f"{operator}: {field} {problem}")


def _check_run(operator: str, run: Any) -> None:
    """A planned run as ``corral_run``'s planned_jobs task returns it (an XComArg is checked when it resolves)."""
    if isinstance(run, Mapping) and (missing := [f for f in RUN_FIELDS if f not in run]):
        raise _fail(operator, "run", f"lacks {', '.join(missing)}: pass one item of the planned jobs list")


class CorralPlanOperator(BaseOperator):
    """Ingest history -> estimate the period -> plan -> report -> publish (thesis §4.1, offline planning).

    Returns the published plan's HDFS directory. ``params`` are the planning DAG's Params (docs/pipeline.md).
    """

    template_fields = ("period_start", "home", "plans_dir")

    def __init__(self, *, horizon: str = "1d", scenario: str = "batch", slack: float = 0.1, period_start: str = "",
                 home: str, plans_dir: str = "/corral/plans", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from corral_yarn.io import parse_duration

        if scenario not in SCENARIOS:
            raise _fail(type(self).__name__, "scenario", f"{scenario!r} is not one of {', '.join(SCENARIOS)}")
        if not isinstance(slack, int | float) or slack < 0:
            raise _fail(type(self).__name__, "slack", f"{slack!r} must be a number >= 0")
        try:
            parse_duration(horizon)
        except (InputError, ValueError) as exc:
            raise _fail(type(self).__name__, "horizon", f"{horizon!r} is not a duration like 1d, 12h, 90m ({exc})") from None
        if not home:
            raise _fail(type(self).__name__, "home", "is empty: give the pipeline's local state directory")
        self.horizon, self.scenario, self.slack, self.period_start = horizon, scenario, float(slack), period_start
        self.home, self.plans_dir = home, plans_dir

    def execute(self, context: Any) -> str:
        from corral_yarn.pipeline import tasks

        params = {"horizon": self.horizon, "scenario": self.scenario, "slack": self.slack, "period_start": self.period_start,
                  "home": self.home, "plans_dir": self.plans_dir}
        tasks.ingest_history(params)
        period_dir = tasks.estimate(params, context.get("data_interval_end"), context.get("logical_date"))
        tasks.plan(params, period_dir)
        tasks.report(period_dir)
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

        return tasks.upload(self.run)


class CorralSubmitOperator(_PlannedRunOperator):
    """Submit a planned job Corral launches itself (MapReduce over RM REST, R_j as tags, p_j); idempotent by tag.

    Returns the run record with its ``app_id``; wait for it with :class:`YarnApplicationSensor`.
    """

    def execute(self, context: Any) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        return tasks.submit(self.run)


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
