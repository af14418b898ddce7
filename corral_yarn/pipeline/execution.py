"""The run steps for one planned job j: upload its input into R_j -> wait for T_j -> submit with R_j and
p_j -> wait -> ingest its history -> verify and record its locality (thesis §4.1).

Every step is safe to retry: the upload keeps an input already in place, the submission is idempotent
by the plan's and job's tags (``ResourceManager.submit``), ingesting skips stored runs, and records are
rewritten atomically.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from corral_yarn import io
from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.grants import grant_period
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.rm import AppReport
from corral_yarn.cluster.tags import period_id
from corral_yarn.cluster.upload import PlacementReport
from corral_yarn.errors import InputError
from corral_yarn.pipeline.catalog import Catalog, RecurringJob
from corral_yarn.pipeline.history import history_source
from corral_yarn.pipeline.locality import Locality, attempt_racks, input_blocks, measure
from corral_yarn.pipeline.planning import Published
from corral_yarn.pipeline.settings import PipelineSettings
from corral_yarn.pipeline.speculation import load_settings, with_speculation
from estimator.records import IngestReport
from estimator.store import HistoryStore

log = logging.getLogger(__name__)
_UNSAFE_PATH = re.compile(r"[^A-Za-z0-9._@=+-]")


class PlannedRun(BaseModel):
    """Everything one mapped task needs to carry out job j of a published plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    plan_id: str
    scenario: str
    name: str
    racks: list[str]
    priority: int
    order: int
    planned_start: datetime
    arrival: datetime
    period_start: datetime  # the planning period: the planner grant's [from, until) (docs/rack-tags.md)
    period_end: datetime
    job: RecurringJob
    jar: str
    hdfs_input: str
    hdfs_output: str
    speculation: dict[str, str] = {}  # Kwiken's speculation settings for the job's recurring key (docs/kwiken.md)
    latency_function: str | None = None  # a latency-sensitive job's: tagged corral-latency:<it> (docs/rack-tags.md)
    period_lock: str | None = None  # plans_dir of the period lock its DAG run holds (pipeline.lock), entered by its tasks; None: no lock

    @property
    def tags(self) -> CorralTags:
        """R_j and the job's stable id: its recurring key and the planning period (issue 16 item 4); its latency function if any."""
        return CorralTags(self.plan_id, self.name, tuple(self.racks), key=self.job.key, period=period_id(self.period_start),
                          latency=self.latency_function)

    @property
    def app_name(self) -> str:
        """``<recurring key>-<arrival>``: the estimator's key of this name is the recurring key again."""
        return f"{self.job.key}-{self.arrival:%Y-%m-%dT%H%M}"


def planned_runs(published: Published, catalog: Catalog, settings: PipelineSettings) -> tuple[list[PlannedRun], list[str]]:
    """The plan's jobs in prioritization order, and the names of those the catalog cannot run."""
    specs = {j.name: j for j in published.workload.jobs}
    runs, unknown = [], []
    start = published.period.start
    speculation = load_settings(settings.speculation)
    for planned in sorted(published.plan.jobs, key=lambda p: p.order):
        spec = specs[planned.name]
        entry = catalog.entry(spec.recurring_key)
        if entry is None:
            unknown.append(planned.name)
            continue
        base = posixpath.join(settings.runs_dir, published.version, _UNSAFE_PATH.sub("_", planned.name))
        runs.append(PlannedRun(
            version=published.version, plan_id=published.plan.plan_id, scenario=published.plan.scenario,
            name=planned.name, racks=planned.racks, priority=planned.priority, order=planned.order,
            planned_start=start + timedelta(seconds=planned.planned_start_s), arrival=start + timedelta(seconds=spec.arrival_s),
            period_start=start, period_end=start + published.period.horizon,
            job=entry, jar=catalog.jar, hdfs_input=f"{base}/input", hdfs_output=f"{base}/output",
            speculation=speculation.properties(entry.key) if speculation else {},
            latency_function=planned.latency_function,
        ))
    if unknown:
        log.warning("%d planned jobs have no catalog entry and are not run: %s", len(unknown), ", ".join(unknown))
    return runs, unknown


def upload_input(cluster: Cluster, run: PlannedRun) -> dict[str, Any]:
    """Upload the job's local input with one replica of every block in R_j (kept if already uploaded)."""
    topology = cluster.topology()
    racks = topology.canonical_racks(run.racks)
    if cluster.hdfs.status(run.hdfs_input, strict=False) is not None:
        blocks = input_blocks(cluster.hdfs, run.hdfs_input)
        log.info("%s already uploaded; keeping it", run.hdfs_input)
        return {"target": run.hdfs_input, "blocks": len(blocks), "uploaded": False,
                "blocks_in_rack_set": sum(1 for b in blocks if {r.lower() for r in b.racks} & {r.lower() for r in racks})}
    local = run.job.input_dir(run.arrival)
    if not local.exists():
        raise InputError(f"no local input for {run.name} at {local} (catalog entry {run.job.key!r})")
    report: PlacementReport = cluster.uploader(topology).upload(local, run.hdfs_input, racks, block_bytes=run.job.block_bytes)
    return {"target": run.hdfs_input, "blocks": report.blocks, "uploaded": True, "blocks_in_rack_set": report.blocks_in_rack_set,
            "bytes": report.bytes, "replica_bytes_per_rack": report.replica_bytes_per_rack, "blocks_repaired": report.blocks_repaired}


