"""One function per Airflow task, taking the DAG's Params and XCom values and returning JSON-able values.

The DAG files in ``corral_yarn/airflow/dags/`` only wire these together; the steps themselves are in
:mod:`~corral_yarn.pipeline.planning` and :mod:`~corral_yarn.pipeline.execution`. The cluster's
addresses come from the Airflow Connections (:mod:`~corral_yarn.pipeline.connections`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from corral_yarn import io
from corral_yarn.cluster import ApplicationFailedError
from corral_yarn.errors import CorralError, InputError
from corral_yarn.io import parse_duration, parse_time
from corral_yarn.pipeline import execution, lock, outcome, planning
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.connections import cluster_from_airflow
from corral_yarn.pipeline.execution import PlannedRun
from corral_yarn.pipeline.settings import Period, PipelineSettings

log = logging.getLogger(__name__)
SUMMARY = "summary.json"
NOT_RUN = "not_run.json"  # planned jobs the catalog cannot run, written by planned_jobs for summarize


class JobsFailedError(CorralError):
    """Some planned jobs did not run to a verified end; the others did (their records are written)."""


def _settings(params: dict[str, Any]) -> PipelineSettings:
    return PipelineSettings.from_params(params)


def period_start(given: str | None, *fallbacks: datetime | None) -> datetime:
    """The period's start: the ``period_start`` Param if set, else the first known run time (UTC)."""
    if given:
        return parse_time(given)
    start = next((t for t in fallbacks if t is not None), None) or datetime.now(UTC)
    # through ISO text: Airflow's run times are pendulum DateTimes, which the estimator's arithmetic turns naive
    return parse_time(start.isoformat()).astimezone(UTC)


@contextmanager
def period_held(params: dict[str, Any], start: datetime, run_id: str) -> Iterator[lock.Holder]:
    """Hold the lock of the period starting at ``start`` for the block (docs/pipeline.md, "One run per period")."""
    with lock.holding(lock.PeriodLock.of(cluster_from_airflow().hdfs, _settings(params).plans_dir, start, run_id)) as holder:
        yield holder


def _enter(run: PlannedRun, run_id: str | None) -> None:
    """Re-enter (and renew) the period lock the run's DAG run took in ``planned_jobs``; waits, then fails, if another run holds it."""
    if run.period_lock and run_id:
        lock.PeriodLock.of(cluster_from_airflow().hdfs, run.period_lock, run.period_start, run_id).acquire()


# --- planning DAG ---------------------------------------------------------------------------------

def ingest_history(params: dict[str, Any]) -> str:
    return planning.ingest_history(cluster_from_airflow(), _settings(params))


def estimate(params: dict[str, Any], *run_times: datetime | None) -> str:
    """Estimate the period (``period_start`` Param, else the run's data interval end / logical date); with
    ``node_classes_file``, on the live cluster with its node classes (checked before any file is written)."""
    period = Period(start=period_start(params.get("period_start"), *run_times),
                    horizon_s=parse_duration(str(params["horizon"])).total_seconds(),
                    scenario=params["scenario"], slack=float(params["slack"]))
    settings, cluster = _settings(params), cluster_from_airflow()
    classes = planning.planning_cluster(cluster, settings) if settings.node_classes else None
    return str(planning.estimate_period(settings, period, cluster.hdfs.block_size(), classes))


def plan(params: dict[str, Any], period_dir: str) -> dict[str, Any]:
    made = planning.plan_period(cluster_from_airflow(), _settings(params), Path(period_dir))
    return {"plan_id": made.plan_id, "objective": made.objective, "objective_s": made.objective_s,
            "lower_bound_s": made.lower_bound_s, "jobs": {j.name: j.racks for j in made.jobs}}


def report(period_dir: str) -> str:
    return str(planning.render_report(Path(period_dir)).resolve())


def publish(params: dict[str, Any], period_dir: str) -> str:
    return planning.publish(cluster_from_airflow(), _settings(params), Path(period_dir))


# --- run DAG: one mapped task group per planned job --------------------------------------------

def planned_jobs(params: dict[str, Any], run_id: str | None = None) -> list[dict[str, Any]]:
    """The published plan's runnable jobs, in prioritization order (the mapped tasks' inputs). With ``run_id``
    (the bundled ``corral_run``) the DAG run first takes its period's lock, which ``summarize`` releases."""
    settings = _settings(params)
    cluster = cluster_from_airflow()
    published = planning.load_published(cluster, settings, params.get("plan_version"))
    period_lock = lock.PeriodLock.of(cluster.hdfs, settings.plans_dir, published.period.start, run_id) if run_id else None
    if period_lock:
        period_lock.acquire()
    try:
        runs, unknown = execution.planned_runs(published, Catalog.load(settings.catalog), settings)
        if unknown and not runs:
            raise InputError(f"none of the plan's {len(unknown)} jobs has an entry in the catalog {settings.catalog}: {', '.join(unknown[:10])}")
        execution.check_priorities(runs, cluster.rm.max_priority())
        io.write_atomic(settings.records / published.version / NOT_RUN, json.dumps({"no_catalog_entry": unknown}, indent=2) + "\n")
    except BaseException:
        if period_lock:
            period_lock.release()  # a retry takes it again
        raise
    if period_lock and not runs:
        period_lock.release()  # nothing to run: no summarize will
    log.info("plan %s: %d jobs to run", published.version, len(runs))
    held = {"period_lock": settings.plans_dir} if period_lock else {}
    return [r.model_copy(update=held).model_dump(mode="json") for r in runs]


