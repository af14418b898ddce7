"""example_corral_spark: a team's existing Spark task runs its planned job inside R_j.

``corral_settings`` reads the published plan (Connections: ``corral_webhdfs``, ``corral_resourcemanager``,
``corral_jobhistory``) and returns the job's ``spark.yarn.tags`` (R_j, plan, job, recurring key),
``spark.yarn.priority`` (p_j) and queue; the user's ``SparkSubmitOperator`` takes them as ``conf``.
Those two lines are all Corral adds to the task. Guide: docs/pipeline.md ("Adding Corral to your DAGs").
"""

from __future__ import annotations

from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Param, dag, task

from corral_yarn.pipeline.dag_params import dag_defaults, run_params


@dag(
    dag_id="example_corral_spark",
    schedule=None,
    **dag_defaults(retry_delay_s=30),
    params={
        **run_params(),
        "job": Param("daily-report", type="string", minLength=1, description="the planned job this Spark task carries out"),
        "queue": Param("default", type="string", minLength=1, description="YARN queue"),
        "application": Param("/opt/jobs/daily_report.py", type="string", minLength=1, description="the Spark application"),
    },
    doc_md=__doc__,
)
def example_corral_spark() -> None:
    @task(doc_md="Job j's Spark settings from the published plan: R_j and p_j as YARN tags and priority.")
    def corral_settings(params: dict[str, Any] | None = None) -> dict[str, str]:
        from corral_yarn.airflow.frameworks import job_settings
        from corral_yarn.airflow.hooks import CorralHook

        params = params or {}
        plan = CorralHook().published_plan(params, params["plan_version"])
        return job_settings(plan, params["job"], queue=params["queue"], recurring_key=params["job"]).spark_conf()

    SparkSubmitOperator(  # the user's task as it was, plus conf=
        task_id="daily_report",
        application="{{ params.application }}",
        name="{{ params.job }}",
        conn_id="spark_default",
        conf=corral_settings(),
        doc_md="The team's existing Spark job; the scheduler keeps its AM and executors inside R_j.",
    )


example_corral_spark()