def check_priorities(runs: list[PlannedRun], max_priority: int) -> None:
    """YARN caps priorities at ``yarn.cluster.max-application-priority``; a plan above it would lose its order (§4.1)."""
    highest = max((r.priority for r in runs), default=0)
    if highest > max_priority:
        raise InputError(f"the plan gives priorities up to {highest} but the ResourceManager's yarn.cluster.max-application-priority "
                         f"is {max_priority}: YARN would cap them and lose the plan's order; raise it to {highest} or more (docs/deploy.md)")


def start_time(run: PlannedRun) -> datetime | None:
    """When job j may be submitted: batch, at once (None; priorities order the jobs); online, its planned start T_j."""
    return None if run.scenario == "batch" else run.planned_start


def start_due(run: PlannedRun, now: datetime | None = None) -> bool:
    """True once job j may be submitted (:func:`start_time`)."""
    start = start_time(run)
    return start is None or (now or datetime.now(UTC)) >= start


def submit(cluster: Cluster, run: PlannedRun) -> str:
    """Submit the job with R_j and p_j (and Kwiken's speculation settings, if any); an application already
    submitted for this plan and job is reused."""
    if existing := cluster.rm.existing(run.tags):
        return existing.app_id
    if cluster.hdfs.status(run.hdfs_output, strict=False) is not None:  # left by a failed or killed attempt
        log.info("removing %s left by an earlier attempt of %s", run.hdfs_output, run.name)
        cluster.hdfs.delete(run.hdfs_output, recursive=True)
    job = with_speculation(run.job.mapreduce_job(run.app_name, run.jar, [run.hdfs_input], run.hdfs_output), run.speculation)
    report = cluster.mapreduce().submit(job, run.tags, priority=run.priority, grant_period=grant_period(run.period_start, run.period_end))
    log.info("%s submitted as %s on racks %s with priority %d", run.name, report.app_id, ",".join(run.racks), run.priority)
    return report.app_id


def application(cluster: Cluster, app_id: str) -> AppReport:
    return cluster.rm.application(app_id)


def ingest_run(cluster: Cluster, settings: PipelineSettings, app_id: str) -> str:
    """Append this job's run (from the JobHistory server) to the history store; a stored run is skipped."""
    job_id = job_id_of(app_id)
    cluster.history.wait_for_job(job_id)
    store = HistoryStore(settings.store)
    report = IngestReport(read=1)
    if f"jobhistory:{job_id}" in store.run_ids():
        report.duplicates += 1
    else:
        store.append([history_source(cluster).run(job_id)], report)
    return report.summary()


def verify_locality(cluster: Cluster, run: PlannedRun, app_id: str) -> Locality:
    """The job's container and block-replica shares inside R_j, and why the scheduler let it out of R_j if it did."""
    job_id = job_id_of(app_id)
    cluster.history.wait_for_job(job_id)
    topology = cluster.topology()
    locality = measure(attempt_racks(cluster.history.attempts(job_id), topology), input_blocks(cluster.hdfs, run.hdfs_input), run.racks)
    return replace(locality, rack_set_fallbacks=tuple(cluster.rm.rack_set_fallbacks(app_id)))


def record(settings: PipelineSettings, run: PlannedRun, app: AppReport, locality: Locality) -> dict[str, Any]:
    """Write the job's run record (outcome, times, locality) under ``<home>/records/<plan version>/``."""
    doc = {
        "job": run.name, "recurring_key": run.job.key, "app_id": app.app_id, "state": app.state,
        "final_status": app.final_status, "racks": run.racks, "priority": run.priority, "order": run.order,
        "planned_start": run.planned_start.isoformat(), "started_ms": app.started_ms, "finished_ms": app.finished_ms,
        "elapsed_s": (app.finished_ms - app.started_ms) / 1000 if app.finished_ms else None,
        "locality": locality.to_json(),
    }
    io.write_atomic(record_path(settings, run.version, run.name), json.dumps(doc, indent=2) + "\n")
    return doc


def record_path(settings: PipelineSettings, version: str, name: str) -> Path:
    return settings.records / version / f"{_UNSAFE_PATH.sub('_', name)}.json"
