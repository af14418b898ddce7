"""SWIM workload traces (``../shared/data/swim/``): tab-separated job id, submit second, gap, input,
shuffle and output bytes, no header.

A SWIM trace carries no job names, task counts or durations, so:

* recurring-job grouping (documented in docs/estimator.md): a job's key is its size class,
  ``swim-<kind>-in1e<d>``: ``kind`` is ``maponly`` (no shuffle), ``shrink`` (shuffle < input) or
  ``expand`` (shuffle >= input), and ``d`` the decade of its input bytes (floor log10);
* tasks: one map task per 128 MiB HDFS block, one reducer per 1e9 shuffle bytes, at most 999 (Hive's
  defaults of the trace's era, ``hive.exec.reducers.bytes.per.reducer`` / ``hive.exec.reducers.max``);
* times: submit = ``start`` + the trace's second; no start or finish times.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

from estimator.errors import HistoryInputError
from estimator.records import IngestReport, JobRun

BLOCK_BYTES = 128 * 2**20
REDUCER_BYTES = 1e9
MAX_REDUCERS = 999
DEFAULT_START = datetime(2009, 10, 1, tzinfo=UTC)


def swim_key(input_bytes: int, shuffle_bytes: int) -> str:
    """The size class standing in for a recurring job in a SWIM trace."""
    kind = "maponly" if shuffle_bytes == 0 else "shrink" if shuffle_bytes < input_bytes else "expand"
    return f"swim-{kind}-in1e{int(math.log10(max(input_bytes, 1)))}"


def _run(fields: list[str], source: str, start: datetime) -> JobRun:
    job_id = fields[0]
    second, _gap, input_bytes, shuffle_bytes, output_bytes = (int(f) for f in fields[1:])
    return JobRun(
        run_id=f"{source}:{job_id}",
        recurring_key=swim_key(input_bytes, shuffle_bytes),
        name=job_id,
        source=source,
        submit_time=start + timedelta(seconds=second),
        input_bytes=input_bytes,
        shuffle_bytes=shuffle_bytes,
        output_bytes=output_bytes,
        map_tasks=max(1, math.ceil(input_bytes / BLOCK_BYTES)),
        reduce_tasks=0 if shuffle_bytes == 0 else min(MAX_REDUCERS, math.ceil(shuffle_bytes / REDUCER_BYTES)),
    )


def read_swim(path: str | Path, report: IngestReport, start: datetime = DEFAULT_START) -> list[JobRun]:
    """Runs from a SWIM TSV; malformed lines are skipped and counted, a file with none good is an error."""
    p = Path(path)
    source = f"swim:{p.stem}"
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise HistoryInputError(f"no such file: {p}") from None
    except UnicodeDecodeError as exc:
        raise HistoryInputError(f"{p} is not a SWIM trace (not text): {exc}") from None
    runs = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        report.read += 1
        fields = line.split("\t")
        try:
            if len(fields) != 6:
                raise ValueError(f"{len(fields)} fields, expected 6")
            runs.append(_run(fields, source, start))
        except ValueError as exc:
            report.skip("malformed row", f"{p}:{n}: {exc}")
    if report.read and not runs:
        raise HistoryInputError(f"{p} has no valid SWIM line (job id, submit s, gap s, input, shuffle, output bytes, tab-separated)")
    return runs
