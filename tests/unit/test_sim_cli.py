"""``corral simulate`` and ``corral compare`` end to end on a small workload, and their errors."""

from __future__ import annotations

import json

import pytest

from corral_yarn import io
from corral_yarn.cli import main
from corral_yarn.sim.metrics import offered_load
from corral_yarn.sim.workloads import DEFAULT_SCALE, paper_simulation_cluster, perturb, scale_sizes, swim_replay, with_adhoc
from corral_yarn.workloads import example_cluster, w1_like


def _inputs(tmp_path):
    io.save(example_cluster(), tmp_path / "c.json")
    io.save(w1_like(8, seed=1, arrival_span_s=120), tmp_path / "w.json")
    return ["--cluster", str(tmp_path / "c.json"), "--workload", str(tmp_path / "w.json")]


def test_simulate_writes_result_and_report(tmp_path, capsys):
    args = _inputs(tmp_path)
    assert main(["simulate", *args, "--scheduler", "corral", "--network", "varys", "--out", str(tmp_path / "r.json"), "--report", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["label"] == "corral+varys" and len(result["jobs"]) == 8 and result["plan_id"]
    assert (tmp_path / "rep" / "index.html").exists() and (tmp_path / "rep" / "completion_cdf.png").exists()


def test_compare_runs_every_combination(tmp_path, capsys):
    args = _inputs(tmp_path)
    out = tmp_path / "all.json"
    assert main(["compare", *args, "--schedulers", "yarn-cs,corral", "--networks", "tcp,varys", "--scenario", "batch", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    runs = doc["runs"]
    assert [r["label"] for r in runs] == ["yarn-cs+tcp", "yarn-cs+varys", "corral+tcp", "corral+varys"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("offered load: 8 jobs at 0 s (batch)") and doc["offered_load"]["slot_load"] is None
    assert all("slot load" in line and "core load" in line for line in lines[1:])


def test_every_run_prints_the_offered_and_measured_load(tmp_path, capsys):
    args = _inputs(tmp_path)
    assert main(["simulate", *args, "--scheduler", "yarn-cs", "--out", str(tmp_path / "r.json"), "--background-share", "0.5"]) == 0
    first, run = capsys.readouterr().out.splitlines()
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    workload, cluster = io.load_workload(tmp_path / "w.json"), io.load_cluster(tmp_path / "c.json")
    load = offered_load(workload, cluster, "online", 0.5, 3)
    assert first.startswith("offered load: 8 jobs over") and f"slot load {100 * load.slot_load:.1f} %" in first
    assert f"core load {100 * load.core_load:.1f} %" in first
    assert f"slot load {100 * summary['mean_slot_load']:5.1f} %" in run and f"core load {100 * summary['mean_core_load']:5.1f} %" in run
    # core load: cross-rack bytes over the uplinks the background leaves (half of 7 racks x 30 x B_M / O) x makespan
    uplinks = 0.5 * cluster.rack_core_bandwidth_bytes_per_s * len(cluster.racks)
    assert summary["mean_core_load"] == pytest.approx(summary["cross_rack_bytes"] / (uplinks * summary["makespan_s"]))


def test_the_default_workload_is_at_the_thesis_load_with_the_core_the_bottleneck():
    # sim-workload's default (200 W1-like jobs over 15 min, bytes x 8) on the thesis's simulated cluster (§4.5.7):
    # a slot load like W1's lightest in §4.5.6 (about 8 %), and more bytes to cross the core than it carries
    default = scale_sizes(w1_like(200, seed=0, arrival_span_s=900), DEFAULT_SCALE)
    load = offered_load(default, paper_simulation_cluster(), "online", 0.0, 3)
    assert 0.05 < load.slot_load < 0.12 and load.core_load > 1.0
    plain = offered_load(w1_like(200, seed=0, arrival_span_s=900), paper_simulation_cluster(), "online", 0.0, 3)
    assert plain.slot_load < 0.02 and plain.core_load < 0.5  # x 1: neither slots nor core are busy


def test_errors_are_one_line_and_write_nothing(tmp_path, capsys):
    args = _inputs(tmp_path)
    out = tmp_path / "r.json"
    assert main(["simulate", *args, "--scheduler", "corral", "--out", str(out), "--background-share", "1.5"]) == 2
    assert main(["compare", *args, "--schedulers", "corral,fifo", "--out", str(out)]) == 2
    io.save(w1_like(3, seed=9), tmp_path / "other.json")
    plan_args = ["plan", "--jobs", str(tmp_path / "other.json"), "--cluster", str(tmp_path / "c.json"), "--scenario", "batch", "--out", str(tmp_path / "p.json")]
    assert main(plan_args) == 0
    assert main(["simulate", *args, "--scheduler", "corral", "--plan", str(tmp_path / "p.json"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("corral: error: ") for line in err) and len(err) == 3
    assert not out.exists()


def test_workload_tools():
    base = w1_like(10, seed=2, arrival_span_s=100)
    bigger = scale_sizes(base, 2.0)
    assert bigger.jobs[0].input_bytes == 2 * base.jobs[0].input_bytes and bigger.jobs[0].tasks == base.jobs[0].tasks
    off = perturb(base, size_error=0.5, arrival_error_s=60, fraction=1.0, seed=1)
    ratios = [o.input_bytes / b.input_bytes for o, b in zip(off.jobs, base.jobs)]
    assert all(0.5 <= r <= 1.5 for r in ratios) and len(set(ratios)) > 1
    mix = with_adhoc(base, w1_like(3, seed=3))
    assert sum(j.recurring_key is None for j in mix.jobs) == 3


def test_swim_replay_derives_tasks(tmp_path):
    trace = tmp_path / "t.tsv"
    trace.write_text("job0\t10\t10\t300000000\t2000000000\t5\njob1\t20\t10\t100\t0\t7\njob2\t4000\t10\t1\t1\t1\n")
    w = swim_replay(trace, example_cluster(), duration_s=3600, size_scale=1.0)
    assert [j.name for j in w.jobs] == ["swim-job0", "swim-job1"]
    first, second = w.jobs[0].stages[0], w.jobs[1].stages[0]
    assert first.map_tasks == 3 and first.reduce_tasks == 2  # 128 MiB splits, a reducer per GiB
    assert second.reduce_tasks == 0 and second.shuffle_bytes == 0


def test_sim_workload_writes_a_mix_scaled_as_asked(tmp_path, capsys):
    assert main(["sim-workload", "--out", str(tmp_path / "w.json"), "--jobs", "12", "--adhoc", "3", "--scale", "4", "--seed", "5"]) == 0
    written = io.load_workload(tmp_path / "w.json")
    plain = w1_like(12, seed=5, arrival_span_s=900)
    recurring = [j for j in written.jobs if j.recurring_key is not None]
    assert len(written.jobs) == 15 and all(j.name.startswith("adhoc-") for j in written.jobs if j.recurring_key is None)
    assert [j.input_bytes for j in recurring] == [4 * j.input_bytes for j in plain.jobs]
    assert "wrote 15 jobs (3 ad hoc, bytes x 4)" in capsys.readouterr().out


def test_sim_workload_with_errors_writes_what_runs_and_the_prediction(tmp_path):
    out, predicted = tmp_path / "w.json", tmp_path / "p.json"
    assert main(["sim-workload", "--out", str(out), "--predicted-out", str(predicted), "--jobs", "10", "--size-error", "0.5",
                 "--arrival-error", "60"]) == 0
    runs, prediction = io.load_workload(out), io.load_workload(predicted)
    assert prediction == scale_sizes(w1_like(10, seed=0, arrival_span_s=900), 8.0)  # bytes x 8 by default
    assert runs == perturb(prediction, 0.5, 60.0, 1.0, seed=0) and runs != prediction


def test_sim_workload_errors_are_one_line(tmp_path, capsys):
    for args, message in ((["--size-error", "0.2"], "give --predicted-out"), (["--source", "swim"], "needs --swim"),
                          (["--size-error", "1.5"], "argument --size-error: expected a fraction in [0, 1)")):
        assert main(["sim-workload", "--out", str(tmp_path / "w.json"), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("corral: error: ") and message in err, err
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize("command", [["simulate", "--scheduler", "corral"], ["compare", "--schedulers", "yarn-cs,corral", "--networks", "tcp"]])
def test_result_and_report_are_written_together(tmp_path, capsys, command):
    args = _inputs(tmp_path)
    out, report = tmp_path / "r.json", tmp_path / "rep"
    report.write_text("a file where the report directory should go")
    assert main([command[0], *args, *command[1:], "--out", str(out), "--report", str(report)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not out.exists() and report.read_text().startswith("a file")  # no result without its report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "rep", "w.json"]  # no temporary left
