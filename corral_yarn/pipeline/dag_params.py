"""The Params and the Asset the two DAGs share (imported by the DAG files; light: no I/O, no clients).

``home`` defaults to ``$CORRAL_PIPELINE_HOME`` (the demo sets it to ``.corral/pipeline``).
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from typing import Any

from airflow.sdk import Asset, Param

# Updated by the planning DAG's publish task; schedules the run DAG.
PUBLISHED_PLAN = Asset(name="corral_published_plan", uri="corral://plans/latest")


def dag_defaults(retry_delay_s: float) -> dict[str, Any]:
    """What both DAGs share: no catch-up, one run at a time, retried tasks, the 'corral' tag."""
    return {
        "start_date": datetime(2026, 1, 1, tzinfo=timezone.utc),
        "catchup": False,
        "max_active_runs": 1,
        "default_args": {"retries": 2, "retry_delay": timedelta(seconds=retry_delay_s)},
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
    """The planning DAG's Params: the period, the scenario and the slack (thesis §4.3, §3.1)."""
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
    }


def run_params() -> dict[str, Param]:
    """The run DAG's Params: which published plan to carry out."""
    return {
        **common_params(),
        "plan_version": Param("latest", type="string", minLength=1, description="published plan to run: 'latest' or <period>-<plan id>"),
    }
