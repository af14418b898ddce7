"""The planning steps: ingest history -> estimate the period's jobs -> plan -> report -> publish.

Each step reads and writes files in the period's directory ``<home>/periods/<start>/`` so that a
retried step redoes only itself: ``period.json``, ``jobs.json`` and ``details.json`` (estimate),
``cluster.json`` and ``plan.json`` (plan), ``report/`` (report). Publishing copies them to HDFS
under ``<plans_dir>/<start>-<plan id>/`` and points ``<plans_dir>/LATEST`` at it; earlier plans stay.
"""

from __future__ import annotations

import json
import logging
import posixpath
from dataclasses import dataclass
from pathlib import Path

from corral_yarn import io
from corral_yarn.cluster import Cluster
from corral_yarn.contracts import ClusterSpec, Plan, Workload
from corral_yarn.errors import InputError
from corral_yarn.model.classes import with_node_classes
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.history import history_source
from corral_yarn.pipeline.settings import Period, PipelineSettings
from corral_yarn.planner.build import build_plan, warn_interference_unused
from corral_yarn.report.plan import write_plan_report
from estimator.estimate import EstimateOptions, estimate, with_classes_and_interference
from estimator.records import IngestReport
from estimator.store import HistoryStore

log = logging.getLogger(__name__)

PERIOD, JOBS, DETAILS, CLUSTER, PLAN, REPORT = "period.json", "jobs.json", "details.json", "cluster.json", "plan.json", "report"
LATEST = "LATEST"
PUBLISHED_FILES = (PERIOD, JOBS, CLUSTER, PLAN)


def ingest_history(cluster: Cluster, settings: PipelineSettings) -> str:
    """Append the JobHistory server's finished jobs to the history store (runs already stored are skipped)."""
    store = HistoryStore(settings.store)
    report = IngestReport()
    store.append(history_source(cluster).read(report, skip_ids=store.run_ids()), report)
    log.info("history ingest into %s: %s", settings.store, report.summary())
    return report.summary()


def period_dir(settings: PipelineSettings, period: Period) -> Path:
    return settings.periods / period.stamp


def estimate_period(settings: PipelineSettings, period: Period, block_bytes: int, cluster: ClusterSpec | None = None) -> Path:
    """Predict the period's recurring jobs from the store (thesis §2.2), with the catalog's latency profiles, their
    per-class speedups when ``cluster`` has node classes and the jobs they interfere with when the settings say
    (docs/paragon.md); writes jobs.json and details.json.
    ``block_bytes`` is the cluster's dfs.blocksize (map tasks of jobs whose runs do not give them)."""
    out = period_dir(settings, period)
    options = EstimateOptions(at=period.start, horizon=period.horizon, slack=period.slack, block_bytes=block_bytes)
    runs = HistoryStore(settings.store).runs()
    result = estimate(runs, options)
    workload, learnt = with_classes_and_interference(result.workload, runs, period.start, cluster, settings.interference)
    workload = Catalog.load(settings.catalog).with_latency_profiles(workload) if settings.catalog.exists() else workload
    io.save(period, out / PERIOD)
    io.save(workload, out / JOBS)
    io.write_atomic(out / DETAILS, json.dumps({"jobs": result.details, "unsized_jobs": result.unsized_jobs, **learnt}, indent=2) + "\n")
    log.info("estimated %d jobs for the period starting %s", len(result.workload.jobs), period.start.isoformat())
    return out


def planning_cluster(cluster: Cluster, settings: PipelineSettings) -> ClusterSpec:
    """The planner's view of the live cluster: racks and machines discovered, bandwidths as configured, and
    the node classes of ``node_classes_file`` on the racks of the same name (docs/paragon.md)."""
    topology = cluster.topology()
    for disagreement in topology.disagreements:
        log.warning("topology: %s", disagreement)
    live = topology.cluster_spec("live", settings.nic_gbps * 1.25e8, settings.disk_mbps * 1e6,
                                settings.oversubscription, settings.task_memory_mb)
    return live if settings.node_classes is None else _with_node_classes_file(live, settings.node_classes)


