"""``corral demo``: the whole product on one machine — the embedded Hadoop cluster, the bundled recurring
workload with two weeks of generated history, and both Airflow DAGs run end to end with
``airflow dags test`` (docs/pipeline.md).

The demo's state is under ``.corral/``: ``airflow/`` (AIRFLOW_HOME: its SQLite database and the DAG
runs' logs), ``pipeline/`` (catalog, history store, period files and report, run records) and
``minicluster/`` (the cluster). The cluster's addresses reach the DAGs only as Airflow Connections.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Collection

from corral_yarn.contracts import Sharing
from corral_yarn.errors import CorralError
from corral_yarn.minicluster.launcher import StartOptions, load_description, start_cluster, stop_cluster
from corral_yarn.pipeline import demo_workload
from corral_yarn.pipeline.connections import connection_env
from corral_yarn.pipeline.settings import PipelineSettings
from estimator.store import HistoryStore

log = logging.getLogger(__name__)

DAGS_FOLDER = Path(str(resources.files("corral_yarn") / "airflow" / "dags"))  # package data: works from a wheel too


class PipelineRunError(CorralError):
    """An ``airflow`` command of the pipeline failed; the message names its log."""


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo keeps Airflow's home and the pipeline's home, and the DAG folder Airflow reads."""

    airflow_home: Path
    pipeline_home: Path
    plans_dir: str = "/corral/plans"
    runs_dir: str = "/corral/runs"
    dags_folder: Path = DAGS_FOLDER

    @property
    def logs(self) -> Path:
        return self.airflow_home / "demo-logs"

    @classmethod
    def under(cls, home: Path) -> DemoPaths:
        return cls(airflow_home=home / "airflow", pipeline_home=home / "pipeline")


def prepare(paths: DemoPaths, description: dict[str, Any], period_start: datetime, keys: Collection[str] | None = None) -> PipelineSettings:
    """A fresh pipeline home: the bundled catalog, the period's local input and the generated history
    (of the bundled jobs whose recurring keys are ``keys``; all of them by default)."""
    shutil.rmtree(paths.pipeline_home, ignore_errors=True)
    settings = PipelineSettings(home=paths.pipeline_home.resolve(), plans_dir=paths.plans_dir, runs_dir=paths.runs_dir)
    catalog = demo_workload.demo_catalog(settings.home, description["examples_jar"])
    if keys is not None:
        catalog = catalog.model_copy(update={"jobs": [j for j in catalog.jobs if j.key in keys]})
    catalog.save(settings.catalog)
    demo_workload.write_period_inputs(catalog, period_start)
    kept = {j.key for j in catalog.jobs}
    HistoryStore(settings.store).append([run for run in demo_workload.demo_history(period_start) if run.recurring_key in kept])
    return settings


def airflow_env(paths: DemoPaths, description: dict[str, Any]) -> dict[str, str]:
    """The environment of the ``airflow`` commands: its home, our DAGs, and the cluster as Connections."""
    return {
        **os.environ,
        "AIRFLOW_HOME": str(paths.airflow_home.resolve()),
        "AIRFLOW__CORE__DAGS_FOLDER": str(paths.dags_folder),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "CORRAL_PIPELINE_HOME": str(paths.pipeline_home.resolve()),
        **connection_env(description),
    }


@dataclass(frozen=True)
class LocalAirflow:
    """``airflow`` commands against the demo's AIRFLOW_HOME (SQLite), each logged to its own file."""

    paths: DemoPaths
    description: dict[str, Any]

    def run(self, what: str, args: list[str]) -> None:
        log_file = self.paths.logs / f"{what}.log"
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log.info("running %s (log: %s)", what, log_file)
        with open(log_file, "ab") as out:  # a rerun appends to the same log
            done = subprocess.run([sys.executable, "-m", "airflow", *args], env=airflow_env(self.paths, self.description),
                                  stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise PipelineRunError(f"{what} failed (airflow exit {done.returncode}); see {log_file}")

    def migrate(self) -> None:
        self.run("airflow-db-migrate", ["db", "migrate"])

    def test_dag(self, dag_id: str, conf: dict[str, Any], logical_date: datetime | None = None) -> None:
        """One run of ``dag_id`` in this process's Airflow (``airflow dags test``), Params overridden by ``conf``;
        its logical date is ``logical_date`` (default: now)."""
        self.run(dag_id, ["dags", "test", dag_id, *([logical_date.isoformat()] if logical_date else []), "--conf", json.dumps(conf)])


def plan_conf(settings: PipelineSettings, start: datetime, scenario: str, sharing: Sharing = "whole-rack") -> dict[str, Any]:
    return {**_where(settings), "period_start": start.isoformat(), "scenario": scenario, "sharing": sharing, "horizon": "1d", "slack": 0.1}


def run_conf(settings: PipelineSettings) -> dict[str, Any]:
    return {**_where(settings), "plan_version": "latest"}


def _where(settings: PipelineSettings) -> dict[str, Any]:
    return {"home": str(settings.home), "plans_dir": settings.plans_dir, "runs_dir": settings.runs_dir}


def run_pipeline(airflow: LocalAirflow, settings: PipelineSettings, start: datetime, scenario: str = "batch",
                 step: Callable[[str], None] = lambda _: None, sharing: Sharing = "whole-rack") -> dict[str, Any]:
    """Migrate Airflow's database, run corral_plan (``sharing``: its Param) then corral_run; returns the run summary."""
    airflow.migrate()
    step("airflow database")
    airflow.test_dag("corral_plan", plan_conf(settings, start, scenario, sharing))
    step("corral_plan")
    airflow.test_dag("corral_run", run_conf(settings))
    step("corral_run")
    return latest_summary(settings)


def latest_summary(settings: PipelineSettings) -> dict[str, Any]:
    """The newest run summary under the records directory."""
    summaries = sorted(settings.records.glob("*/summary.json"), key=lambda p: p.stat().st_mtime)
    if not summaries:
        raise PipelineRunError(f"no run summary under {settings.records}")
    return json.loads(summaries[-1].read_text())


def today() -> datetime:
    """Midnight UTC today: the demo plans the current day."""
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class DemoResult:
    """What one demo run did: the run summary, where the pipeline's state is, and each step's end time."""

    summary: dict[str, Any]
    settings: PipelineSettings
    paths: DemoPaths
    step_ends: dict[str, float]  # seconds since the demo began


def run_demo(home: Path, cluster_json: Path | None = None, scenario: str = "batch",
             step: Callable[[str], None] = lambda _: None, sharing: Sharing = "whole-rack") -> DemoResult:
    """Start the embedded cluster under ``home`` (or use the running one ``cluster_json`` names), run the
    pipeline on the bundled workload for today (planned with ``sharing``), and stop the cluster it started (also on failure)."""
    began, ends = time.monotonic(), {}

    def done(what: str) -> None:
        ends[what] = round(time.monotonic() - began, 1)
        step(what)

    paths, out = DemoPaths.under(home), home / "minicluster" / "cluster.json"
    description = start_cluster(StartOptions(base_dir=home / "minicluster", out=out)) if cluster_json is None else load_description(cluster_json.resolve())
    try:
        if cluster_json is None:
            done("cluster started")
        start = today()
        settings = prepare(paths, description, start)
        done("workload prepared")
        summary = run_pipeline(LocalAirflow(paths, description), settings, start, scenario, done, sharing)
    finally:
        if cluster_json is None:
            stop_cluster(out.resolve())
            done("cluster stopped")
    return DemoResult(summary, settings, paths, ends)
