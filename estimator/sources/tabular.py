"""The documented CSV / JSON import (docs/estimator.md, "Import format").

Columns (CSV header, or keys of each JSON object): ``name`` and ``submit_time`` are required;
``run_id``, ``recurring_key``, ``input_path``, ``start_time``, ``finish_time``, ``input_bytes``,
``shuffle_bytes``, ``output_bytes``, ``map_tasks``, ``reduce_tasks``, ``outcome``,
``application_type``, ``is_profile`` are optional. JSON objects may also carry ``map_task_samples``
and ``reduce_task_samples`` (lists of ``{"seconds", "bytes", "node"}``) and ``racks`` / ``nodes``.
Times are ISO 8601 (a time without zone is UTC) or epoch seconds. A row that does not parse is
skipped and counted with its line; a file that cannot be read at all is an error.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from estimator.errors import HistoryInputError
from estimator.identity import RecurringKey, safe_key
from estimator.records import IngestReport, JobRun

REQUIRED = ("name", "submit_time")
_RUN = TypeAdapter(JobRun)


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def parse_row(data: dict[str, Any], source: str, key: RecurringKey) -> JobRun:
    """One imported run; ``run_id`` defaults to a hash of name and submit time, the key to ``key``'s."""
    fields = {k: v for k, v in data.items() if v not in ("", None)}
    fields["source"] = source
    fields.setdefault("run_id", hashlib.sha1(f"{fields.get('name')}|{fields.get('submit_time')}".encode()).hexdigest()[:16])
    fields["run_id"] = f"{source}:{fields['run_id']}"
    fields["recurring_key"] = safe_key(str(fields["recurring_key"])) if "recurring_key" in fields else key.key(str(fields.get("name", "")), fields.get("input_path"))
    run = _RUN.validate_python(fields)
    return dataclasses.replace(
        run, submit_time=_utc(run.submit_time), start_time=_utc(run.start_time), finish_time=_utc(run.finish_time), outcome=run.outcome.upper()
    )


def _row(data: Any, where: str, source: str, key: RecurringKey, report: IngestReport) -> JobRun | None:
    if not isinstance(data, dict):
        report.skip("malformed row", f"{where}: not an object")
        return None
    try:
        return parse_row(data, source, key)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        report.skip("malformed row", f"{where}: {field}: {err['msg']}")
        return None


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
    if missing := [c for c in REQUIRED if c not in header]:
        raise HistoryInputError(f"{p}: the CSV header lacks required columns {missing} (header: {header})")
    runs = []
    for row in reader:
        report.read += 1
        where = f"{p}:{reader.line_num}"
        if None in row or None in row.values():  # too many or too few fields, e.g. a truncated last line
            report.skip("malformed row", f"{where}: wrong number of fields for {len(header)} columns")
            continue
        if (run := _row(row, where, f"csv:{p.name}", key, report)) is not None:
            runs.append(run)
    return runs


def read_json(path: str | Path, key: RecurringKey, report: IngestReport) -> list[JobRun]:
    """Runs from a JSON array (or ``{"runs": [...]}``) or from JSON Lines, one object a line.

    In JSON Lines a line that does not parse (e.g. a truncated last line) is skipped and counted;
    a JSON document that does not parse is an error, as nothing in it can be trusted.
    """
    p = Path(path)
    text = _text(p)
    source = f"json:{p.name}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _json_lines(p, text, exc, source, key, report)
    items = data.get("runs") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise HistoryInputError(f"{p}: expected a JSON array of runs or an object with a 'runs' array")
    report.read += len(items)
    runs = [_row(item, f"{p}[{i}]", source, key, report) for i, item in enumerate(items)]
    return [r for r in runs if r is not None]


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
    return runs