def _with_node_classes_file(live: ClusterSpec, path: Path) -> ClusterSpec:
    """``live`` with the node classes of the cluster spec file ``path``; a problem names the Param node_classes_file."""
    try:
        return with_node_classes(live, io.load_cluster(path), source=str(path))  # load_cluster's errors name the file too
    except InputError as exc:
        raise InputError(str(exc), field="node_classes_file") from None


def plan_period(cluster: Cluster, settings: PipelineSettings, directory: Path) -> Plan:
    """Plan the estimated jobs on the live cluster (thesis §4.3), whole racks or slot-aware sharing as the settings
    say (``corral plan --sharing``, docs/planner.md); writes cluster.json and plan.json."""
    period = io.load(Period, directory / PERIOD)
    spec = planning_cluster(cluster, settings)
    workload = io.load_workload(directory / JOBS)
    if settings.interference is not None and settings.sharing == "whole-rack":
        warn_interference_unused(workload.jobs)
    plan = build_plan(workload, spec, period.scenario, sharing=settings.sharing)
    io.save(spec, directory / CLUSTER)
    io.save(plan, directory / PLAN)
    log.info("plan %s (%s sharing): %s %.0f s (lower bound %s) for %d jobs", plan.plan_id, plan.options.sharing, plan.objective,
             plan.objective_s, f"{plan.lower_bound_s:.0f} s" if plan.lower_bound_s else "none", len(plan.jobs))
    return plan


def render_report(directory: Path) -> Path:
    """The plan's HTML report (Gantt chart, per-rack input, per-job table); returns its index.html."""
    index = write_plan_report(io.load_plan(directory / PLAN), directory / REPORT,
                              io.load_cluster(directory / CLUSTER), io.load_workload(directory / JOBS))
    log.info("plan report: %s", index.resolve())
    return index


def version_of(directory: Path) -> str:
    """The published name of a period's plan: ``<period start>-<plan id>``."""
    return f"{directory.name}-{io.load_plan(directory / PLAN).plan_id}"


def publish(cluster: Cluster, settings: PipelineSettings, directory: Path) -> str:
    """Copy the period's plan files and report to HDFS and make them the latest plan; returns its HDFS dir.

    A version already published (same period, same plan id) is not copied again.
    """
    version = version_of(directory)
    target = posixpath.join(settings.plans_dir, version)
    if cluster.hdfs.status(target, strict=False) is None:
        temp = target + "._COPYING_"
        cluster.hdfs.delete(temp, recursive=True)
        cluster.hdfs.makedirs(temp)
        for name in PUBLISHED_FILES:
            cluster.hdfs.upload(posixpath.join(temp, name), str(directory / name), overwrite=True)
        if (directory / REPORT).is_dir():
            cluster.hdfs.upload(posixpath.join(temp, REPORT), str(directory / REPORT), overwrite=True)
        cluster.hdfs.rename(temp, target)
    cluster.hdfs.write(posixpath.join(settings.plans_dir, LATEST), version + "\n", overwrite=True, encoding="utf-8")
    log.info("published plan %s to %s", version, target)
    return target


@dataclass(frozen=True)
class Published:
    """A published plan as the run steps read it back from HDFS."""

    version: str
    period: Period
    plan: Plan
    workload: Workload
    cluster: ClusterSpec


def load_published(cluster: Cluster, settings: PipelineSettings, version: str | None = None) -> Published:
    """The plan named ``version`` under plans_dir, or the latest one."""
    if not version or version == "latest":
        with cluster.hdfs.read(posixpath.join(settings.plans_dir, LATEST), encoding="utf-8") as f:
            version = f.read().strip()
    docs = {}
    for name in PUBLISHED_FILES:
        with cluster.hdfs.read(posixpath.join(settings.plans_dir, version, name), encoding="utf-8") as f:
            docs[name] = json.loads(f.read())
    return Published(version, io.parse(Period, docs[PERIOD], PERIOD), io.parse(Plan, docs[PLAN], PLAN),
                     io.parse(Workload, docs[JOBS], JOBS), io.parse(ClusterSpec, docs[CLUSTER], CLUSTER))
