"""History sources: every row read is written, a duplicate, or skipped with a counted reason; a file or
server that cannot be read at all is one clear error."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from corral_yarn.cluster.errors import MalformedResponseError, UnreachableError
from corral_yarn.cluster.history import API, JobHistory
from corral_yarn.cluster.rest import Retry
from estimator.errors import HistoryInputError
from estimator.identity import RecurringKey
from estimator.records import IngestReport
from estimator.sources.jobhistory import JobHistorySource
from estimator.sources.rm import ResourceManagerSource
from estimator.sources.swim import read_swim, swim_key
from estimator.sources.tabular import read_csv, read_json
from estimator.store import HistoryStore

SWIM = Path(__file__).resolve().parents[1] / "data/swim/FB-2009_samples_24_times_1hr_0.tsv"
TAGS = "corral-plan:p7,corral-job:wordcount-daily,corral-key:wordcount,corral-period:20260105t000000z,corral-racks-0:/r1;r2"
HEADER = "name,submit_time,start_time,finish_time,input_bytes,shuffle_bytes,output_bytes,map_tasks,reduce_tasks\n"


def balanced(report: IngestReport) -> bool:
    return report.read == report.written + report.duplicates + sum(report.skipped.values())


def ingest(store_dir, runs, report):
    return HistoryStore(store_dir).append(runs, report)


def test_csv_good_rows_bad_rows_and_a_truncated_last_line(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text(
        HEADER
        + "etl-2026-01-05,2026-01-05T02:00:00Z,2026-01-05T02:00:05Z,2026-01-05T02:10:00Z,1000,500,100,8,2\n"
        + "etl-2026-01-06,2026-01-06T02:00:00,,,1100,550,110,8,2\n"
        + "etl-2026-01-07,not-a-time,,,1000,500,100,8,2\n"
        + "etl-2026-01-08,2026-01-08T02:00:00Z,,,1000,500,100,8,2\n"
        + "etl-2026-01-09,2026-01-09T02:00:00Z,,,10"
    )
    report = IngestReport()
    runs = read_csv(f, RecurringKey(), report)
    ingest(tmp_path / "s", runs, report)
    assert (report.read, report.written, report.skipped["malformed row"]) == (5, 3, 2)
    assert balanced(report)
    assert {r.recurring_key for r in runs} == {"etl"}
    assert runs[1].submit_time.tzinfo is not None  # a time without zone is UTC


def test_csv_reimport_is_idempotent(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text(HEADER + "etl-1,2026-01-05T02:00:00Z,,,1,1,1,1,1\n")
    ingest(tmp_path / "s", read_csv(f, RecurringKey(), IngestReport()), IngestReport())
    again = IngestReport()
    ingest(tmp_path / "s", read_csv(f, RecurringKey(), again), again)
    assert (again.written, again.duplicates) == (0, 1)


def test_csv_unknown_column_is_an_error_naming_it_rather_than_a_silent_skip(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("name,submit_time,input_byts\nx,2026-01-05T00:00:00Z,5\n")
    with pytest.raises(HistoryInputError, match=r"h.csv:1: unknown column 'input_byts' \(did you mean 'input_bytes'"):
        read_csv(f, RecurringKey(), IngestReport())


def test_json_unknown_field_is_an_error_naming_the_object(tmp_path):
    f = tmp_path / "h.json"
    f.write_text(json.dumps([{"name": "a", "submit_time": "2026-01-05T00:00:00Z"}, {"name": "a", "submit_time": "2026-01-06T00:00:00Z", "outcom": "x"}]))
    with pytest.raises(HistoryInputError, match=r"h.json\[1\]: unknown column 'outcom'"):
        read_json(f, RecurringKey(), IngestReport())


def test_copies_of_one_file_under_other_names_and_formats_are_stored_once(tmp_path):
    rows = [("etl-2026-01-05", "2026-01-05T02:00:00Z", 1735), ("etl-2026-01-06", "2026-01-06T02:00:00Z", 1800)]
    (tmp_path / "a.csv").write_text("name,submit_time,input_bytes\n" + "".join(f"{n},{t},{b}\n" for n, t, b in rows))
    epoch = int(datetime(2026, 1, 5, 2, tzinfo=UTC).timestamp())  # the same instant as epoch seconds
    (tmp_path / "b.json").write_text(json.dumps([{"name": rows[0][0], "submit_time": epoch, "input_bytes": 1735}]))
    first = ingest(tmp_path / "s", read_csv(tmp_path / "a.csv", RecurringKey(), r := IngestReport()), r)
    second = ingest(tmp_path / "s", read_json(tmp_path / "b.json", RecurringKey(), r2 := IngestReport()), r2)
    assert (first.written, second.written, second.duplicates) == (2, 0, 1)
    lines = SWIM.read_text().splitlines()[:50]
    (tmp_path / "x.tsv").write_text("\n".join(lines))
    (tmp_path / "copy of x.tsv").write_text("\n".join(lines))
    ingest(tmp_path / "w", read_swim(tmp_path / "x.tsv", r3 := IngestReport()), r3)
    again = ingest(tmp_path / "w", read_swim(tmp_path / "copy of x.tsv", r4 := IngestReport()), r4)
    assert (r3.written, again.written, again.duplicates) == (50, 0, 50)


@pytest.mark.parametrize(
    ("name", "content", "read", "message"),
    [
        ("big.tsv", "job0\t1\t1\t9223372036854775808\t0\t5\n", read_swim, r"big.tsv:1: input_bytes 9223372036854775808 is beyond"),
        ("big.csv", "name,submit_time,shuffle_bytes\nx,2026-01-05T00:00:00Z,1\nx,2026-01-06T00:00:00Z,1e30\ny,2026-01-07,99999999999999999999\n",
         read_csv, r"big.csv:4: shuffle_bytes 99999999999999999999 is beyond"),
        ("big.json", '[{"name": "x", "submit_time": 0, "map_tasks": 4294967296}]', read_json, r"big.json\[0\]: map_tasks 4294967296 is beyond"),
        ("empty.tsv", "", read_swim, "empty.tsv is empty"),
        ("empty.csv", "", read_csv, "empty.csv is empty"),
        ("header.csv", "name,submit_time\n", read_csv, "header.csv holds no run"),
        ("bad.csv", "name,submit_time\nx,never\n", read_csv, "bad.csv has no valid run among 1 rows"),
        ("empty.json", "  \n", read_json, "empty.json is empty"),
        ("none.json", "[]", read_json, "none.json holds no run"),
    ],
)
def test_values_the_store_cannot_hold_and_files_without_runs_are_errors(tmp_path, name, content, read, message):
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(HistoryInputError, match=message):
        read(f, RecurringKey(), IngestReport()) if read is not read_swim else read(f, IngestReport())


def test_key_column_of_an_import_and_an_absent_key_column(tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("name,submit_time,input_bytes,pipeline\nq-81724,2026-01-05T02:00:00Z,5,etl_clicks\nq-99120,2026-01-06T02:00:00Z,6,etl_clicks\n")
    runs = read_csv(f, RecurringKey.from_option("pipeline"), IngestReport())
    assert [r.recurring_key for r in runs] == ["etl_clicks", "etl_clicks"]
    with pytest.raises(HistoryInputError, match="h.csv:1: --key owner: no such column"):
        read_csv(f, RecurringKey.from_option("owner"), IngestReport())


@pytest.mark.parametrize(
    ("name", "content", "read", "message"),
    [
        ("h.csv", b"job,when\nx,y\n", read_csv, "lacks required columns"),
        ("h.csv", b"\xff\xfe\x00garbage", read_csv, "not UTF-8"),
        ("h.json", b'[{"name": "wc", "submit_time": "2026-01-05T00:00:00Z"}, {"name": "w', read_json, "neither JSON nor JSON Lines"),
    ],
)
def test_a_file_that_cannot_be_read_at_all_is_an_error(tmp_path, name, content, read, message):
    f = tmp_path / name
    f.write_bytes(content)
    with pytest.raises(HistoryInputError, match=message):
        read(f, RecurringKey(), IngestReport())


def test_json_array_with_task_samples(tmp_path):
    f = tmp_path / "h.json"
    f.write_text(json.dumps({"runs": [{
        "name": "wc", "submit_time": "2026-01-05T00:00:00Z", "input_bytes": 10, "shuffle_bytes": 5, "output_bytes": 1,
        "map_task_samples": [{"seconds": 2.0, "bytes": 10, "node": "n1"}], "racks": ["/r1"], "is_profile": True,
    }, 7]}))
    report = IngestReport()
    runs = read_json(f, RecurringKey(), report)
    assert runs[0].map_task_samples[0].node == "n1" and runs[0].is_profile
    assert report.skipped["malformed row"] == 1 and report.read == 2


def test_json_lines_with_a_truncated_last_line_keeps_the_good_lines(tmp_path):
    f = tmp_path / "h.jsonl"
    good = [json.dumps({"name": f"wc-{d}", "submit_time": f"2026-01-0{d}T00:00:00Z", "input_bytes": 1}) for d in (5, 6)]
    f.write_text("\n".join([*good, '{"name": "wc-7", "submit_ti']))
    report = IngestReport()
    runs = read_json(f, RecurringKey(), report)
    assert len(runs) == 2 and report.skipped["malformed row"] == 1 and report.read == 3


def test_swim_trace_is_read_whole_and_grouped_by_size_class(tmp_path):
    report = IngestReport()
    runs = read_swim(SWIM, report)
    assert report.read == len(runs) == 5894 and not report.skipped
    first = runs[0]
    assert (first.input_bytes, first.shuffle_bytes, first.output_bytes) == (740773, 2339561, 627471)
    assert first.recurring_key == "swim-expand-in1e5" and first.submit_time == datetime(2009, 10, 1, 0, 0, 49, tzinfo=UTC)
    assert swim_key(5000, 0) == "swim-maponly-in1e3" and swim_key(10**9, 10) == "swim-shrink-in1e9"


def test_swim_partial_file_keeps_good_lines_and_counts_bad(tmp_path):
    f = tmp_path / "t.tsv"
    lines = SWIM.read_text().splitlines()[:3]
    f.write_text("\n".join([*lines, "job3\t197\t75\tx\t42\t37", "job4\t208\t11\t36"]))
    report = IngestReport()
    assert len(read_swim(f, report)) == 3 and report.skipped["malformed row"] == 2


def test_not_a_swim_file_is_an_error(tmp_path):
    f = tmp_path / "t.tsv"
    f.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(HistoryInputError, match="no valid SWIM line"):
        read_swim(f, IngestReport())


def test_swim_with_input_paths_is_told_by_its_columns_and_keyed_by_path(tmp_path):
    f = tmp_path / "paths.tsv"
    f.write_text("job0\t1\t1\t2267942\t0\t1937944\t/logs/a/ds=2010-10-01\t\t\n"
                 "job1\t2\t1\t20791551476\t122952\t1491\t/logs/a/ds=2010-10-02\t\t\n"
                 "job2\t2\t0\t9001\t11098\t2783\tinputPath3\t\t\n"
                 "job3\t2\t0\t9001\t11098\t2783\n")  # the six-column form is read too
    report = IngestReport()
    runs = read_swim(f, report, key=RecurringKey.from_option("input_path"))
    assert [r.recurring_key for r in runs] == ["/logs/a/ds=*", "/logs/a/ds=*", "inputPath3", "swim-expand-in1e3"]
    assert runs[0].input_path == "/logs/a/ds=2010-10-01" and not report.skipped
    assert read_swim(f, IngestReport())[0].recurring_key == "swim-maponly-in1e6"  # default: the size class (the run's name)
    with pytest.raises(HistoryInputError, match="--key input_path: .* has no input path column"):
        read_swim(SWIM, IngestReport(), key=RecurringKey.from_option("input_path"))
    with pytest.raises(HistoryInputError, match="--key owner: a SWIM trace has no such column"):
        read_swim(f, IngestReport(), key=RecurringKey.from_option("owner"))


# --- REST sources against a local HTTP server (error paths a real server cannot be made to produce) ---


class FakeServer:
    def __init__(self, routes: dict[str, tuple[int, object]]) -> None:
        routes_ = routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                status, body = routes_.get(self.path.split("?")[0], (404, {"RemoteException": {"message": "not found"}}))
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def _counters(**values):
    """One counter group per counter, its lone counter rendered as an object, as Hadoop's JAXB does."""
    return {"jobCounters": {"id": "x", "counterGroup": [
        {"counterGroupName": f"g{k}", "counter": {"name": k, "totalCounterValue": v, "mapCounterValue": v, "reduceCounterValue": 0}}
        for k, v in values.items()]}}


