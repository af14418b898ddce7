"""The cluster commands' argument handling: one-line errors, exit code 2, before any network use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import urllib3

from corral_yarn import cli
from corral_yarn.cli import cluster as cluster_cli
from corral_yarn.contracts import Plan, PlannedJob
from corral_yarn.io import save


@pytest.fixture(autouse=True)
def only_cluster_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "COMMANDS", [cluster_cli])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "message"), [
    (["upload", "--rm", "http://x:1", "--racks", "/a", "--job", "j", "local", "/t"], "give both --rm and --webhdfs"),
    (["upload", "--cluster", "missing.json", "--racks", "/a", "--job", "j", "local", "/t"], "no such file: missing.json"),
    (["submit", "--cluster", "c.json", "--job", "j", "--mapreduce", "j.json"], "give --plan and --job, or --racks and --job"),
    (["submit", "--cluster", "c.json", "--plan", "p.json", "--mapreduce", "j.json"], "--plan needs --job"),
    (["submit", "--cluster", "c.json", "--racks", "/a", "--job", "j"], "one of the arguments --mapreduce --yarn-app is required"),
    (["submit", "--cluster", "c.json", "--racks", "/a", "--job", "j", "--latency", "a,b", "--mapreduce", "j.json"],
     "--latency 'a,b' cannot go into a YARN tag"),
    (["topology", "--cluster", "c.json", "--nic-gbps", "-1"], "argument --nic-gbps: expected a finite number > 0, got '-1'"),
    (["topology", "--cluster", "c.json", "--disk-mbps", "nan"], "argument --disk-mbps: expected a finite number > 0, got 'nan'"),
    (["topology", "--cluster", "c.json", "--oversubscription", "1"], "--oversubscription: must be > 1 and <= 10000, got 1"),
    (["topology", "--cluster", "c.json", "--oversubscription", "20000"], "--oversubscription: must be > 1 and <= 10000, got 20000"),
    (["upload", "--cluster", "c.json", "--racks", "/a", "--job", "j", "missing", "/t"], "local: no such file or directory: missing"),
    (["topology", "--cluster", "c.json", "--task-memory-mb", "0"], "argument --task-memory-mb: expected a whole number >= 1, got '0'"),
    (["upload", "--cluster", "c.json", "--racks", "/a", "--job", "j", "local", "/t", "--block-size", "-1"], "argument --block-size"),
    (["upload", "--cluster", "c.json", "--racks", "/a", "--job", "j", "local", "/t", "--replication", "0"], "argument --replication"),
    (["upload", "--cluster", "c.json", "--racks", "/a", "--job", "j", "local", "/t", "--threads", "0"], "argument --threads"),
    (["submit", "--cluster", "c.json", "--racks", "/a", "--job", "j", "--mapreduce", "j.json", "--grant-hours", "nan"], "argument --grant-hours"),
    (["submit", "--cluster", "c.json", "--racks", "/a", "--job", "j", "--mapreduce", "j.json", "--wait", "--timeout", "-1"], "argument --timeout"),
    (["submit", "--cluster", "c.json", "--racks", "/a", "--job", "j", "--mapreduce", "missing.json"], "no such file: missing.json"),
    (["status", "--cluster", "c.json", "application_1_0001", "--wait", "--timeout", "nan"], "argument --timeout"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"webhdfs": "http://127.0.0.1:1", "resourcemanager": "http://127.0.0.1:1"}))
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("corral: error: ") and message in err and err.count("\n") == 1


def test_unknown_plan_job_names_the_jobs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    job = PlannedJob(name="wc", racks=["/rack-a"], priority=3, order=0, arrival_s=0, planned_start_s=0, predicted_duration_s=1,
                     planned_finish_s=1, input_bytes=1, cross_rack_shuffle_bytes=0)
    plan = Plan(plan_id="p1", planner_version="t", inputs_sha256="x", cluster_name="c", scenario="batch", objective="makespan",
                objective_s=1, lower_bound_s=None, gap=None, alpha_s_per_byte=0, jobs=[job], rack_input_bytes={},
                rack_input_cov=0, cross_rack_shuffle_bytes=0, all_racks_cross_rack_shuffle_bytes=0)
    save(plan, tmp_path / "plan.json")
    (tmp_path / "c.json").write_text(json.dumps({"webhdfs": "http://127.0.0.1:1", "resourcemanager": "http://127.0.0.1:1"}))
    code, _, err = run(capsys, "upload", "--cluster", str(tmp_path / "c.json"), "--plan", str(tmp_path / "plan.json"),
                       "--job", "sort", str(tmp_path), "/t")
    assert code == 2 and "plan p1 has no job 'sort'; it has ['wc']" in err


def test_unreachable_cluster_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(urllib3.Retry, "sleep", lambda self, response=None: None)  # no backoff waits in a unit test
    code, _, err = run(capsys, "status", "--rm", "http://127.0.0.1:1", "--webhdfs", "http://127.0.0.1:1", "application_1_1")
    assert code == 2 and err.startswith("corral: error: cannot reach ResourceManager at http://127.0.0.1:1 after 4 attempts")
