"""``corral simulate`` and ``corral compare`` end to end on a small workload, and their errors."""

from __future__ import annotations

import json

from corral_yarn import io
from corral_yarn.cli import main
from corral_yarn.sim.workloads import perturb, scale_sizes, swim_replay, with_adhoc
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


def test_compare_runs_every_combination(tmp_path):
    args = _inputs(tmp_path)
    out = tmp_path / "all.json"
    assert main(["compare", *args, "--schedulers", "yarn-cs,corral", "--networks", "tcp,varys", "--scenario", "batch", "--out", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [r["label"] for r in runs] == ["yarn-cs+tcp", "yarn-cs+varys", "corral+tcp", "corral+varys"]


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
    assert "wrote 15 jobs (3 ad hoc)" in capsys.readouterr().out


def test_sim_workload_with_errors_writes_what_runs_and_the_prediction(tmp_path):
    out, predicted = tmp_path / "w.json", tmp_path / "p.json"
    assert main(["sim-workload", "--out", str(out), "--predicted-out", str(predicted), "--jobs", "10", "--size-error", "0.5",
                 "--arrival-error", "60"]) == 0
    runs, prediction = io.load_workload(out), io.load_workload(predicted)
    assert prediction == w1_like(10, seed=0, arrival_span_s=900)
    assert runs == perturb(prediction, 0.5, 60.0, 1.0, seed=0) and runs != prediction


def test_sim_workload_errors_are_one_line(tmp_path, capsys):
    for args, message in ((["--size-error", "0.2"], "give --predicted-out"), (["--source", "swim"], "needs --swim"),
                          (["--size-error", "1.5"], "argument --size-error: expected a fraction in [0, 1)")):
        assert main(["sim-workload", "--out", str(tmp_path / "w.json"), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("corral: error: ") and message in err, err
    assert not (tmp_path / "w.json").exists()