def _task_routes(job):
    base = f"{API}/jobs/{job}/tasks"
    return {
        base: (200, {"tasks": {"task": [
            {"id": "t_m_0", "type": "MAP", "state": "SUCCEEDED", "successfulAttempt": "a_m_0"},
            {"id": "t_r_0", "type": "REDUCE", "state": "SUCCEEDED", "successfulAttempt": "a_r_0"},
        ]}}),
        f"{base}/t_m_0/attempts/a_m_0": (200, {"taskAttempt": {"elapsedTime": 4000, "nodeHttpAddress": "n1:8042", "rack": "/r1"}}),
        f"{base}/t_m_0/counters": (200, {"jobTaskCounters": {"taskCounterGroup": [{"counter": [{"name": "HDFS_BYTES_READ", "value": 400}]}]}}),
        f"{base}/t_r_0/attempts/a_r_0": (200, {"taskAttempt": {"elapsedTime": 9000, "elapsedReduceTime": 2000, "nodeHttpAddress": "n2:8042", "rack": "/r2"}}),
        f"{base}/t_r_0/counters": (200, {"jobTaskCounters": {"taskCounterGroup": [{"counter": [{"name": "HDFS_BYTES_WRITTEN", "value": 100}]}]}}),
    }


@pytest.fixture
def jobhistory():
    job = {"submitTime": 1767578400000, "startTime": 1767578401000, "finishTime": 1767578460000, "state": "SUCCEEDED", "mapsTotal": 1, "reducesTotal": 1}
    routes = {
        f"{API}/jobs": (200, {"jobs": {"job": [{"id": "job_1_0001"}, {"id": "job_1_0002"}, {"id": "job_1_0003"}]}}),
        f"{API}/jobs/job_1_0001": (200, {"job": {**job, "name": "wordcount-2026-01-05"}}),
        f"{API}/jobs/job_1_0001/counters": (200, _counters(HDFS_BYTES_READ=400, REDUCE_SHUFFLE_BYTES=300, HDFS_BYTES_WRITTEN=100)),
        f"{API}/jobs/job_1_0001/conf": (200, {"conf": {"property": [{"name": "mapreduce.input.fileinputformat.inputdir", "value": "hdfs:/in/2026/01/05"},
                                                                  {"name": "mapreduce.job.tags", "value": TAGS}]}}),
        **_task_routes("job_1_0001"),
        f"{API}/jobs/job_1_0002": (200, {"job": {**job, "name": "partial"}}),
        f"{API}/jobs/job_1_0002/counters": (200, _counters(HDFS_BYTES_READ=400)),
        f"{API}/jobs/job_1_0002/conf": (200, {"conf": {}}),
        f"{API}/jobs/job_1_0003": (500, "<html>oops</html>"),
    }
    server = FakeServer(routes)
    yield server
    server.close()


