"""``corral select-sim``: results JSON, report files, and one-line errors without partial output."""

from __future__ import annotations

import json

import pytest

from corral_yarn.cli import main

SMALL = ["select-sim", "--machines-per-rack", "8", "--racks-per-pod", "2", "--pods", "2", "--requests", "60",
         "--mean-vms", "6", "--no-progress"]


def test_writes_results_and_report(tmp_path):
    out, report = tmp_path / "result.json", tmp_path / "report"
    assert main([*SMALL, "--strategies", "baseline,corral-i", "--out", str(out), "--report", str(report)]) == 0
    result = json.loads(out.read_text())
    assert result["schema_version"] == "corral-yarn/select-sim/v1"
    assert [r["strategy"] for r in result["results"]] == ["baseline", "corral-i"]
    assert result["results"][0]["requests"] == 60
    assert {p.name for p in report.iterdir()} == {"index.html", "strategies.png", "result.json"}
    assert "corral-i" in (report / "index.html").read_text()


def test_prints_json_without_out(capsys):
    assert main([*SMALL, "--strategies", "strawman"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["strategy"] == "strawman"


def test_errors_are_one_line_and_write_nothing(tmp_path, capsys):
    out = tmp_path / "result.json"
    assert main([*SMALL, "--strategies", "corral-x", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corral: error: --strategies: unknown strategies ['corral-x']") and err.count("\n") == 1
    for occupancy in ("0", "1.5"):
        assert main([*SMALL, "--occupancy", occupancy, "--out", str(out)]) == 2
        assert capsys.readouterr().err == f"corral: error: --occupancy: must be in (0, 1], got {occupancy}\n"
    assert main([*SMALL, "--oversubscription", "0.5", "--out", str(out)]) == 2
    assert main([*SMALL, "--disk-mbps", "0", "--out", str(out)]) == 2
    assert "argument --disk-mbps: expected a finite number > 0, got '0'" in capsys.readouterr().err.splitlines()[-1]
    assert main([*SMALL, "--warmup-fraction", "1", "--out", str(out)]) == 2
    assert not out.exists()


@pytest.mark.parametrize(("option", "value"), [
    ("--oversubscription", "nan"), ("--pod-oversubscription", "inf"), ("--requests", "0"), ("--pods", "-1"), ("--machines-per-rack", "0"),
    ("--vm-slots", "0"), ("--nic-mbps", "0"), ("--mean-vms", "nan"), ("--outlier-probability", "2"), ("--outlier-slowdown", "nan"),
    ("--history-s", "-1"), ("--seed", "-1"), ("--slack", "nan"), ("--max-candidates", "0"), ("--warmup-fraction", "1.5"),
])
def test_a_bad_number_names_its_option(tmp_path, capsys, option, value):
    out = tmp_path / "result.json"
    assert main([*SMALL, option, value, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"corral: error: argument {option}: expected ") and err.count("\n") == 1
    assert not out.exists()


def test_results_and_report_are_written_together(tmp_path, capsys):
    out, report = tmp_path / "result.json", tmp_path / "report"
    out.mkdir()  # the results cannot be written after the report
    assert main([*SMALL, "--strategies", "baseline", "--out", str(out), "--report", str(report)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]  # no report without its results
    out.rmdir()
    report.write_text("a file where the report directory should go")
    assert main([*SMALL, "--strategies", "baseline", "--out", str(out), "--report", str(report)]) == 2
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["report"]


@pytest.mark.parametrize(("options", "message"), [
    (["--oversubscription", "0.5"], "--oversubscription/--pod-oversubscription: must be finite and >= 1, got (0.5, 1.0)"),
    (["--pod-oversubscription", "0.9"], "--oversubscription/--pod-oversubscription: must be finite and >= 1, got (10.0, 0.9)"),
    (["--mean-vms", "0.5"], "--mean-vms: must be finite and >= 1, got 0.5"),
    (["--max-candidates", "1"], "--slack/--max-candidates: max_vms >= 1, --max-candidates >= 2 and faster_steps >= 0 are required"),
])
def test_errors_of_the_checks_behind_the_options_name_the_options(tmp_path, capsys, options, message):
    out = tmp_path / "result.json"
    assert main([*SMALL, *options, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"corral: error: {message}\n"
    assert not out.exists()
