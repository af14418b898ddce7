"""The job history store: an append-only Parquet dataset partitioned by date (``date=YYYY-MM-DD``).

* Schema versioned: ``_schema.json`` at the root and the Parquet schema metadata both carry
  ``corral-yarn/history/v1``; a store or part file of another version is refused with a clear error.
* Idempotent: a run is keyed by its ``run_id``; ingesting it again stores nothing and is counted.
* Crash-safe: each append writes new part files under a hidden temporary name, fsyncs, then renames
  them into place, so a reader sees a whole part file or none. Appends hold an exclusive lock.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import groupby
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corral_yarn.io import write_atomic
from estimator.errors import HistoryInputError, StoreError
from estimator.records import HISTORY_SCHEMA, SCHEMA, IngestReport, JobRun, SkewPolicy, check_run, from_table, out_of_range, to_table

log = logging.getLogger(__name__)

_MARKER = "_schema.json"
_LOCK = ".lock"


class HistoryStore:
    """A directory of Parquet part files holding job runs."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _check_marker(self) -> None:
        marker = self.root / _MARKER
        if not marker.exists():
            return
        try:
            version = json.loads(marker.read_text(encoding="utf-8")).get("schema")
        except (json.JSONDecodeError, AttributeError):
            raise StoreError(f"{marker} is corrupt; expected {{\"schema\": \"{HISTORY_SCHEMA}\"}}") from None
        if version != HISTORY_SCHEMA:
            raise StoreError(f"{self.root} holds history schema {version!r}; this version reads {HISTORY_SCHEMA!r}")

    def part_files(self) -> list[Path]:
        """The committed part files (temporary files of an interrupted append are not part of the store)."""
        return sorted(p for p in self.root.glob("date=*/*.parquet") if not p.name.startswith("."))

    def _read_part(self, path: Path, columns: list[str] | None = None) -> pa.Table:
        try:
            table = pq.read_table(path, columns=columns)
        except (pa.ArrowException, OSError) as exc:
            raise StoreError(f"corrupt part file {path}: {exc}; move it out of the store and re-ingest its source") from None
        version = (table.schema.metadata or {}).get(b"schema", b"").decode()
        if version != HISTORY_SCHEMA:
            raise StoreError(f"part file {path} has history schema {version!r}; expected {HISTORY_SCHEMA!r}")
        return table

    def run_ids(self) -> set[str]:
        self._check_marker()
        ids: set[str] = set()
        for path in self.part_files():
            ids.update(self._read_part(path, ["run_id"]).column("run_id").to_pylist())
        return ids

    def runs(self) -> list[JobRun]:
        """Every stored run, ordered by submit time."""
        self._check_marker()
        runs = [r for path in self.part_files() for r in from_table(self._read_part(path))]
        return sorted(runs, key=lambda r: (r.submit_time, r.run_id))

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / _LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def append(self, runs: Iterable[JobRun], report: IngestReport | None = None, skew: SkewPolicy | None = None) -> IngestReport:
        """Check and store the runs not stored yet; returns (and fills) the ingestion report.

        Sources count the rows they read in ``report.read``; every one of them ends up written, a
        duplicate, or skipped with a reason: read == written + duplicates + sum(skipped).
        """
        report = report or IngestReport()
        with self._locked():
            self._check_marker()
            seen = self.run_ids()
            fresh: list[JobRun] = []
            for run in runs:
                if why := out_of_range(run):
                    raise HistoryInputError(f"run {run.run_id}: {why}; nothing stored")
                if run.run_id in seen:
                    report.duplicates += 1
                    continue
                if (checked := check_run(run, skew or SkewPolicy(), report)) is not None:
                    seen.add(run.run_id)
                    fresh.append(checked)
            self._write(fresh)
            report.written += len(fresh)
        return report

    def _write(self, runs: list[JobRun]) -> None:
        if not (self.root / _MARKER).exists():
            write_atomic(self.root / _MARKER, json.dumps({"schema": HISTORY_SCHEMA}) + "\n")
        by_date = sorted(runs, key=lambda r: r.date)
        tables = [(date, to_table(list(group))) for date, group in groupby(by_date, key=lambda r: r.date)]  # all built before any is written
        for date, table in tables:
            _write_part(self.root / f"date={date}", table)


def _write_part(directory: Path, table: pa.Table) -> None:
    """Write one part file: hidden temporary name, fsync, rename, fsync the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    name = f"part-{uuid.uuid4().hex}.parquet"
    tmp = directory / f".{name}.tmp"
    try:
        pq.write_table(table.replace_schema_metadata(SCHEMA.metadata), tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, directory / name)
    finally:
        tmp.unlink(missing_ok=True)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    log.info("wrote %d runs to %s", table.num_rows, directory / name)
