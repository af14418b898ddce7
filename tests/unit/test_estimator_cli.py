"""``corral history ingest``, ``corral estimate`` and ``corral backtest`` end to end (in process)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from corral_yarn.cli import main
from corral_yarn.io import load_workload
from estimator.store import HistoryStore
from estimator.synthetic import SyntheticSpec, synthetic_history

SPEC = SyntheticSpec(jobs=5, weeks=3, seed=1)
AT = (SPEC.start + timedelta(days=15)).isoformat()


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    HistoryStore(root).append(synthetic_history(SPEC)[0])
    return root


def test_ingest_csv_twice_reports_duplicates(tmp_path, capsys):
    f = tmp_path / "h.csv"
    f.write_text("name,submit_time,input_bytes,shuffle_bytes,output_bytes\netl-2026-01-05,2026-01-05T02:00:00Z,10,5,1\netl-2026-01-06,bad,1,1,1\n")
    assert main(["history", "ingest", "--csv", str(f), "--store", str(tmp_path / "s")]) == 0
    assert "read 2, written 1, duplicates 0" in capsys.readouterr().out
    assert main(["history", "ingest", "--csv", str(f), "--store", str(tmp_path / "s")]) == 0
    assert "written 0, duplicates 1" in capsys.readouterr().out


def test_estimate_writes_a_jobs_file_and_details(store, tmp_path, capsys):
    out, details, disk = tmp_path / "jobs.json", tmp_path / "details.json", tmp_path / "disk.json"
    code = main(["estimate", "--store", str(store), "--at", AT, "--horizon", "1d", "--out", str(out), "--slack", "0.1",
                 "--details", str(details), "--disk-bandwidth-out", str(disk)])
    assert code == 0
    assert json.loads(disk.read_text()) == {}  # the synthetic history has no task samples
    workload = load_workload(out)
    assert workload.jobs and all(0 <= j.arrival_s < 86400 for j in workload.jobs)
    doc = json.loads(details.read_text())
    assert len(doc["jobs"]) == len(workload.jobs) and doc["jobs"][0]["slack"] == 0.1
    assert f"wrote {len(workload.jobs)} predicted jobs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--at", "yesterday", "--horizon", "1d"], "not an ISO 8601 time"),
        (["--at", AT, "--horizon", "soon"], "not a positive duration"),
        (["--at", AT, "--horizon", "1d", "--slack", "-1"], "argument --slack: expected a finite number >= 0, got '-1'"),
        (["--at", AT, "--horizon", "1d", "--slack", "nan"], "argument --slack: expected a finite number >= 0, got 'nan'"),
        (["--at", AT, "--horizon", "1d", "--default-map-rate", "-1"], "argument --default-map-rate: expected a finite number > 0"),
        (["--at", AT, "--horizon", "1d", "--default-reduce-rate", "nan"], "argument --default-reduce-rate: expected a finite number > 0"),
        (["--at", AT, "--horizon", "1d", "--lookback", "0"], "argument --lookback: expected a whole number >= 1, got '0'"),
        (["--at", AT, "--horizon", "1d", "--min-history", "-1"], "argument --min-history: expected a whole number >= 1, got '-1'"),
        (["--at", SPEC.start.isoformat(), "--horizon", "1h"], "no recurring job has a submission slot"),
        (["--at", AT, "--horizon", "1d", "--new-jobs", "NEW"], "jobs[0].input_bytes"),
        (["--at", AT, "--horizon", "1d", "--new-jobs", "NEW-UNPROFILED"], "jobs[0]: no profiling run with sizes for 'brand-new'"),
    ],
)
def test_estimate_errors_are_one_line_and_write_nothing(store, tmp_path, capsys, args, message):
    out = tmp_path / "jobs.json"
    (tmp_path / "NEW").write_text(json.dumps({"jobs": [{"recurring_key": "x", "arrival": AT, "input_bytes": -1}]}))
    (tmp_path / "NEW-UNPROFILED").write_text(json.dumps({"jobs": [{"recurring_key": "brand-new", "arrival": AT, "input_bytes": 1e9}]}))
    args = [str(tmp_path / a) if a.startswith("NEW") else a for a in args]
    assert main(["estimate", "--store", str(store), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corral: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_a_details_file_that_cannot_be_written_leaves_no_jobs_file(store, tmp_path, capsys):
    out, details = tmp_path / "jobs.json", tmp_path / "details.json"
    details.mkdir()  # the second file cannot be written
    assert main(["estimate", "--store", str(store), "--at", AT, "--horizon", "1d", "--out", str(out), "--details", str(details)]) == 2
    last = capsys.readouterr().err.splitlines()[-1]  # after the estimator's warnings
    assert last.startswith("corral: error: ") and "details.json" in last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["details.json"]


def test_ingest_of_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["history", "ingest", "--swim", str(tmp_path / "none.tsv"), "--store", str(tmp_path / "s")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_backtest_writes_the_report(store, tmp_path, capsys):
    assert main(["backtest", "--store", str(store), "--out", str(tmp_path / "bt")]) == 0
    names = {p.name for p in (tmp_path / "bt").iterdir()}
    assert {"index.html", "overall_error.png", "error_over_time.png", "points.csv"} <= names
    html = (tmp_path / "bt" / "index.html").read_text()
    assert "6.5 %" in html and "Per-period totals" in html and "naive rate" in html and "Instances not scored" in html
    out = capsys.readouterr().out
    assert "paper" in out and "last" in out and "interval coverage" in out and "per period jobs" in out


@pytest.mark.parametrize(
    ("source", "content", "message"),
    [
        ("--swim", "job0\t1\t1\t9223372036854775808\t0\t5\n", "f:1: input_bytes 9223372036854775808 is beyond"),
        ("--swim", "", "f is empty"),
        ("--csv", "name,submit_time,input_byts\nx,2026-01-05T00:00:00Z,5\n", "f:1: unknown column 'input_byts'"),
    ],
)
def test_bad_ingest_is_one_line_exit_2_and_leaves_the_store_as_it_was(tmp_path, capsys, source, content, message):
    good, bad, store = tmp_path / "good.csv", tmp_path / "f", tmp_path / "s"
    good.write_text("name,submit_time,input_bytes\netl-1,2026-01-05T02:00:00Z,10\n")
    bad.write_text(content)
    assert main(["history", "ingest", "--csv", str(good), "--store", str(store)]) == 0
    before = sorted((p.relative_to(store), p.read_bytes()) for p in store.rglob("*") if p.is_file())
    capsys.readouterr()
    assert main(["history", "ingest", source, str(bad), "--store", str(store), "-v"]) == 2  # -v after the command is accepted
    err = capsys.readouterr().err
    assert err.startswith("corral: error: ") and message in err and err.count("\n") == 1
    assert sorted((p.relative_to(store), p.read_bytes()) for p in store.rglob("*") if p.is_file()) == before