def test_jobhistory_rows_match_counters_and_bad_jobs_are_counted(jobhistory, tmp_path):
    report = IngestReport()
    runs = JobHistorySource(jobhistory.url, RecurringKey()).read(report)
    assert len(runs) == 1
    run = runs[0]
    assert (run.input_bytes, run.shuffle_bytes, run.output_bytes) == (400, 300, 100)
    assert run.recurring_key == "wordcount" and run.input_path == "hdfs:/in/2026/01/05"
    assert run.map_task_samples[0].seconds == 4.0 and run.reduce_task_samples[0].seconds == 2.0
    assert run.reduce_task_samples[0].container_seconds == 9.0 and run.map_task_samples[0].container_seconds is None  # the whole reduce attempt
    assert run.racks == ("/r1", "/r2") and run.nodes == ("n1", "n2")
    assert (run.plan_id, run.plan_period, run.planned_job) == ("p7", "20260105t000000z", "wordcount-daily")
    assert report.skipped == {"missing counter": 1, "unreadable job": 1}
    ingest(tmp_path, runs, report)
    assert balanced(report)
    again = IngestReport()
    JobHistorySource(jobhistory.url, RecurringKey()).read(again, skip_ids=HistoryStore(tmp_path).run_ids())
    assert again.duplicates == 1


