"""One job run as the history store keeps it, its Arrow schema, and the checks every source applies.

A run carries job-level sizes (the job counters), per-task durations and bytes (for the MRCute fit,
thesis §3.1.2), the nodes and racks it used, and its outcome. Times are UTC datetimes.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pyarrow as pa
from pydantic import ConfigDict, with_config

log = logging.getLogger(__name__)

HISTORY_SCHEMA = "corral-yarn/history/v1"
SUCCEEDED = "SUCCEEDED"


@dataclass(frozen=True)
class TaskSample:
    """One successful task attempt: its duration and the bytes it read (map) or wrote (reduce).

    For a reduce task ``seconds`` is the reduce phase only (Hadoop's elapsedReduceTime), because the
    MRCute reduce term divides each task's output by B_reduce (thesis §3.1.2); ``container_seconds`` is
    the whole attempt (elapsedTime: shuffle and sort included), what its container occupied, or None
    where the source does not say (then taken as ``seconds``).
    """

    seconds: float
    bytes: int
    node: str | None = None
    container_seconds: float | None = None


@with_config(ConfigDict(extra="forbid"))  # validated as such by the CSV/JSON import: a typo is an error
@dataclass(frozen=True)
class JobRun:
    """One run of a (possibly recurring) job."""

    run_id: str
    recurring_key: str
    name: str
    source: str
    submit_time: datetime
    start_time: datetime | None = None
    finish_time: datetime | None = None
    input_bytes: int | None = None
    shuffle_bytes: int | None = None
    output_bytes: int | None = None
    map_tasks: int | None = None
    reduce_tasks: int | None = None
    map_task_samples: tuple[TaskSample, ...] = ()
    reduce_task_samples: tuple[TaskSample, ...] = ()
    racks: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    outcome: str = SUCCEEDED
    application_type: str = "MAPREDUCE"
    input_path: str | None = None
    is_profile: bool = False
    plan_id: str | None = None  # the plan, period and planned job that made the run (its corral- tags), None for an ad hoc run
    plan_period: str | None = None
    planned_job: str | None = None

    @property
    def date(self) -> str:
        """The store partition: the UTC date of submission."""
        return self.submit_time.astimezone(UTC).strftime("%Y-%m-%d")

    @property
    def has_sizes(self) -> bool:
        return None not in (self.input_bytes, self.shuffle_bytes, self.output_bytes)


_TASKS = pa.list_(pa.struct([("seconds", pa.float64()), ("bytes", pa.int64()), ("node", pa.string()),
                              ("container_seconds", pa.float64())]))  # added to v1 later: older part files read it as None
_TIME = pa.timestamp("ms", tz="UTC")
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("recurring_key", pa.string()),
        ("name", pa.string()),
        ("source", pa.string()),
        ("submit_time", _TIME),
        ("start_time", _TIME),
        ("finish_time", _TIME),
        ("input_bytes", pa.int64()),
        ("shuffle_bytes", pa.int64()),
        ("output_bytes", pa.int64()),
        ("map_tasks", pa.int32()),
        ("reduce_tasks", pa.int32()),
        ("map_task_samples", _TASKS),
        ("reduce_task_samples", _TASKS),
        ("racks", pa.list_(pa.string())),
        ("nodes", pa.list_(pa.string())),
        ("outcome", pa.string()),
        ("application_type", pa.string()),
        ("input_path", pa.string()),
        ("is_profile", pa.bool_()),
        ("plan_id", pa.string()),
        ("plan_period", pa.string()),
        ("planned_job", pa.string()),
    ],
    metadata={"schema": HISTORY_SCHEMA},
)


def to_table(runs: list[JobRun]) -> pa.Table:
    rows = [dataclasses.asdict(r) for r in runs]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


OPTIONAL_COLUMNS = ("plan_id", "plan_period", "planned_job")  # added to v1 later: a part file without them reads them as None


def from_table(table: pa.Table) -> list[JobRun]:
    runs = []
    for name in OPTIONAL_COLUMNS:
        if name not in table.column_names:
            table = table.append_column(pa.field(name, pa.string()), pa.nulls(table.num_rows, pa.string()))
    for row in table.select(SCHEMA.names).to_pylist():
        for key in ("map_task_samples", "reduce_task_samples"):
            row[key] = tuple(TaskSample(**t) for t in row[key] or ())
        row["racks"], row["nodes"] = tuple(row["racks"] or ()), tuple(row["nodes"] or ())
        runs.append(JobRun(**row))
    return runs


@dataclass
class IngestReport:
    """What one ingestion did: rows written, duplicates dropped, and rows skipped per reason."""

    read: int = 0
    written: int = 0
    duplicates: int = 0
    clamped: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, what: str) -> None:
        """Count a skipped row and say which one in the log (never a silent loss)."""
        self.skipped[reason] += 1
        log.warning("skipped %s: %s", what, reason)

    def merge(self, other: IngestReport) -> None:
        self.read += other.read
        self.written += other.written
        self.duplicates += other.duplicates
        self.clamped += other.clamped
        self.skipped.update(other.skipped)

    def summary(self) -> str:
        skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(self.skipped.items())) or "none"
        return (
            f"read {self.read}, written {self.written}, duplicates {self.duplicates}, "
            f"clock-skew clamped {self.clamped}, skipped {sum(self.skipped.values())} ({skipped})"
        )


@dataclass(frozen=True)
class SkewPolicy:
    """Clock skew between the hosts that stamp submit / start / finish times.

    Inversions up to ``tolerance`` are clamped (start := submit, finish := start) and counted;
    larger ones, and times later than ``now + tolerance``, skip the run with reason "clock skew".
    """

    tolerance: timedelta = timedelta(seconds=5)
    now: datetime | None = None


_LIMITS = {"input_bytes": 2**63 - 1, "shuffle_bytes": 2**63 - 1, "output_bytes": 2**63 - 1,  # the Arrow schema's int64
           "map_tasks": 2**31 - 1, "reduce_tasks": 2**31 - 1}  # and int32


def out_of_range(run: JobRun) -> str | None:
    """What in ``run`` the store cannot hold (a value beyond its column's integer type), or None.

    Such a value is a broken export (wrong column, overflowed counter), not a job: sources make it an
    error naming the file, line and field rather than a skipped row.
    """
    for name, top in _LIMITS.items():
        if (value := getattr(run, name)) is not None and not -top - 1 <= value <= top:
            return f"{name} {value} is beyond what the history store holds ({-top - 1}..{top})"
    samples = (*run.map_task_samples, *run.reduce_task_samples)
    top = _LIMITS["input_bytes"]
    if any(not -top - 1 <= t.bytes <= top for t in samples):
        return f"a task sample's bytes are beyond what the history store holds ({-top - 1}..{top})"
    return None


def check_run(run: JobRun, policy: SkewPolicy, report: IngestReport) -> JobRun | None:
    """The run to store (possibly clamped), or None after counting why it is skipped."""
    if any(v is not None and v < 0 for v in (run.input_bytes, run.shuffle_bytes, run.output_bytes)):
        report.skip("negative bytes", run.run_id)
        return None
    now = policy.now or datetime.now(UTC)
    times = [t for t in (run.submit_time, run.start_time, run.finish_time) if t is not None]
    if max(times) > now + policy.tolerance:
        report.skip("clock skew", f"{run.run_id} (time in the future)")
        return None
    start = run.start_time
    if start is not None and start < run.submit_time:
        if run.submit_time - start > policy.tolerance:
            report.skip("clock skew", f"{run.run_id} (start before submit)")
            return None
        start = run.submit_time
    finish = run.finish_time
    if finish is not None and start is not None and finish < start:
        if start - finish > policy.tolerance:
            report.skip("clock skew", f"{run.run_id} (finish before start)")
            return None
        finish = start
    if (start, finish) == (run.start_time, run.finish_time):
        return run
    report.clamped += 1
    return dataclasses.replace(run, start_time=start, finish_time=finish)
