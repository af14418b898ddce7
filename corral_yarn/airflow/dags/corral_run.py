"""corral_run: carry out the published plan, one mapped task group per planned job j.

upload (``CorralUploadOperator``: input into R_j) -> wait_for_start (``PlannedStartSensor``: T_j, at once
in the batch scenario) -> submit (``CorralSubmitOperator``: RM REST, R_j as tags, priority p_j; idempotent
by tag) -> wait_for_job (``YarnApplicationSensor``: deferred to the triggerer, no worker slot held) ->
ingest_history -> verify_locality (containers and block replicas inside R_j, recorded). XCom carries the
small run record of each job and its application id. A failed job fails only its own group;
``summarize`` runs anyway and fails the run if any job did not finish. One run per period: ``planned_jobs``
takes the period's lock on HDFS, the job tasks re-enter it, ``summarize`` releases it. Scheduled by the
``corral_published_plan`` Asset. Design: docs/pipeline.md.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import TriggerRule, dag, get_current_context, task, task_group

from corral_yarn.airflow.operators import (CorralSubmitOperator, CorralUploadOperator, PlannedStartSensor, YarnApplicationSensor,
                                           pipeline_run_id)
from corral_yarn.pipeline.dag_params import PUBLISHED_PLAN, dag_defaults, poll_interval_s, run_params

JOB_NAME = "{{ task.run['name'] }}"  # each mapped group's label in the UI: the planned job's name


@dag(
    dag_id="corral_run",
    schedule=[PUBLISHED_PLAN],
    params=run_params(),
    **dag_defaults(retry_delay_s=20),
    doc_md=__doc__,
)
def corral_run() -> None:
    @task(doc_md="Takes the period's lock (one run per period; waits, then fails naming the holder), then the published plan's "
                 "runnable jobs in prioritization order: one small run record each (name, R_j, p_j, T_j, input and output paths); "
                 "jobs without a catalog entry are logged and left out.")
    def planned_jobs(params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        from corral_yarn.pipeline import tasks

        return tasks.planned_jobs(params or {}, run_id=pipeline_run_id(get_current_context()))

    @task_group
    def run_job(run: dict[str, Any]) -> Any:
        uploaded = CorralUploadOperator(task_id="upload", run=run, map_index_template=JOB_NAME,
                                        doc_md="The job's input from its landing directory to HDFS, a replica of every block in R_j "
                                               "(an input already there is kept).")
        started = PlannedStartSensor(task_id="wait_for_start", run=uploaded.output, map_index_template=JOB_NAME,
                                     doc_md="Until the planned start T_j (online scenario; batch: at once), on the triggerer.")
        submitted = CorralSubmitOperator(task_id="submit", run=uploaded.output, map_index_template=JOB_NAME,
                                         doc_md="Submit the MapReduce job with R_j as tags and priority p_j; an application "
                                                "already tagged with this plan and job is reused, never submitted twice.")
        waited = YarnApplicationSensor(task_id="wait_for_job", application_id=submitted.output["app_id"], poll_interval=poll_interval_s(),
                                       timeout=timedelta(hours=6).total_seconds(), retries=0,
                                       doc_md="Until the application ends, polled by the triggerer (no worker slot held); "
                                              "fails with the RM's diagnostics unless it SUCCEEDED.")

        @task(doc_md="The job's run from the JobHistory server into the history store (skipped if stored).")
        def ingest_history(submitted: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.ingest_run(params or {}, submitted)

        @task(doc_md="The share of the job's containers and input blocks inside R_j, recorded under <home>/records/.")
        def verify_locality(submitted: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.verify(params or {}, submitted, run_id=pipeline_run_id(get_current_context()))

        ingested = ingest_history(submitted.output)
        started >> submitted >> waited >> ingested
        return verify_locality(ingested)

    @task(trigger_rule=TriggerRule.ALL_DONE, retries=0,
          doc_md="Totals over the jobs' records into <home>/records/<version>/summary.json; fails if a planned job has no record. "
                 "Releases the period's lock.")
    def summarize(jobs: list[dict[str, Any]], records: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        return tasks.summarize(params or {}, jobs, list(records), run_id=pipeline_run_id(get_current_context()))

    jobs = planned_jobs()
    summarize(jobs, run_job.expand(run=jobs))


corral_run()
