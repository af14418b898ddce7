"""``corral example``, ``plan``, ``report`` and ``demo`` end to end through main()."""

from __future__ import annotations

import argparse
import json
from io import StringIO as io_text
from pathlib import Path

import pytest
from tqdm import tqdm

from corral_yarn import io
from corral_yarn.cli import COMMANDS, build_parser, main
from corral_yarn.report.html import INDEX


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    assert main(["example", "--out", str(tmp_path), "--jobs", "12", "--racks", "4", "--machines-per-rack", "5",
                 "--seed", "7", "--arrival-span", "200"]) == 0
    return tmp_path


def plan_args(d: Path, scenario: str = "batch", *extra: str) -> list[str]:
    return ["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "cluster.json"), "--scenario", scenario,
            "--out", str(d / f"plan-{scenario}.json"), *extra]


def test_example_writes_a_valid_cluster_and_workload(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster, workload = io.load_cluster(inputs / "cluster.json"), io.load_workload(inputs / "jobs.json")
    assert len(cluster.racks) == 4 and cluster.machines_per_rack == 5
    assert len(workload.jobs) == 12
    assert max(j.arrival_s for j in workload.jobs) <= 200.0 and min(j.arrival_s for j in workload.jobs) >= 0.0


def test_example_is_seeded(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert main(["example", "--out", str(tmp_path / name), "--seed", "3", "--jobs", "5"]) == 0
    assert (tmp_path / "a" / "jobs.json").read_text() == (tmp_path / "b" / "jobs.json").read_text()


@pytest.mark.parametrize("scenario", ["batch", "online"])
def test_plan_writes_a_plan_and_prints_a_summary(inputs: Path, scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(plan_args(inputs, scenario)) == 0
    plan = io.load_plan(inputs / f"plan-{scenario}.json")
    assert plan.scenario == scenario and len(plan.jobs) == 12
    assert plan.lower_bound_s is not None and plan.gap is not None and plan.gap >= -1e-9
    out = capsys.readouterr().out
    objective = "makespan" if scenario == "batch" else "mean completion time"
    order = "thesis" if scenario == "batch" else "shortest-work"
    assert plan.options.order == order
    assert f"Planned 12 jobs on 4 racks ({scenario} scenario, fast planner, {order} order): {objective}" in out
    assert "LP lower bound" in out and "coefficient of variation" in out


def test_plan_options(inputs: Path) -> None:
    assert main(plan_args(inputs, "batch", "--no-bound", "--alpha", "0")) == 0
    plan = io.load_plan(inputs / "plan-batch.json")
    assert plan.lower_bound_s is None and plan.gap is None and plan.alpha_s_per_byte == 0.0


@pytest.mark.parametrize("order", ["thesis", "shortest-work"])
def test_the_order_is_recorded_in_the_plan_and_changes_its_input_digest(inputs: Path, order: str) -> None:
    assert main(plan_args(inputs, "batch", "--no-bound")) == 0
    default = io.load_plan(inputs / "plan-batch.json")
    assert main(plan_args(inputs, "batch", "--no-bound", "--order", order)) == 0
    chosen = io.load_plan(inputs / "plan-batch.json")
    assert chosen.options.order == order
    assert (chosen.inputs_sha256 == default.inputs_sha256) == (order == "thesis")


def test_the_shortest_work_order_runs_short_jobs_first_among_equal_arrivals(tmp_path: Path) -> None:
    # every job arrives at 0: shortest-work lists them by r_j L_j(r_j), the thesis widest then longest
    assert main(["example", "--out", str(tmp_path), "--jobs", "12", "--racks", "3", "--seed", "2"]) == 0
    plans = {}
    for order in ("thesis", "shortest-work"):
        assert main(plan_args(tmp_path, "online", "--no-bound", "--order", order)) == 0
        plans[order] = io.load_plan(tmp_path / "plan-online.json")
    work = [len(j.racks) * (j.planned_finish_s - j.planned_start_s) for j in plans["shortest-work"].jobs]  # listed by order
    assert work == sorted(work)
    assert plans["shortest-work"].objective_s < plans["thesis"].objective_s


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("map_rate_bytes_per_s", 1e-300, "jobs.json: jobs[2].stages[0].map_rate_bytes_per_s: Input should be greater than or equal to 0.001"),
    ("map_rate_bytes_per_s", 1e-10, "jobs.json: jobs[2].stages[0].map_rate_bytes_per_s: Input should be greater than or equal to 0.001"),
    ("map_tasks", 10**30, "jobs.json: jobs[2].stages[0].map_tasks: Input should be less than or equal to 10000000"),
    ("map_rate_bytes_per_s", 0.001, "jobs[2] (w1-"),  # in range, but its latency would be about 10^11 s
])
def test_numbers_outside_their_physical_range_are_one_line_errors(inputs: Path, capsys: pytest.CaptureFixture[str], field: str,
                                                                  value: float, expected: str) -> None:
    data = json.loads((inputs / "jobs.json").read_text())
    data["jobs"][2]["stages"][0][field] = value
    (inputs / "jobs.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(plan_args(inputs, "online")) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("corral: error: ") and expected in err[0], err
    assert not (inputs / "plan-online.json").exists()


def test_reference_and_fast_planners_agree(inputs: Path) -> None:
    assert main(plan_args(inputs, "online", "--planner", "reference")) == 0
    reference = io.load_plan(inputs / "plan-online.json")
    assert main(plan_args(inputs, "online", "--planner", "fast")) == 0
    assert io.load_plan(inputs / "plan-online.json") == reference


def test_report_prints_the_index_path(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(plan_args(inputs)) == 0
    capsys.readouterr()
    out_dir = inputs / "report"
    assert main(["report", str(inputs / "plan-batch.json"), "--out", str(out_dir),
                 "--cluster", str(inputs / "cluster.json"), "--jobs", str(inputs / "jobs.json")]) == 0
    assert capsys.readouterr().out.strip() == str(out_dir / INDEX)
    assert sorted(p.name for p in out_dir.iterdir()) == [INDEX, "rack_input.png", "schedule.png", "summary.png"]


def test_demo_writes_plans_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan-demo", "--out", str(tmp_path)]) == 0
    for scenario in ("batch", "online"):
        assert io.load_plan(tmp_path / f"plan-{scenario}.json").scenario == scenario
        assert (tmp_path / f"report-{scenario}" / INDEX).is_file()
    assert str(tmp_path / "report-batch" / INDEX) in capsys.readouterr().out


def test_demo_plans_with_the_sharing_mode_it_is_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan-demo", "--out", str(tmp_path / "bad"), "--sharing", "half"]) == 2
    assert "argument --sharing: invalid choice: 'half'" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    assert main(["plan-demo", "--out", str(tmp_path), "--sharing", "slots"]) == 0
    assert {io.load_plan(tmp_path / f"plan-{s}.json").options.sharing for s in ("batch", "online")} == {"slots"}


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("corral ")
    assert main(["plan", "--help"]) == 0
    assert "--scenario" in capsys.readouterr().out


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every subcommand's parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += [p for child in action.choices.values() for p in _parsers(child)]
    return found


def test_every_option_of_every_command_has_help() -> None:
    for parser in _parsers(build_parser()):
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help, f"{parser.prog} {action.option_strings or action.dest} has no help"


def test_plan_module_is_registered() -> None:
    assert any(m.__name__ == "corral_yarn.cli.plan" for m in COMMANDS)


def test_verbose_before_or_after_the_command(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-v", *plan_args(inputs)]) == 0
    assert "planning 12 jobs on 4 racks" in capsys.readouterr().err
    assert main([*plan_args(inputs), "-v"]) == 0
    assert "planning 12 jobs on 4 racks" in capsys.readouterr().err
    assert main(plan_args(inputs)) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("extra", "phases"), [
    ((), ["latency model", "fast heuristic", "LP lower bound"]),
    (("--no-bound", "--planner", "reference"), ["latency model", "reference heuristic"]),
])
def test_plan_reports_each_phase_to_its_progress_bar(inputs: Path, monkeypatch: pytest.MonkeyPatch, extra: tuple[str, ...],
                                                   phases: list[str]) -> None:
    bars: list[tqdm] = []

    def visible_bar(*args: object, **kwargs: object) -> tqdm:
        bars.append(tqdm(*args, **{**kwargs, "disable": False, "file": io_text()}))
        return bars[-1]

    monkeypatch.setattr("corral_yarn.cli.plan.tqdm", visible_bar)
    assert main(plan_args(inputs, "batch", *extra)) == 0
    [bar] = bars
    shown = bar.fp.getvalue()
    assert all(f"corral plan: {phase}" in shown for phase in phases) and bar.n == bar.total == len(phases)


def test_plan_with_slot_sharing_records_the_mode_and_shares_racks(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*plan_args(inputs, "batch"), "--sharing", "slots"]) == 0
    shared = io.load_plan(inputs / "plan-batch.json")
    assert shared.options.sharing == "slots" and shared.lower_bound_s is None
    assert "slot sharing" in capsys.readouterr().out
    report = inputs / "report-slots"  # the slots plan feeds corral report as any plan does
    assert main(["report", str(inputs / "plan-batch.json"), "--out", str(report), "--cluster", str(inputs / "cluster.json"),
                 "--jobs", str(inputs / "jobs.json")]) == 0
    assert (report / "index.html").is_file() and (report / "schedule.png").is_file()
    assert main(plan_args(inputs, "batch")) == 0
    whole = io.load_plan(inputs / "plan-batch.json")
    assert whole.options.sharing == "whole-rack" and whole.plan_id != shared.plan_id


def test_plan_rejects_an_unknown_sharing_mode(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*plan_args(inputs, "batch"), "--sharing", "half"]) == 2
    assert "corral: error: argument --sharing: invalid choice: 'half'" in capsys.readouterr().err
    assert not (inputs / "plan-batch.json").exists()


UNUSED = "interference is on but sharing is whole-rack"


def test_plan_warns_on_stderr_that_whole_racks_leave_interference_pairs_unused(inputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Jobs marked by 'corral estimate --interference' (interferes_with): whole racks say so on stderr, as corral_plan's
    task log does (docs/cli.md); slots, which the pairs steer, and unmarked jobs do not."""
    workload = io.load_workload(inputs / "jobs.json")
    first, second = workload.jobs[0].name, workload.jobs[1].name
    marks = {first: [second], second: [first]}
    io.save(workload.model_copy(update={"jobs": [j.model_copy(update={"interferes_with": marks.get(j.name)}) for j in workload.jobs]}),
            inputs / "marked.json")
    marked = ["plan", "--jobs", str(inputs / "marked.json"), "--cluster", str(inputs / "cluster.json"), "--scenario", "batch",
              "--out", str(inputs / "plan.json"), "--no-bound"]
    for args, warns in ((marked, True), ([*marked, "--sharing", "slots"], False), (plan_args(inputs, "batch", "--no-bound"), False)):
        assert main(args) == 0
        err = capsys.readouterr().err
        assert (f"WARNING corral_yarn.planner.build: {UNUSED}" in err) == warns, (args, err)
        assert ("(1 pair(s) among the planned jobs' interferes_with)" in err) == warns
