"""``corral plan --latency``: a rack-pair latency matrix for latency-sensitive jobs (issue 18 item 5a)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral_yarn import io
from corral_yarn.cli import main


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    assert main(["example", "--out", str(tmp_path), "--jobs", "8", "--racks", "4", "--machines-per-rack", "3", "--seed", "2"]) == 0
    jobs = json.loads((tmp_path / "jobs.json").read_text())
    for index, job in enumerate(jobs["jobs"]):
        if index % 2 == 0:
            job["latency_profile"] = "memcached"
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    return tmp_path


def write_matrix(path: Path, racks: list[str], near: dict[str, int]) -> Path:
    rows = [[5.0 if a == b else 20.0 if near[a] == near[b] else 900.0 for b in racks] for a in racks]
    path.write_text(",".join(racks) + "\n" + "\n".join(",".join(map(str, row)) for row in rows) + "\n")
    return path


def plan_args(d: Path, *extra: str) -> list[str]:
    return ["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "cluster.json"), "--scenario", "batch", "--out", str(d / "plan.json"), *extra]


def test_plan_with_a_latency_matrix_keeps_sensitive_jobs_near(inputs: Path) -> None:
    racks = io.load_cluster(inputs / "cluster.json").rack_names
    pods = {racks[0]: 0, racks[1]: 1, racks[2]: 0, racks[3]: 1}
    matrix = write_matrix(inputs / "racks.csv", racks, pods)
    assert main(plan_args(inputs, "--latency", str(matrix))) == 0
    plan = io.load_plan(inputs / "plan.json")
    sensitive = {j.name for j in io.load_workload(inputs / "jobs.json").jobs if j.latency_profile}
    assert sensitive and all(len({pods[r] for r in p.racks}) == 1 for p in plan.jobs if p.name in sensitive)
    assert all(p.rack_set_latency_us is not None for p in plan.jobs)
    assert main(plan_args(inputs)) == 0
    assert "rack_set_latency_us" not in (inputs / "plan.json").read_text()


@pytest.mark.parametrize(("content", "suffix", "field"), [
    ("/rack-00,/rack-01\n0,1\n1,0\n", ".csv", "names: rack '/rack-02'"),
    ('{"names": ["/rack-00"], "latency_us": [[-1]]}', ".json", "latency_us[0][0]"),
    ('{"names": ["/rack-00", "/rack-01"], "latency_us": [[0, "x"], [1, 0]]}', ".json", "latency_us[0][1]"),
    ("a,b\n0,1\n", ".csv", "latency_us: must have 2 rows"),
    ("", ".txt", "latency_file"),
])
def test_a_bad_latency_file_is_one_line_naming_the_field(inputs: Path, capsys: pytest.CaptureFixture[str], content: str, suffix: str, field: str) -> None:
    path = inputs / f"racks{suffix}"
    path.write_text(content)
    assert main(plan_args(inputs, "--latency", str(path))) == 2
    err = capsys.readouterr().err
    assert field in err and err.count("\n") == 1, err
    assert not (inputs / "plan.json").exists()


def test_a_bad_latency_profile_is_one_line_naming_the_field(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jobs = json.loads((inputs / "jobs.json").read_text())
    jobs["jobs"][1]["latency_profile"] = "redis"
    (inputs / "jobs.json").write_text(json.dumps(jobs))
    assert main(plan_args(inputs)) == 2
    err = capsys.readouterr().err
    assert "jobs[1].latency_profile" in err and err.count("\n") == 1, err