def test_unreachable_or_wrong_server_is_a_clear_error():
    with pytest.raises(UnreachableError, match="cannot reach JobHistory server"):
        JobHistorySource("http://127.0.0.1:9", RecurringKey(), history=JobHistory("http://127.0.0.1:9", retry=Retry(attempts=1))).read(IngestReport())
    server = FakeServer({f"{API}/jobs": (200, "<html>a proxy page</html>")})
    try:
        with pytest.raises(MalformedResponseError, match="not JSON"):
            JobHistorySource(server.url, RecurringKey()).read(IngestReport())
    finally:
        server.close()


def test_rm_source_reads_non_mapreduce_apps_only():
    apps = {"apps": {"app": [
        {"id": "application_1_0001", "name": "spark-etl-2026-01-05", "applicationType": "SPARK", "startedTime": 1767578400000,
         "launchTime": 1767578402000, "finishedTime": 1767578500000, "finalStatus": "SUCCEEDED"},
        {"id": "application_1_0002", "name": "wc", "applicationType": "MAPREDUCE", "startedTime": 1767578400000},
    ]}}
    server = FakeServer({"/ws/v1/cluster/apps": (200, apps)})
    try:
        report = IngestReport()
        runs = ResourceManagerSource(server.url, RecurringKey()).read(report)
    finally:
        server.close()
    assert [r.recurring_key for r in runs] == ["spark-etl"] and runs[0].input_bytes is None
    assert (runs[0].plan_id, runs[0].plan_period, runs[0].planned_job) == (None, None, None)  # ad hoc: no Corral tags
    assert report.read == 2 and sum(report.skipped.values()) == 1
