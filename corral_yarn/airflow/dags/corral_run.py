"""corral_run: carry out the published plan, one mapped task group per planned job j.

upload (input into R_j) -> wait_for_start (T_j; at once in the batch scenario) -> submit (RM REST, R_j
as tags, priority p_j; idempotent by tag) -> wait_for_job (reschedule-mode sensor: no worker slot
held) -> ingest_history -> verify_locality (containers and block replicas inside R_j, recorded).
A failed job fails only its own group; ``summarize`` runs anyway and fails the run if any job did
not finish. Scheduled by the ``corral_published_plan`` Asset. Design: docs/pipeline.md.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.sdk import PokeReturnValue, TriggerRule, dag, task, task_group

from corral_yarn.pipeline.dag_params import PUBLISHED_PLAN, dag_defaults, run_params


@dag(
    dag_id="corral_run",
    schedule=[PUBLISHED_PLAN],
    params=run_params(),
    **dag_defaults(retry_delay_s=20),
    doc_md=__doc__,
)
def corral_run() -> None:
    @task
    def planned_jobs(params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        from corral_yarn.pipeline import tasks

        return tasks.planned_jobs(params or {})

    @task_group
    def run_job(run: dict[str, Any]) -> Any:
        @task(map_index_template="{{ task.op_args[0]['name'] }}")
        def upload(run: dict[str, Any]) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.upload(run)

        @task.sensor(mode="reschedule", poke_interval=30, timeout=timedelta(days=2).total_seconds())
        def wait_for_start(run: dict[str, Any]) -> PokeReturnValue:
            from corral_yarn.pipeline import tasks

            return PokeReturnValue(is_done=tasks.start_due(run), xcom_value=run)

        @task
        def submit(run: dict[str, Any]) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.submit(run)

        @task.sensor(mode="reschedule", poke_interval=10, timeout=timedelta(hours=6).total_seconds(), retries=0)
        def wait_for_job(submitted: dict[str, Any]) -> PokeReturnValue:
            from corral_yarn.pipeline import tasks

            return PokeReturnValue(is_done=tasks.finished(submitted), xcom_value=submitted)

        @task
        def ingest_history(submitted: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.ingest_run(params or {}, submitted)

        @task
        def verify_locality(submitted: dict[str, Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
            from corral_yarn.pipeline import tasks

            return tasks.verify(params or {}, submitted)

        return verify_locality(ingest_history(wait_for_job(submit(wait_for_start(upload(run))))))

    @task(trigger_rule=TriggerRule.ALL_DONE, retries=0)
    def summarize(jobs: list[dict[str, Any]], records: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
        from corral_yarn.pipeline import tasks

        return tasks.summarize(params or {}, jobs, list(records))

    jobs = planned_jobs()
    summarize(jobs, run_job.expand(run=jobs))


corral_run()
