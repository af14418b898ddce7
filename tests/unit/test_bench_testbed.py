"""benchmarks/bench_testbed.py's pure parts: which ablation variants run (``--variants``), and its command
line (a wrong value exits 2 naming it, before any testbed starts)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_testbed.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_testbed", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_variant_runs_by_default_and_the_online_order_only_online(bench):
    assert [v[0] for v in bench._ablation_variants("paper", "online")] == ["yarn-cs", *bench.ABLATION]
    assert [v[0] for v in bench._ablation_variants("paper", "batch")] == ["yarn-cs", "corral-thesis", "+mrcute+", "+sharing"]


def test_chosen_variants_run_beside_yarn_cs_with_their_own_plan_choices(bench):
    chosen = bench._ablation_variants("paper", "online", ["corral-thesis", "+mrcute+"])
    assert [(name, scheduler) for name, scheduler, _ in chosen] == [("yarn-cs", "yarn-cs"), ("corral-thesis", "corral"), ("+mrcute+", "corral")]
    assert [(c.sharing, c.order) for _, _, c in chosen[1:]] == [("whole-rack", "thesis"), ("whole-rack", "thesis")]


@pytest.mark.parametrize(("argv", "message"), [
    (["--variants", "+online-order"], "+online-order needs +sharing"),
    (["--variants", "+fast"], "invalid choice: '+fast'"),
])
def test_a_wrong_variant_list_exits_2_naming_it(bench, monkeypatch, capsys, argv, message):
    monkeypatch.setattr(sys, "argv", ["bench_testbed.py", "--ablation", *argv])
    with pytest.raises(SystemExit) as exit_:
        bench.main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--variants" in err and message in err
