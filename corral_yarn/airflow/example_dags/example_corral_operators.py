"""example_corral_operators: Corral's operators in your own DAG — plan, then per planned job upload, submit
and wait on the triggerer (no worker slot held while the job runs).

The planned jobs come from the published plan and the catalog exactly as in ``corral_run``.
Guide: docs/pipeline.md ("Adding Corral to your DAGs").
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import dag, task

from corral_yarn.airflow.operators import CorralPlanOperator, CorralSubmitOperator, CorralUploadOperator, YarnApplicationSensor
from corral_yarn.pipeline.dag_params import common_params, dag_defaults, poll_interval_s

HOME = "{{ params.home }}"


@dag(
    dag_id="example_corral_operators",
    schedule=None,
    params=common_params(),
    **dag_defaults(retry_delay_s=30),
    doc_md=__doc__,
)
def example_corral_operators() -> None:
    plan = CorralPlanOperator(task_id="plan", horizon="1d", scenario="batch", slack=0.1, home=HOME, plans_dir="{{ params.plans_dir }}",
                              doc_md="Ingest history, estimate, plan, report, publish; returns the plan's HDFS directory.")

    @task(doc_md="The published plan's runnable jobs (small run records: name, R_j, p_j, input).")
    def planned_jobs(published: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        from corral_yarn.pipeline import tasks

        return tasks.planned_jobs({**(params or {}), "plan_version": published.rstrip("/").rpartition("/")[2]})

    runs = planned_jobs(plan.output)
    uploaded = CorralUploadOperator.partial(task_id="upload", doc_md="Put the job's input with a replica in R_j.").expand(run=runs)
    submitted = CorralSubmitOperator.partial(task_id="submit", doc_md="Submit with R_j as tags and priority p_j.").expand(run=uploaded.output)
    YarnApplicationSensor.partial(task_id="wait_for_job", poll_interval=poll_interval_s(),
                                  doc_md="Wait on the triggerer, no worker slot.").expand(
        application_id=submitted.output.map(lambda run: run["app_id"]))


example_corral_operators()
