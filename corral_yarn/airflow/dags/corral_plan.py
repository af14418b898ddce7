"""corral_plan: every period, learn from the finished runs and plan the next period's recurring jobs.

ingest_history (JobHistory server -> history store) -> estimate (predicted jobs of the period) ->
plan (rack set R_j, priority p_j, start T_j per job on the live cluster) -> report (HTML; its path is
in the task log) -> publish (versioned on HDFS, earlier plans kept; updates the ``corral_published_plan``
Asset, which schedules ``corral_run``). Logic: ``corral_yarn.pipeline``; design: docs/pipeline.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from airflow.sdk import dag, task

from corral_yarn.pipeline.dag_params import PUBLISHED_PLAN, dag_defaults, planning_params


@dag(
    dag_id="corral_plan",
    schedule="@daily",
    params=planning_params(),
    **dag_defaults(retry_delay_s=30),
    doc_md=__doc__,
)
def corral_plan() -> None:
    @task
    def ingest_history(params: dict[str, Any] | None = None) -> str:
        from corral_yarn.pipeline import tasks

        return tasks.ingest_history(params or {})

    @task
    def estimate(ingested: str, params: dict[str, Any] | None = None, data_interval_end: datetime | None = None,
                 logical_date: datetime | None = None) -> str:
        from corral_yarn.pipeline import tasks

        return tasks.estimate(params or {}, data_interval_end, logical_date)

    @task
    def plan(period_dir: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        return tasks.plan(params or {}, period_dir)

    @task
    def report(period_dir: str) -> str:
        from corral_yarn.pipeline import tasks

        return tasks.report(period_dir)

    @task(outlets=[PUBLISHED_PLAN])
    def publish(period_dir: str, params: dict[str, Any] | None = None) -> str:
        from corral_yarn.pipeline import tasks

        return tasks.publish(params or {}, period_dir)

    period_dir = estimate(ingest_history())
    planned, rendered = plan(period_dir), report(period_dir)
    planned >> rendered >> publish(period_dir)


corral_plan()
