"""The documented CSV / JSON import (docs/estimator.md, "Import format").

Columns (CSV header, or keys of each JSON object): ``name`` and ``submit_time`` are required;
``run_id``, ``recurring_key``, ``input_path``, ``start_time``, ``finish_time``, ``input_bytes``,
``shuffle_bytes``, ``output_bytes``, ``map_tasks``, ``reduce_tasks``, ``outcome``,
``application_type``, ``is_profile`` are optional. JSON objects may also carry ``map_task_samples``
and ``reduce_task_samples`` (lists of ``{"seconds", "bytes", "node"}``, optionally ``"container_seconds"``) and ``racks`` / ``nodes``.
Times are ISO 8601 (a time without zone is UTC) or epoch seconds. A row that does not parse is
skipped and counted with its line; an unknown column (a typo), a value the store cannot hold, and a
file that holds no run or cannot be read at all are errors naming file, line and field. With
``--key COLUMN`` one more column is allowed: the recurring key is its value.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from estimator.errors import HistoryInputError
from estimator.identity import RecurringKey, safe_key
from estimator.records import IngestReport, JobRun, out_of_range

REQUIRED = ("name", "submit_time")
FIELDS = tuple(f.name for f in dataclasses.fields(JobRun) if f.name != "source")
_RUN = TypeAdapter(JobRun)
_PLACEHOLDER = "?"


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _unknown(columns: list[str], key: RecurringKey) -> str | None:
    """The first column that is neither a run field nor the ``--key`` column, with a suggestion."""
    for c in columns:
        if c not in FIELDS and c != key.column:
            close = difflib.get_close_matches(c, FIELDS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(FIELDS)}"
            return f"unknown column {c!r} ({hint}; or give --key {c} to key runs by it)"
    return None


def parse_row(data: dict[str, Any], source: str, key: RecurringKey) -> JobRun:
    """One imported run. Its id is content-based, so the same run imported from any file (CSV or JSON,
    any name) is stored once: ``import:<run_id>`` when given, else ``import:`` + a hash of its name and
    submit time (as parsed: ISO 8601 and epoch seconds of one instant agree)."""
    fields = {k: v for k, v in data.items() if v not in ("", None) and k != key.column}
    given_id = fields.pop("run_id", None)
    fields.update(source=source, run_id=_PLACEHOLDER, recurring_key=fields.get("recurring_key") or _PLACEHOLDER)
    run = _RUN.validate_python(fields)
    submit = _utc(run.submit_time)
    identity = str(given_id) if given_id is not None else hashlib.sha1(f"{run.name}|{submit.isoformat()}".encode()).hexdigest()[:20]
    recurring = safe_key(run.recurring_key) if "recurring_key" in data and data["recurring_key"] not in ("", None) else \
        key.key(run.name, run.input_path, None if key.column is None else str(data.get(key.column) or "") or None)
    return dataclasses.replace(run, run_id=f"import:{identity}", recurring_key=recurring, submit_time=submit,
                               start_time=_utc(run.start_time), finish_time=_utc(run.finish_time), outcome=run.outcome.upper())


def _row(data: Any, where: str, source: str, key: RecurringKey, report: IngestReport) -> JobRun | None:
    """The run of one row; a malformed row is skipped and counted, an unknown field or a value beyond
    what the store holds is an error naming file, line and field (a typo must not drop data silently)."""
    if not isinstance(data, dict):
        report.skip("malformed row", f"{where}: not an object")
        return None
    if why := _unknown(list(data), key):
        raise HistoryInputError(f"{where}: {why}")
    try:
        run = parse_row(data, source, key)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        report.skip("malformed row", f"{where}: {field}: {err['msg']}")
        return None
    if why := out_of_range(run):
        raise HistoryInputError(f"{where}: {why}")
    return run


def _some(runs: list[JobRun], p: Path, report: IngestReport) -> list[JobRun]:
    """``runs``, or an error when the file held none (empty, a header only, or every row malformed)."""
    if not runs:
        what = "holds no run" if not report.read else f"has no valid run among {report.read} rows (see the warnings)"
        raise HistoryInputError(f"{p} {what}")
    return runs


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HistoryInputError(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise HistoryInputError(f"{path} is not UTF-8 text (corrupt?): {exc}") from None


def read_csv(path: str | Path, key: RecurringKey, report: IngestReport) -> list[JobRun]:
    """Runs from a CSV file with a header row; malformed rows are skipped and counted."""
    p = Path(path)
    reader = csv.DictReader(_text(p).splitlines())
    header = reader.fieldnames or []
    if not header:
        raise HistoryInputError(f"{p} is empty (expected a CSV header row, then one run per row)")
    if missing := [c for c in REQUIRED if c not in header]:
        raise HistoryInputError(f"{p}:1: the CSV header lacks required columns {missing} (header: {header})")
    if key.column and key.column not in header:
        raise HistoryInputError(f"{p}:1: --key {key.column}: no such column (header: {header})")
    if why := _unknown(header, key):
        raise HistoryInputError(f"{p}:1: {why}")
    runs = []
    for row in reader:
        report.read += 1
        where = f"{p}:{reader.line_num}"
        if None in row or None in row.values():  # too many or too few fields, e.g. a truncated last line
            report.skip("malformed row", f"{where}: wrong number of fields for {len(header)} columns")
            continue
        if (run := _row(row, where, f"csv:{p.name}", key, report)) is not None:
            runs.append(run)
    return _some(runs, p, report)


def read_json(path: str | Path, key: RecurringKey, report: IngestReport) -> list[JobRun]:
    """Runs from a JSON array (or ``{"runs": [...]}``) or from JSON Lines, one object a line.

    In JSON Lines a line that does not parse (e.g. a truncated last line) is skipped and counted;
    a JSON document that does not parse is an error, as nothing in it can be trusted.
    """
    p = Path(path)
    text = _text(p)
    source = f"json:{p.name}"
    if not text.strip():
        raise HistoryInputError(f"{p} is empty (expected a JSON array of runs, {{\"runs\": [...]}} or JSON Lines)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _json_lines(p, text, exc, source, key, report)
    items = data.get("runs") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise HistoryInputError(f"{p}: expected a JSON array of runs or an object with a 'runs' array")
    report.read += len(items)
    runs = [_row(item, f"{p}[{i}]", source, key, report) for i, item in enumerate(items)]
    return _some([r for r in runs if r is not None], p, report)


def _json_lines(p: Path, text: str, error: json.JSONDecodeError, source: str, key: RecurringKey, report: IngestReport) -> list[JobRun]:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    try:
        first = json.loads(lines[0][1]) if lines else None
    except json.JSONDecodeError:
        first = None
    if not isinstance(first, dict):
        raise HistoryInputError(f"{p} is neither JSON nor JSON Lines (corrupt or truncated?): {error}")
    runs = []
    for n, line in lines:
        report.read += 1
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            report.skip("malformed row", f"{p}:{n}: {exc}")
            continue
        if (run := _row(item, f"{p}:{n}", source, key, report)) is not None:
            runs.append(run)
    return _some(runs, p, report)
