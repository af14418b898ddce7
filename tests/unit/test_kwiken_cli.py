"""``corral kwiken``: latency logs in, plans out, plans fed to the simulator; bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from corral_yarn.cli import main
from corral_yarn.errors import InputError
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.plan import KwikenPlan
from corral_yarn.kwiken.trace import MIN_REQUESTS, Trace, latency_csv, parse_latency_csv, stage_costs

DAG = KwikenDag(name="w", stages=[{"name": "a"}, {"name": "b", "after": ["a"], "fanout": 4}])


def _csv(rows: int = MIN_REQUESTS, cost: bool = False) -> str:
    rng = np.random.default_rng(0)
    trace = Trace(("a", "b"), rng.lognormal(0, 1, (rows, 2)), np.array([2.0, 3.0]) if cost else None)
    return latency_csv(trace)


def test_csv_round_trip_and_costs() -> None:
    trace = parse_latency_csv(_csv(), DAG)
    assert trace.latency.shape == (MIN_REQUESTS, 2) and trace.cost is None
    mean = trace.latency.mean(axis=0)
    assert stage_costs(DAG, trace) == pytest.approx(mean * [1, 4] / (mean * [1, 4]).sum())  # mean latency x fan-out (§5.4.1)
    with_cost = parse_latency_csv(_csv(cost=True), DAG)
    assert with_cost.cost == pytest.approx([2.0, 3.0]) and stage_costs(DAG, with_cost) == pytest.approx([0.4, 0.6])


def _line(text: str, k: int, new: str | None) -> str:
    """The log with line k (1 = the header) replaced, or dropped if ``new`` is None."""
    lines = text.splitlines()
    lines[k - 1:k] = [] if new is None else [new]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("edit, where", [
    (lambda t: _line(t, 1, "request_id,stage,lat"), "line 1: the header lacks columns ['latency']"),
    (lambda t: _line(t, 3, "0,zz,1.0"), "line 3: stage: unknown stage 'zz'"),
    (lambda t: _line(t, 3, "0,a,1.0"), "line 3: request '0' has a second row for stage 'a'"),
    (lambda t: _line(t, 2, "0,a,abc"), "line 2: latency: expected a finite number >= 0"),
    (lambda t: _line(t, 2, "0,a,-1"), "line 2: latency: expected a finite number >= 0"),
    (lambda t: _line(t, 2, "0,a,inf"), "line 2: latency: expected a finite number >= 0"),
    (lambda t: _line(t, 5, None), "request '1' has no latency for stages ['b']"),
    (lambda t: "\n".join(t.splitlines()[:21]), f"10 requests; Kwiken needs at least {MIN_REQUESTS}"),
])
def test_bad_logs_name_line_and_column(edit, where: str) -> None:
    with pytest.raises(InputError, match=where.replace("[", r"\[").replace("]", r"\]")):
        parse_latency_csv(edit(_csv()), DAG, source="log.csv")


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("kwiken")
    assert main(["kwiken", "example", "--out", str(d), "--index", "3", "--requests", "2000"]) == 0
    return d


def test_plan_feeds_simulate(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = example / "plan.json"
    assert main(["kwiken", "plan", "--dag", str(example / "dag.json"), "--samples", str(example / "train.csv"),
                 "--budget", "0.05", "--out", str(plan_file)]) == 0
    plan = KwikenPlan.model_validate_json(plan_file.read_text())
    assert plan.planned_cost <= 0.05 + 1e-9 and [s.name for s in plan.stages] == KwikenDag.model_validate_json((example / "dag.json").read_text()).names
    capsys.readouterr()
    assert main(["kwiken", "simulate", "--dag", str(example / "dag.json"), "--plan", str(plan_file),
                 "--samples", str(example / "test.csv"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["requests"] == 2000 and 0 < result["spent"] < 0.1
    assert result["reduction"]["p99"] > 0 and result["with"]["p99"] < result["without"]["p99"]


def test_a_zero_budget_plan_changes_nothing(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = example / "none.json"
    assert main(["kwiken", "plan", "--dag", str(example / "dag.json"), "--samples", str(example / "train.csv"),
                 "--budget", "0", "--policy", "equal-budget", "--out", str(plan_file), "--json"]) == 0
    assert all(s["timeout"] is None for s in json.loads(capsys.readouterr().out)["stages"])
    assert main(["kwiken", "simulate", "--dag", str(example / "dag.json"), "--plan", str(plan_file),
                 "--samples", str(example / "test.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reduction"]["p99"] == 0.0


def _bad(example: Path, tmp_path: Path, case: str) -> list[str]:
    dag, train = str(example / "dag.json"), str(example / "train.csv")
    if case == "budget":
        return ["kwiken", "plan", "--dag", dag, "--samples", train, "--budget", "2", "--out", str(tmp_path / "p.json")]
    if case == "policy":
        return ["kwiken", "plan", "--dag", dag, "--samples", train, "--budget", "0.1", "--policy", "best", "--out", str(tmp_path / "p.json")]
    if case == "dag":
        bad = json.loads((example / "dag.json").read_text())
        bad["stages"][0]["after"] = ["nowhere"]
        (tmp_path / "dag.json").write_text(json.dumps(bad))
        return ["kwiken", "plan", "--dag", str(tmp_path / "dag.json"), "--samples", train, "--budget", "0.1", "--out", str(tmp_path / "p.json")]
    if case == "samples":
        return ["kwiken", "plan", "--dag", dag, "--samples", str(tmp_path / "missing.csv"), "--budget", "0.1", "--out", str(tmp_path / "p.json")]
    other = {"schema_version": "corral-yarn/kwiken-dag/v1", "name": "other", "stages": [{"name": "x"}]}
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main(["kwiken", "plan", "--dag", dag, "--samples", train, "--budget", "0.1", "--out", str(tmp_path / "p.json")]) == 0
    return ["kwiken", "simulate", "--dag", str(tmp_path / "other.json"), "--plan", str(tmp_path / "p.json"), "--samples", train]


@pytest.mark.parametrize("case, message", [
    ("budget", "--budget: expected a fraction in [0, 1]"), ("policy", "--policy: invalid choice"),
    ("dag", "runs after unknown stages ['nowhere']"), ("samples", "--samples: cannot read"),
    ("mismatch", "--plan: the plan is for DAG"),
])
def test_bad_input_is_one_line_and_exit_2(example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str) -> None:
    argv = _bad(example, tmp_path, case)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("corral: error: ") and err.count("\n") == 1 and message in err
    if case != "mismatch":
        assert not (tmp_path / "p.json").exists()  # no partial output
