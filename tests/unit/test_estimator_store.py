"""The history store: idempotent, partitioned by date, schema versioned, crash-safe, round-trips runs."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estimator.errors import StoreError
from estimator.records import IngestReport, JobRun, SkewPolicy, TaskSample
from estimator.store import HistoryStore

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def run(i: int, day: int = 0, **kw) -> JobRun:
    fields = dict(
        run_id=f"t:{i}", recurring_key="daily", name=f"daily-{i}", source="test",
        submit_time=T0 + timedelta(days=day, minutes=i), input_bytes=100 + i, shuffle_bytes=50, output_bytes=10,
        map_tasks=2, reduce_tasks=1,
    )
    return JobRun(**{**fields, **kw})


def test_append_is_idempotent_and_partitioned_by_date(tmp_path):
    store = HistoryStore(tmp_path / "h")
    first = store.append([run(1), run(2, day=1)])
    second = store.append([run(1), run(2, day=1), run(3, day=1)])
    assert (first.written, first.duplicates) == (2, 0)
    assert (second.written, second.duplicates) == (1, 2)
    assert [r.run_id for r in store.runs()] == ["t:1", "t:2", "t:3"]
    assert sorted(p.parent.name for p in store.part_files()) == ["date=2026-01-05", "date=2026-01-06", "date=2026-01-06"]


def test_the_same_run_twice_in_one_batch_is_stored_once(tmp_path):
    report = HistoryStore(tmp_path).append([run(1), run(1)])
    assert (report.written, report.duplicates) == (1, 1)


def test_other_schema_version_is_refused(tmp_path):
    store = HistoryStore(tmp_path)
    store.append([run(1)])
    (tmp_path / "_schema.json").write_text(json.dumps({"schema": "corral-yarn/history/v0"}))
    with pytest.raises(StoreError, match="history/v0"):
        store.runs()


def test_corrupt_part_file_is_a_clear_error_naming_it(tmp_path):
    store = HistoryStore(tmp_path)
    store.append([run(1)])
    part = store.part_files()[0]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])  # truncated, as by a disk fault
    with pytest.raises(StoreError, match=f"corrupt part file .*{part.name}"):
        store.runs()


def test_a_crash_mid_write_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    store = HistoryStore(tmp_path)
    store.append([run(1)])

    def crash(src, dst):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="power cut"):
        store.append([run(2)])
    monkeypatch.undo()
    assert [r.run_id for r in store.runs()] == ["t:1"]
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert store.append([run(2)]).written == 1  # nothing half-stored blocks the retry


def test_leftover_temporary_file_is_not_read(tmp_path):
    store = HistoryStore(tmp_path)
    store.append([run(1)])
    (store.part_files()[0].parent / ".part-x.parquet.tmp").write_bytes(b"PAR1 half written")
    assert len(store.runs()) == 1


def test_clock_skew_is_clamped_within_tolerance_and_skipped_beyond(tmp_path):
    skew = SkewPolicy(tolerance=timedelta(seconds=5))
    small = run(1, start_time=T0 + timedelta(minutes=1) - timedelta(seconds=3), finish_time=T0 + timedelta(minutes=5))
    large = run(2, start_time=T0, finish_time=T0 - timedelta(minutes=10))
    future = run(3, submit_time=datetime.now(UTC) + timedelta(days=2))
    report = HistoryStore(tmp_path).append([small, large, future], skew=skew)
    assert (report.written, report.clamped, report.skipped["clock skew"]) == (1, 1, 2)
    stored = HistoryStore(tmp_path).runs()[0]
    assert stored.start_time == stored.submit_time


def test_negative_bytes_are_skipped_and_counted(tmp_path):
    report = HistoryStore(tmp_path).append([run(1, input_bytes=-5), run(2)])
    assert (report.written, report.skipped["negative bytes"]) == (1, 1)


samples = st.lists(st.builds(TaskSample, st.floats(0, 1e4), st.integers(0, 2**50), st.one_of(st.none(), st.text(min_size=1, max_size=8)),
                             st.one_of(st.none(), st.floats(0, 1e4))), max_size=4)
times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)).map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))


@settings(max_examples=50, deadline=None)
@given(
    submit=times,
    sizes=st.tuples(*[st.one_of(st.none(), st.integers(0, 2**60))] * 3),
    maps=samples,
    reduces=samples,
    nodes=st.lists(st.text(min_size=1, max_size=8), max_size=3).map(tuple),
    profile=st.booleans(),
    entry=st.one_of(st.none(), st.tuples(*[st.text(min_size=1, max_size=12)] * 3)),
)
def test_runs_round_trip_through_parquet(tmp_path_factory, submit, sizes, maps, reduces, nodes, profile, entry):
    original = JobRun(
        run_id="r", recurring_key="k", name="n", source="s", submit_time=submit,
        input_bytes=sizes[0], shuffle_bytes=sizes[1], output_bytes=sizes[2],
        map_task_samples=tuple(maps), reduce_task_samples=tuple(reduces), nodes=nodes, is_profile=profile,
        **dict(zip(("plan_id", "plan_period", "planned_job"), entry or (None,) * 3)),
    )
    store = HistoryStore(tmp_path_factory.mktemp("rt"))
    store.append([original], IngestReport(), SkewPolicy(now=datetime(2031, 1, 1, tzinfo=UTC)))
    assert store.runs() == [original]


def test_a_part_file_written_before_runs_carried_their_plan_entry_reads_it_as_none(tmp_path):
    store = HistoryStore(tmp_path)
    store.append([run(1, plan_id="p", plan_period="20260105t000000z", planned_job="daily-1")])
    part = store.part_files()[0]
    old = pq.read_table(part).drop_columns(["plan_id", "plan_period", "planned_job"])
    pq.write_table(old.replace_schema_metadata({"schema": "corral-yarn/history/v1"}), part)
    assert store.runs() == [run(1)]


def test_a_part_file_written_before_task_samples_carried_container_seconds_reads_them_as_none(tmp_path):
    store = HistoryStore(tmp_path)
    store.append([run(1, reduce_task_samples=(TaskSample(2.0, 7, "n1", container_seconds=5.0),))])
    part = store.part_files()[0]
    table = pq.read_table(part)
    old_task = pa.list_(pa.struct([("seconds", pa.float64()), ("bytes", pa.int64()), ("node", pa.string())]))
    rows = [[{k: t[k] for k in ("seconds", "bytes", "node")} for t in ts] for ts in table.column("reduce_task_samples").to_pylist()]
    old = table.set_column(table.schema.get_field_index("reduce_task_samples"), "reduce_task_samples", pa.array(rows, old_task))
    pq.write_table(old.replace_schema_metadata({"schema": "corral-yarn/history/v1"}), part)
    assert store.runs() == [run(1, reduce_task_samples=(TaskSample(2.0, 7, "n1"),))]
