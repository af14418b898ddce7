"""benchmarks/bench_testbed.py's pure parts: which ablation variants run (``--variants``), and its command
line (a wrong value exits 2 naming it, before any testbed starts)."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime, timedelta
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


def test_a_missing_profile_store_exits_2_naming_it(bench, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "argv", ["bench_testbed.py", "--ablation", "--profile-store", str(tmp_path / "none")])
    with pytest.raises(SystemExit) as exit_:
        bench.main()
    assert exit_.value.code == 2
    assert "--profile-store: no history store at" in capsys.readouterr().err


def test_profiles_are_each_recurring_jobs_fit_on_its_runs_in_the_store(bench, tmp_path):
    """Selectivities from the runs' sizes, rates the median of their task samples (estimator.fit.fit_job)."""
    from estimator.records import JobRun, TaskSample
    from estimator.store import HistoryStore

    t0 = datetime(2026, 11, 25, 12, tzinfo=UTC)

    def run(k: int, key: str, seconds: float) -> JobRun:
        return JobRun(run_id=f"r{key}{k}", recurring_key=key, name=key, source="test", submit_time=t0 + timedelta(minutes=k),
                      start_time=t0 + timedelta(minutes=k), finish_time=t0 + timedelta(minutes=k, seconds=60), input_bytes=8_000_000,
                      shuffle_bytes=4_000_000, output_bytes=2_000_000, map_tasks=1, reduce_tasks=1, outcome="SUCCEEDED",
                      map_task_samples=(TaskSample(seconds, 8_000_000, "n1"),), reduce_task_samples=(TaskSample(seconds / 2, 2_000_000, "n1"),))

    HistoryStore(tmp_path).append([run(k, "sort-0", s) for k, s in enumerate((8.0, 10.0, 16.0))])
    profile = bench.profiles(tmp_path)["sort-0"]
    assert (profile.map_selectivity, profile.reduce_selectivity) == (2.0, 2.0)
    assert profile.map_rate_bytes_per_s == pytest.approx(8_000_000 / 10.0)
    assert profile.reduce_rate_bytes_per_s == pytest.approx(2_000_000 / 5.0)
