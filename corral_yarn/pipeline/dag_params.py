"""The Params and the Asset the two DAGs share (imported by the DAG files; light: no I/O, no clients).

``home`` defaults to ``$CORRAL_PIPELINE_HOME`` (the demo sets it to ``.corral/pipeline``). Two timings are
read from the environment when a DAG file is parsed (they are the tasks' own arguments, not run Params):
``$CORRAL_PIPELINE_RETRY_DELAY_S`` (every task's ``retry_delay``; default: each DAG's own) and
``$CORRAL_PIPELINE_POLL_INTERVAL_S`` (how often the triggerer polls a running YARN application; default 10 s).
"""

from __future__ import annotations

import math
import os
from datetime import datetime, timedelta, timezone
from typing import Any, get_args

from airflow.sdk import Asset, Param

from corral_yarn.contracts import Sharing
from corral_yarn.errors import InputError

# Updated by the planning DAG's publish task; schedules the run DAG.
PUBLISHED_PLAN = Asset(name="corral_published_plan", uri="corral://plans/latest")

RETRY_DELAY_ENV = "CORRAL_PIPELINE_RETRY_DELAY_S"
POLL_INTERVAL_ENV = "CORRAL_PIPELINE_POLL_INTERVAL_S"
# A holding run's 2 retry delays plus the 6 h wait on a job must stay within the period lock's 7 h staleness (docs/pipeline.md).
MAX_RETRY_DELAY_S = 1800.0
POLL_INTERVAL_S = 10.0


def seconds_setting(name: str, default: float, maximum: float = math.inf) -> float:
    """The environment variable ``name`` as seconds in (0, maximum]; ``default`` when it is unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= maximum):
        bound = "" if math.isinf(maximum) else f" and at most {maximum:g}"
        raise InputError(f"{raw!r} must be a number of seconds > 0{bound}", field=name)
    return seconds


def poll_interval_s() -> float:
    """How often the triggerer polls a running YARN application: ``$CORRAL_PIPELINE_POLL_INTERVAL_S``, default 10 s."""
    return seconds_setting(POLL_INTERVAL_ENV, POLL_INTERVAL_S)


def dag_defaults(retry_delay_s: float) -> dict[str, Any]:
    """What both DAGs share: no catch-up, one run at a time, retried tasks, the 'corral' tag.

    The tasks' retry delay is ``retry_delay_s`` unless ``$CORRAL_PIPELINE_RETRY_DELAY_S`` sets it."""
    delay = seconds_setting(RETRY_DELAY_ENV, retry_delay_s, maximum=MAX_RETRY_DELAY_S)
    return {
        "start_date": datetime(2026, 1, 1, tzinfo=timezone.utc),
        "catchup": False,
        "max_active_runs": 1,
        "default_args": {"retries": 2, "retry_delay": timedelta(seconds=delay)},
        "tags": ["corral"],
    }


def common_params() -> dict[str, Param]:
    """Where the pipeline keeps its state, locally and on HDFS."""
    return {
        "home": Param(os.environ.get("CORRAL_PIPELINE_HOME", "/var/lib/corral"), type="string", minLength=1,
                      description="local state: catalog.json, history/ store, periods/, records/ (shared by all workers)"),
        "plans_dir": Param("/corral/plans", type="string", pattern="^/", description="HDFS directory of the published plans"),
        "runs_dir": Param("/corral/runs", type="string", pattern="^/", description="HDFS directory of each run's input and output"),
    }


def planning_params() -> dict[str, Param]:
    """The planning DAG's Params: the period, the scenario and the slack (thesis §4.3, §3.1), the cluster figures
    REST cannot measure, heterogeneous racks and interference (docs/paragon.md), and slot-aware sharing (docs/planner.md)."""
    return {
        **common_params(),
        "horizon": Param("1d", type="string", pattern=r"^\s*\d+(\.\d+)?\s*[smhdw]?\s*$",
                         description="length of the planning period, e.g. 1d, 12h, 90m"),
        "scenario": Param("batch", enum=["batch", "online"],
                          description="batch: minimise the makespan, submit at once; online: mean completion time, submit at T_j"),
        "slack": Param(0.1, type="number", minimum=0, description="scale predicted sizes by 1 + slack"),
        "period_start": Param("", type="string", pattern=r"^$|^\d{4}-\d{2}-\d{2}([T ].*)?$",
                              description="ISO 8601 start of the period; empty: the run's data interval end (or logical date)"),
        "nic_gbps": Param(10.0, type="number", exclusiveMinimum=0, description="NIC bandwidth per machine (Gbit/s)"),
        "disk_mbps": Param(100.0, type="number", exclusiveMinimum=0, description="disk bandwidth per machine (MB/s)"),
        "oversubscription": Param(5.0, type="number", exclusiveMinimum=1, description="rack-to-core oversubscription"),
        "task_memory_mb": Param(1024, type="integer", minimum=128, description="task container memory, for slots per machine"),
        "node_classes_file": Param("", type="string",
                                   description="cluster spec JSON in the format of corral plan --cluster (relative: under home) whose "
                                               "node_classes and racks' node_class the live racks of the same name take; empty: identical machines"),
        "interference": Param(False, type=["boolean", "number"], exclusiveMinimum=0,
                              description="mark jobs whose co-location slowed one of them by F or more in history: false (off), "
                                          "true (F = 0.2, the default of corral estimate --interference) or F > 0; the marks "
                                          "keep jobs apart with sharing slots (whole-rack: apart already, a warning says so)"),
        "sharing": Param("whole-rack", enum=list(get_args(Sharing)),
                         description="whole-rack: each job holds its racks for its interval (thesis §4.3); slots: jobs whose tasks "
                                     "fit in part of a rack share it, as corral plan --sharing slots (no lower bound)"),
    }


def run_params() -> dict[str, Param]:
    """The run DAG's Params: which published plan to carry out."""
    return {
        **common_params(),
        "plan_version": Param("latest", type="string", minLength=1, description="published plan to run: 'latest' or <period>-<plan id>"),
    }
