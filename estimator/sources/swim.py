"""SWIM workload traces (``../shared/data/swim/``): tab-separated job id, submit second, gap, input,
shuffle and output bytes, no header; the ``withInputPaths`` variant adds the job's input path and two
empty columns (nine in all). The variant is told by its columns, line by line.

A SWIM trace carries no job names, task counts or durations, so:

* recurring-job key (docs/estimator.md): with ``--key input_path`` and a path, the normalised path
  (``estimator.identity.normalise_path``); otherwise the job's size class, ``swim-<kind>-in1e<d>``:
  ``kind`` is ``maponly`` (no shuffle), ``shrink`` (shuffle < input) or ``expand`` (shuffle >= input),
  and ``d`` the decade of its input bytes (floor log10). The size class is the run's name, so
  ``--key name`` and ``--key pattern`` work on it;
* tasks: one map task per 128 MiB HDFS block, one reducer per 1e9 shuffle bytes, at most 999 (Hive's
  defaults of the trace's era, ``hive.exec.reducers.bytes.per.reducer`` / ``hive.exec.reducers.max``);
* times: submit = ``start`` + the trace's second; no start or finish times;
* identity: a hash of the start, job id, second, sizes and path, so a copy of a trace under another
  name is stored once.
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

from corral_yarn.contracts import BLOCK_BYTES
from estimator.errors import HistoryInputError
from estimator.identity import RecurringKey
from estimator.records import IngestReport, JobRun, out_of_range

REDUCER_BYTES = 1e9
MAX_REDUCERS = 999
DEFAULT_START = datetime(2009, 10, 1, tzinfo=UTC)
COLUMNS = ("job_id", "submit_s", "gap_s", "input_bytes", "shuffle_bytes", "output_bytes")
WITH_PATHS = 9  # the six columns, the input path, two empty columns


def swim_key(input_bytes: int, shuffle_bytes: int) -> str:
    """The size class standing in for a recurring job in a SWIM trace."""
    kind = "maponly" if shuffle_bytes == 0 else "shrink" if shuffle_bytes < input_bytes else "expand"
    return f"swim-{kind}-in1e{int(math.log10(max(input_bytes, 1)))}"


def _fields(line: str) -> tuple[list[str], str | None]:
    """The six SWIM values and the input path (None in the six-column format)."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) == len(COLUMNS):
        return fields, None
    if len(fields) == WITH_PATHS and fields[6].strip() and not any(f.strip() for f in fields[7:]):
        return fields[:6], fields[6].strip()
    raise ValueError(f"{len(fields)} fields, expected 6 (or 9 with an input path)")


def _int(text: str, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{column}: not an integer: {text!r}") from None


def _run(fields: list[str], path: str | None, start: datetime, key: RecurringKey, source: str) -> JobRun:
    job_id = fields[0]
    second, _gap, input_bytes, shuffle_bytes, output_bytes = (_int(f, c) for f, c in zip(fields[1:], COLUMNS[1:], strict=True))
    size_class = swim_key(input_bytes, shuffle_bytes)
    identity = hashlib.sha1(f"{start.isoformat()}|{job_id}|{second}|{input_bytes}|{shuffle_bytes}|{output_bytes}|{path}".encode()).hexdigest()
    return JobRun(
        run_id=f"swim:{identity[:20]}",
        recurring_key=key.key(size_class, path),
        name=size_class,
        source=f"{source}:{job_id}",  # provenance only: the identity is the content
        submit_time=start + timedelta(seconds=second),
        input_bytes=input_bytes,
        shuffle_bytes=shuffle_bytes,
        output_bytes=output_bytes,
        map_tasks=max(1, math.ceil(input_bytes / BLOCK_BYTES)),
        reduce_tasks=0 if shuffle_bytes == 0 else min(MAX_REDUCERS, math.ceil(shuffle_bytes / REDUCER_BYTES)),
        input_path=path,
    )


def _lines(p: Path) -> list[str]:
    try:
        return p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise HistoryInputError(f"no such file: {p}") from None
    except UnicodeDecodeError as exc:
        raise HistoryInputError(f"{p} is not a SWIM trace (not text): {exc}") from None


def read_swim(path: str | Path, report: IngestReport, start: datetime = DEFAULT_START, key: RecurringKey | None = None) -> list[JobRun]:
    """Runs from a SWIM TSV; malformed lines are skipped and counted. A file with no good line, a value
    beyond what the store holds, or ``--key`` naming a column SWIM lacks is an error naming file and line."""
    p, key = Path(path), key or RecurringKey()
    if key.mode == "column":
        raise HistoryInputError(f"--key {key.column}: a SWIM trace has no such column; use name (the size class), input_path or pattern")
    runs = []
    for n, line in enumerate(_lines(p), start=1):
        if not line.strip():
            continue
        report.read += 1
        try:
            fields, input_path = _fields(line)
            run = _run(fields, input_path, start, key, f"swim:{p.name}")
        except ValueError as exc:
            report.skip("malformed row", f"{p}:{n}: {exc}")
            continue
        if why := out_of_range(run):
            raise HistoryInputError(f"{p}:{n}: {why}")
        runs.append(run)
    if not runs:
        what = "is empty" if not report.read else f"has no valid SWIM line among {report.read}"
        raise HistoryInputError(f"{p} {what} (job id, submit s, gap s, input, shuffle, output bytes[, input path, '', ''], tab-separated)")
    if key.mode == "input_path" and all(r.input_path is None for r in runs):
        raise HistoryInputError(f"--key input_path: {p} has no input path column (the withInputPaths variant has nine)")
    return runs
