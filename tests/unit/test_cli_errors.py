"""Bad input: one line ``corral: error: ...`` naming the problem, exit code 2, no traceback, no output file."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corral_yarn.cli import main
from corral_yarn.report import plan as plan_report


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    d = tmp_path_factory.mktemp("good")
    assert main(["example", "--out", str(d), "--jobs", "4", "--racks", "3", "--machines-per-rack", "2"]) == 0
    return {"cluster": json.loads((d / "cluster.json").read_text()), "jobs": json.loads((d / "jobs.json").read_text())}


def _missing_field(d: dict) -> None:
    del d["jobs"]["jobs"][1]["stages"][0]["map_tasks"]


def _negative_size(d: dict) -> None:
    d["jobs"]["jobs"][2]["stages"][0]["input_bytes"] = -5


def _duplicate_racks(d: dict) -> None:
    d["cluster"]["racks"][1]["name"] = d["cluster"]["racks"][0]["name"]


def _duplicate_machines(d: dict) -> None:
    d["cluster"]["racks"][1]["machines"][1] = d["cluster"]["racks"][1]["machines"][0]


def _dag_cycle(d: dict) -> None:
    first = d["jobs"]["jobs"][0]["stages"][0]
    d["jobs"]["jobs"][0]["stages"].append({**copy.deepcopy(first), "name": "second", "after": ["main"]})
    first["after"] = ["second"]


def _empty_jobs(d: dict) -> None:
    d["jobs"]["jobs"] = []


def _infinite_size(d: dict) -> None:
    d["jobs"]["jobs"][3]["stages"][0]["output_bytes"] = float("inf")


def _negative_model_startup(d: dict) -> None:
    d["cluster"]["model"] = {"task_startup_s": -2}


BAD_INPUTS: dict[str, tuple[Callable[[dict], None], str]] = {
    "MRCute+ with a negative start-up": (_negative_model_startup, "cluster.json: model.task_startup_s: Input should be greater than or equal to 0 (got -2)"),
    "missing field": (_missing_field, "jobs.json: jobs[1].stages[0].map_tasks: Field required"),
    "negative size": (_negative_size, "jobs.json: jobs[2].stages[0].input_bytes: Input should be greater than or equal to 0 (got -5)"),
    "duplicate rack names": (_duplicate_racks, "cluster.json: ClusterSpec: duplicate rack names ['/rack-00']"),
    "duplicate machine names": (_duplicate_machines, "cluster.json: racks[1]: duplicate machine names ['r01m00']"),
    "DAG with a cycle": (_dag_cycle, "jobs.json: jobs[0]: the stages form a cycle: main -> second -> main"),
    "empty job list": (_empty_jobs, "jobs.json: jobs: is empty; give at least 1"),
    "infinite size": (_infinite_size, "jobs.json: jobs[3].stages[0].output_bytes: Input should be a finite number"),
}


def write_inputs(d: Path, data: dict) -> None:
    (d / "cluster.json").write_text(json.dumps(data["cluster"]))
    (d / "jobs.json").write_text(json.dumps(data["jobs"]))


def plan_args(d: Path, scenario: str = "batch") -> list[str]:
    return ["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "cluster.json"), "--scenario", scenario, "--out", str(d / "plan.json")]


def assert_one_line_error(capsys: pytest.CaptureFixture[str], *expected: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("corral: error: ")
    for text in expected:
        assert text in lines[0]
    assert captured.out == ""
    return lines[0]


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_plan_inputs(case: str, good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spoil, expected = BAD_INPUTS[case]
    data = copy.deepcopy(good)
    spoil(data)
    write_inputs(tmp_path, data)
    assert main(plan_args(tmp_path)) == 2
    assert_one_line_error(capsys, expected)
    assert not (tmp_path / "plan.json").exists()


def test_not_json(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    (tmp_path / "jobs.json").write_text('{"jobs": [')
    assert main(plan_args(tmp_path)) == 2
    assert_one_line_error(capsys, "jobs.json is not JSON")
    assert not (tmp_path / "plan.json").exists()


def test_missing_file(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    (tmp_path / "cluster.json").unlink()
    assert main(plan_args(tmp_path)) == 2
    assert_one_line_error(capsys, "no such file", "cluster.json")
    assert not (tmp_path / "plan.json").exists()


def test_unknown_scenario(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    assert main(plan_args(tmp_path, "weekly")) == 2
    assert_one_line_error(capsys, "argument --scenario: invalid choice: 'weekly'", "corral plan --help")
    assert not (tmp_path / "plan.json").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["plan"], "the following arguments are required: --jobs, --cluster, --scenario, --out"),
        (["nonsense"], "argument COMMAND: invalid choice: 'nonsense'"),
        (["example", "--out", "x", "--jobs", "0"], "argument --jobs: expected a whole number >= 1, got '0'"),
        (["example", "--out", "x", "--arrival-span", "soon"], "argument --arrival-span: expected a finite number >= 0, got 'soon'"),
        (["example", "--out", "x", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got '-1'"),
        (["plan", "--jobs", "j", "--cluster", "c", "--scenario", "batch", "--out", "p", "--alpha", "nan"], "argument --alpha"),
        (["history", "profile", "--store", "s", "--mapreduce", "j.json", "--racks", "/a", "--sample-bytes", "0"],
         "argument --sample-bytes: expected a whole number >= 1, got '0'"),
        (["history", "profile", "--store", "s", "--mapreduce", "j.json", "--racks", " , ", "--sample-bytes", "9"], "--racks names no rack"),
        (["history", "profile", "--store", "s", "--mapreduce", "j.json", "--racks", "/a", "--sample-bytes", "9", "--rm", "http://rm:8088",
          "--webhdfs", "http://nn:9870"], "give --jobhistory"),
        (["estimate", "--store", "s", "--at", "xx", "--horizon", "1d", "--out", "o"], "argument --at: not an ISO 8601 time: 'xx'"),
        (["estimate", "--store", "s", "--at", "2026-01-01", "--horizon", "0", "--out", "o"], "argument --horizon: not a positive duration"),
        (["backtest", "--store", "s", "--out", "r", "--window=-1h"], "argument --window: not a positive duration"),
        (["kwiken", "example", "--out", "x", "--index", "-1"], "argument --index: expected a whole number >= 0, got '-1'"),
        (["kwiken", "example", "--out", "x", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got '-1'"),
        (["kwiken", "plan", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["kwiken", "simulate", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["kwiken", "yarn-plan", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["nomora", "simulate", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["simulate", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["compare", "--seed", "-1"], "argument --seed: expected a whole number >= 0"),
        (["testbed", "up", "--node-cpus", "nan"], "argument --node-cpus: expected a finite number >= 0, got 'nan'"),
        (["testbed", "up", "--rack-cpus", "a=x"], "--rack-cpus: rack a: cores must be a number, got 'x'"),
        (["testbed", "up", "--rack-cpus", "a=1", "--node-cpus", "1"], "error: give --rack-cpus or --node-cpus, not both"),
        (["testbed", "status", "--home", "no/such/home"], "--home: no testbed state at "),
        (["testbed", "latency", "--home", "no/such/home"], "--home: no testbed state at "),
        (["testbed", "exec", "--home", "no/such/home", "--", "true"], "--home: no testbed state at "),
        (["backtest", "--store", "s", "--out", "r", "--lookback", "5", "--min-history", "6"],
         "--lookback: need 1 <= --min-history <= --lookback (got 6, 5)"),
        (["backtest", "--store", "s", "--out", "r", "--lookback", "0"], "argument --lookback: expected a whole number >= 1, got '0'"),
        (["history", "ingest", "--csv", "h.csv", "--store", "s", "--skew-tolerance", "nan"],
         "argument --skew-tolerance: expected a finite number >= 0, got 'nan'"),
        (["estimate", "--store", "/no/such/store", "--at", "2026-01-01", "--horizon", "1d", "--out", "o"],
         "--store: no history store at /no/such/store"),
    ],
)
def test_usage_errors(args: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert_one_line_error(capsys, expected)


def test_report_of_something_that_is_not_a_plan(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    assert main(["report", str(tmp_path / "jobs.json"), "--out", str(tmp_path / "r")]) == 2
    assert_one_line_error(capsys, "schema_version: Input should be 'corral-yarn/plan/v1'")
    assert not (tmp_path / "r").exists()


def test_report_with_a_cluster_that_lacks_the_plans_racks(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    assert main(plan_args(tmp_path)) == 0
    other = copy.deepcopy(good["cluster"])
    for rack in other["racks"]:
        rack["name"] = "/other" + rack["name"]
    (tmp_path / "other.json").write_text(json.dumps(other))
    capsys.readouterr()
    assert main(["report", str(tmp_path / "plan.json"), "--out", str(tmp_path / "r"), "--cluster", str(tmp_path / "other.json")]) == 2
    assert_one_line_error(capsys, "--cluster: the plan uses racks the cluster does not have")
    assert not (tmp_path / "r").exists()


def test_a_failed_render_leaves_no_report(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write_inputs(tmp_path, good)
    assert main(plan_args(tmp_path)) == 0
    capsys.readouterr()

    def broken(*_: object, **__: object) -> bytes:
        raise OSError(28, "No space left on device", "rack_input.png")

    monkeypatch.setattr(plan_report.charts, "lane_bars_png", broken)
    assert main(["report", str(tmp_path / "plan.json"), "--out", str(tmp_path / "r")]) == 2
    assert_one_line_error(capsys, "No space left on device: rack_input.png")
    assert not (tmp_path / "r").exists()


def test_output_directory_that_is_a_file(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("not a directory")
    assert main(["example", "--out", str(tmp_path / "taken")]) == 2
    assert_one_line_error(capsys, "taken")


def test_plan_output_that_is_a_directory(good: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path, good)
    (tmp_path / "plan.json").mkdir()
    assert main(plan_args(tmp_path)) == 2
    assert_one_line_error(capsys, f"Is a directory: {tmp_path / 'plan.json'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.json", "jobs.json", "plan.json"]  # no temporary file left


def test_sim_workload_writes_both_files_or_neither(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "predicted.json").mkdir()  # the prediction cannot be written
    assert main(["sim-workload", "--out", str(tmp_path / "w.json"), "--predicted-out", str(tmp_path / "predicted.json"),
                 "--jobs", "3", "--size-error", "0.2"]) == 2
    assert_one_line_error(capsys, "predicted.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predicted.json"]


def test_kwiken_example_writes_its_three_files_or_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "test.csv").mkdir()  # the last file cannot be written
    assert main(["kwiken", "example", "--out", str(tmp_path), "--requests", "20"]) == 2
    assert_one_line_error(capsys, "test.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test.csv"]


def test_example_writes_both_files_or_neither(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "jobs.json").mkdir()  # the second file cannot be written
    assert main(["example", "--out", str(tmp_path), "--jobs", "2"]) == 2
    assert_one_line_error(capsys, "jobs.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.json"]


def test_no_traceback_in_a_separate_process(tmp_path: Path) -> None:
    (tmp_path / "jobs.json").write_text("[1, 2")
    (tmp_path / "cluster.json").write_text("{}")
    run = subprocess.run([sys.executable, "-m", "corral_yarn.cli", *plan_args(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("corral: error: ") and "Traceback" not in run.stderr
    assert "jobs.json is not JSON" in run.stderr
    assert not (tmp_path / "plan.json").exists()


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    reader = subprocess.Popen([sys.executable, "-m", "corral_yarn.cli", "example", "--out", str(tmp_path), "--jobs", "2"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # like `corral ... | head -0`
    stderr = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 141
    assert stderr == ""