def upload(run: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    planned = PlannedRun.model_validate(run)
    _enter(planned, run_id)
    placed = execution.upload_input(cluster_from_airflow(), planned)
    log.info("input of %s: %s", run["name"], json.dumps(placed))
    return run


def start_due(run: dict[str, Any]) -> bool:
    return execution.start_due(PlannedRun.model_validate(run))


def start_time(run: dict[str, Any]) -> datetime | None:
    """When the job may be submitted (None: at once, the batch scenario)."""
    return execution.start_time(PlannedRun.model_validate(run))


def submit(run: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    planned = PlannedRun.model_validate(run)
    _enter(planned, run_id)
    return {**run, "app_id": execution.submit(cluster_from_airflow(), planned)}


def finished(submitted: dict[str, Any]) -> bool:
    """True once the application ended; raises ApplicationFailedError if it did not succeed."""
    app = execution.application(cluster_from_airflow(), submitted["app_id"])
    if app.done and not app.succeeded:
        raise ApplicationFailedError(app.app_id, f"{app.state}/{app.final_status}", app.diagnostics)
    return app.done


def ingest_run(params: dict[str, Any], submitted: dict[str, Any]) -> dict[str, Any]:
    log.info("history of %s: %s", submitted["name"], execution.ingest_run(cluster_from_airflow(), _settings(params), submitted["app_id"]))
    return submitted


def verify(params: dict[str, Any], submitted: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    """Measure and record the job's locality in R_j."""
    cluster, run = cluster_from_airflow(), PlannedRun.model_validate({k: v for k, v in submitted.items() if k != "app_id"})
    _enter(run, run_id)
    locality = execution.verify_locality(cluster, run, submitted["app_id"])
    doc = execution.record(_settings(params), run, execution.application(cluster, submitted["app_id"]), locality)
    log.info("%s on %s: %d/%d containers and %d/%d blocks in its racks", run.name, ",".join(run.racks),
             locality.containers_in_racks, locality.containers, locality.blocks_with_replica_in_racks, locality.blocks)
    return doc


def summarize(params: dict[str, Any], jobs: list[dict[str, Any]], records: list[dict[str, Any]], run_id: str | None = None) -> dict[str, Any]:
    """Re-render the period's report with what ran and write ``summary.json`` next to the records; raises
    JobsFailedError if a planned job did not run to its end. Releases the period lock the run holds, also on failure."""
    try:
        return _summarize(params, jobs, records)
    finally:
        if run_id and jobs and jobs[0].get("period_lock"):
            first = PlannedRun.model_validate(jobs[0])
            lock.PeriodLock.of(cluster_from_airflow().hdfs, first.period_lock, first.period_start, run_id).release()


def _summarize(params: dict[str, Any], jobs: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    directory = _settings(params).records / jobs[0]["version"] if jobs else None
    summary = summary_of(jobs, [r for r in records if r], _not_run(directory))
    if directory:
        start = jobs[0].get("period_start")
        report = outcome.report_outcome(_settings(params), jobs[0]["version"], parse_time(start)) if start else None
        summary["report"] = str(report.resolve()) if report else None
        io.write_atomic(directory / SUMMARY, json.dumps(summary, indent=2) + "\n")
        log.info("run summary: %s", (directory / SUMMARY).resolve())
    if summary["missing"]:
        not_run = summary["no_catalog_entry"]
        raise JobsFailedError(f"{len(summary['missing'])} of {summary['planned']} planned jobs did not finish: {', '.join(summary['missing'])}"
                              + (f" ({len(not_run)} have no catalog entry)" if not_run else ""))
    return summary


def _not_run(directory: Path | None) -> list[str]:
    """The planned jobs ``planned_jobs`` found no catalog entry for (none if it wrote no list)."""
    path = directory / NOT_RUN if directory else None
    return json.loads(path.read_text())["no_catalog_entry"] if path and path.exists() else []


def summary_of(jobs: list[dict[str, Any]], records: list[dict[str, Any]], not_run: Sequence[str] = ()) -> dict[str, Any]:
    """Totals over the recorded jobs: containers and blocks inside their rack sets; ``not_run``: planned jobs not in the catalog."""
    total = {key: sum(r["locality"][key] for r in records) for key in
             ("containers", "containers_in_racks", "blocks", "blocks_with_replica_in_racks", "replicas", "replicas_in_racks")}
    return {
        "version": jobs[0]["version"] if jobs else None,
        "planned": len(jobs) + len(not_run),
        "succeeded": sum(1 for r in records if r["final_status"] == "SUCCEEDED"),
        "missing": sorted({j["name"] for j in jobs} - {r["job"] for r in records} | set(not_run)),
        "no_catalog_entry": sorted(not_run),
        **total,
        "container_share": _share(total["containers_in_racks"], total["containers"]),
        "block_share": _share(total["blocks_with_replica_in_racks"], total["blocks"]),
        "replica_share": _share(total["replicas_in_racks"], total["replicas"]),
        "jobs": sorted(records, key=lambda r: r["order"]),
    }


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
