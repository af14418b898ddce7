"""Jobs without history (thesis §3.1.2): the operator declares when a new job arrives and how much input
it reads; its selectivities, rates and reducers come from its profiling runs (``corral history profile``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from corral_yarn.contracts import MAX_TASKS
from corral_yarn.errors import InputError
from estimator.fit import MRCuteParams, fit_job
from estimator.records import JobRun


class NewJob(BaseModel):
    """One declared run of a new job in the planning period."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    recurring_key: str = Field(min_length=1, description="the key its profiling runs are stored under")
    arrival: datetime = Field(description="when it will be submitted (ISO 8601; UTC without a zone)")
    input_bytes: float = Field(gt=0, le=1e18, allow_inf_nan=False)
    map_tasks: int | None = Field(None, ge=1, le=MAX_TASKS, description="default: one per HDFS block (corral estimate --block-size)")

    @field_validator("arrival")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class NewJobs(BaseModel):
    """The ``--new-jobs`` file: ``{"jobs": [...]}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs: list[NewJob]


def declared_sizes(job: NewJob, params: MRCuteParams, field: str) -> dict[str, float]:
    """Input as declared, shuffle = input / S_map, output = shuffle / S_reduce (thesis §3.1.2)."""
    if params.map_selectivity is None or params.reduce_selectivity is None:
        raise InputError(f"no profiling run with sizes for {job.recurring_key!r}; run 'corral history profile' for it first",
                         field=field)
    shuffle = job.input_bytes / params.map_selectivity
    return {"input_bytes": job.input_bytes, "shuffle_bytes": shuffle, "output_bytes": shuffle / params.reduce_selectivity}


def new_job_params(job: NewJob, runs: Sequence[JobRun]) -> MRCuteParams:
    """The job's fit from its runs, with the declared (or block-sized) map tasks in place of the sample's."""
    params = fit_job([r for r in runs if r.recurring_key == job.recurring_key])
    per_map = job.input_bytes / job.map_tasks if job.map_tasks else None  # None: one per block of the cluster
    return MRCuteParams(**{**asdict(params), "bytes_per_map_task": per_map})


def check_arrivals(jobs: Sequence[NewJob], start: datetime, end: datetime, source: str = "new jobs") -> None:
    for k, job in enumerate(jobs):
        if not start <= job.arrival < end:
            raise InputError(f"{job.arrival.isoformat()} is outside the planning period [{start.isoformat()}, {end.isoformat()})",
                             field=f"{source}: jobs[{k}].arrival")
