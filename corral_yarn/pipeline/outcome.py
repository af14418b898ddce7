"""What a period's plan became: its runs from the history store and its run records, joined to the plan
(:mod:`corral_yarn.report.actual`) for the planned-vs-actual report (``corral report --history``, and the
run DAG's summary step re-rendering the period's report)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

from corral_yarn import io
from corral_yarn.cluster.tags import period_id
from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError
from corral_yarn.pipeline.planning import CLUSTER, JOBS, PERIOD, PLAN, REPORT, version_of
from corral_yarn.pipeline.settings import Period, PipelineSettings
from corral_yarn.report import write_plan_report
from corral_yarn.report.actual import ActualRun, Comparison, RunLocality, compare
from estimator.records import JobRun
from estimator.store import HistoryStore

log = logging.getLogger(__name__)
NOT_RECORDS = {"summary.json", "not_run.json"}  # written beside the records by the run DAG's summary


class _Locality(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    containers: NonNegativeInt
    containers_in_racks: NonNegativeInt
    blocks: NonNegativeInt
    blocks_with_replica_in_racks: NonNegativeInt

    @model_validator(mode="after")
    def _parts_within_totals(self) -> _Locality:
        if self.containers_in_racks > self.containers or self.blocks_with_replica_in_racks > self.blocks:
            raise ValueError("more containers or blocks inside R_j than in all")
        return self


class RunRecord(BaseModel):
    """The fields of a run record (``execution.record``) the report reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    job: str = Field(min_length=1, description="the planned job's name in the plan")
    locality: _Locality


def actual_runs(store: Path) -> list[ActualRun]:
    """Every run of the history store at ``store``, as the report joins them."""
    if not (store / "_schema.json").is_file():
        raise InputError(f"{store} is not a history store (no _schema.json; see 'corral history ingest')", field="--history")
    return [_actual(r) for r in HistoryStore(store).runs()]


def _actual(run: JobRun) -> ActualRun:
    return ActualRun(run.run_id, run.name, run.submit_time, run.start_time, run.finish_time, run.outcome, run.racks,
                     run.plan_id, run.plan_period, run.planned_job)


def run_localities(records: Path) -> dict[str, RunLocality]:
    """The locality of each recorded job of one plan version's records directory, by planned job name."""
    if not records.is_dir():
        raise InputError(f"no such directory: {records}", field="--records")
    found: dict[str, RunLocality] = {}
    for path in sorted(p for p in records.glob("*.json") if p.name not in NOT_RECORDS):
        record = io.parse(RunRecord, io.read_json(path), source=str(path))
        loc = record.locality
        found[record.job] = RunLocality(loc.containers, loc.containers_in_racks, loc.blocks, loc.blocks_with_replica_in_racks)
    return found


def period_comparison(plan: Plan, start: datetime, end: datetime, store: Path, records: Path | None = None) -> Comparison:
    """The plan of the period [start, end) against the runs in ``store`` (and the locality in ``records``)."""
    return compare(plan, period_id(start), start, end, actual_runs(store), run_localities(records) if records else None)


def report_outcome(settings: PipelineSettings, version: str, period_start: datetime) -> Path | None:
    """Re-render the period's report (``<home>/periods/<period>/report/``) with the plan against what ran:
    the runs ingested into the store so far and the run records of ``version``; returns its index.html,
    or None when this worker has no copy of the period's files (``home`` not shared with the planner's)."""
    directory = settings.periods / period_id(period_start)
    if not (directory / PLAN).is_file():
        log.warning("no %s here: the period's report is not re-rendered with the runs", directory / PLAN)
        return None
    plan, period = io.load_plan(directory / PLAN), io.load(Period, directory / PERIOD)
    if version != version_of(directory):
        log.warning("%s holds plan %s, not %s (planned again since): its report is not re-rendered with the runs", directory, plan.plan_id, version)
        return None
    runs = actual_runs(settings.store) if (settings.store / "_schema.json").is_file() else []
    records = settings.records / version
    actual = compare(plan, period.stamp, period.start, period.start + period.horizon, runs,
                     run_localities(records) if records.is_dir() else None)
    index = write_plan_report(plan, directory / REPORT, io.load_cluster(directory / CLUSTER), io.load_workload(directory / JOBS), actual)
    log.info("period report with the runs: %s", index.resolve())
    return index
