"""benchmarks/bench_soak.py's pure parts: per-round ratios, their median and spread, the burst order,
the timer deltas, and the command line (a wrong value exits 2 naming it, before any cluster starts)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_soak.py"


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("bench_soak", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_round_ratios_are_corral_over_stock_per_round(soak):
    assert soak.round_ratios([2.0, 4.0, 0.0], [1.0, 5.0, 3.0]) == [0.5, 1.25, None]


def test_round_ratios_refuse_unpaired_bursts(soak):
    with pytest.raises(ValueError, match="2 stock bursts but 1 Corral"):
        soak.round_ratios([1.0, 2.0], [1.0])


def test_spread_gives_median_quartiles_and_range_without_missing_rounds(soak):
    s = soak.spread([1.2, None, 0.8, 1.0, 0.9, 1.1])
    assert s == {"median": 1.0, "q1": 0.9, "q3": 1.1, "min": 0.8, "max": 1.2, "n": 5}


def test_spread_of_even_count_takes_the_middle_mean(soak):
    assert soak.spread([0.5, 1.5, 1.0, 2.0])["median"] == 1.25


def test_spread_of_one_and_of_none(soak):
    assert soak.spread([0.93]) == {"median": 0.93, "q1": 0.93, "q3": 0.93, "min": 0.93, "max": 0.93, "n": 1}
    assert soak.spread([None, None])["median"] is None
    assert soak.spread([])["n"] == 0


def test_burst_order_alternates_which_scheduler_goes_first(soak):
    assert [soak.burst_order(r) for r in range(3)] == [("capacity", "corral"), ("corral", "capacity"), ("capacity", "corral")]


def test_timer_deltas_count_calls_between_two_bean_snapshots(soak):
    before = {"NodeUpdateNumOps": 100, "AllocateNumOps": 7, "CommitSuccessNumOps": 7}
    after = {"NodeUpdateNumOps": 160, "AllocateNumOps": 27, "CommitSuccessNumOps": 26}
    assert soak.timer_deltas(before, after) == {"NodeUpdate": 60, "Allocate": 20, "CommitSuccess": 19}
    assert soak.timer_deltas({}, {}) == {"NodeUpdate": 0, "Allocate": 0, "CommitSuccess": 0}


def test_quick_sets_its_bounds(soak):
    args = soak.parse_args(["--quick", "--rounds", "50"])
    assert (args.rounds, args.burst, args.max_seconds) == (6, 40, 1200.0)
    assert soak.parse_args([]).rounds == 10
    assert soak.parse_args([]).together and not soak.parse_args(["--alternate"]).together


@pytest.mark.parametrize(("argv", "named"), [
    (["--rounds", "0"], "--rounds"),
    (["--burst", "-1"], "--burst"),
    (["--in-flight", "0"], "--in-flight"),
    (["--racks", "1"], "--racks"),
    (["--nodes-per-rack", "0"], "--nodes-per-rack"),
    (["--burst-timeout", "0"], "--burst-timeout"),
    (["--max-seconds", "-5"], "--max-seconds"),
    (["--start-timeout", "nan"], "--start-timeout"),
    (["--tagged-share", "1.5"], "--tagged-share"),
    (["--rounds", "many"], "--rounds"),
])
def test_bad_arguments_exit_2_naming_the_field(soak, capsys, argv, named):
    with pytest.raises(SystemExit) as exit_:
        soak.parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr()
    assert named in err.err and err.out == ""


def test_timer_means_weigh_each_refresh_window_by_its_calls(soak):
    timed = {t: [0.0, 0.0] for t in soak.TIMERS}
    beans = [{"AllocateNumOps": 0, "AllocateAvgTime": 0.0},
             {"AllocateNumOps": 1, "AllocateAvgTime": 4000.0},   # one call of 4 us
             {"AllocateNumOps": 1, "AllocateAvgTime": 4000.0},   # no call: the stale mean is not counted again
             {"AllocateNumOps": 4, "AllocateAvgTime": 1000.0}]   # three calls of 1 us on average
    for before, after in zip(beans, beans[1:]):
        soak.accumulate_timers(timed, before, after)
    assert timed["Allocate"] == [7000.0, 4.0] and timed["NodeUpdate"] == [0.0, 0.0]
