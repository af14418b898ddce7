"""benchmarks/bench_paragon.py's options: bad --truths values are named and exit 2, before any figure is measured; the
--seeds line (one seed's headline per seed, and the spread computed from those)."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_paragon.py"


def bench():
    spec = importlib.util.spec_from_file_location("bench_paragon", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_unknown_truth_exits_2_and_names_the_option() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--truths", "smooth"], capture_output=True, text=True, timeout=120,
                          cwd=BENCH.parents[1], env={"PYTHONPATH": str(BENCH.parents[1])})
    assert done.returncode == 2 and "--truths" in done.stderr and "'smooth'" in done.stderr and done.stdout == ""


def test_truths_are_distinct_known_names_the_first_is_the_headline() -> None:
    b = bench()
    assert b.truth_list("frontier,classes") == ("frontier", "classes")
    for bad in ("classes,classes", "classes,", ""):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(bad)):
            b.truth_list(bad)


def test_sessions_1_to_10s_constants_stay_selectable(monkeypatch) -> None:
    b = bench()
    monkeypatch.setattr(sys, "argv", ["bench_paragon.py"])
    new = b.world(b._args(), "frontier")
    assert (new.noise, new.second_concept, new.capacity_exponent, new.excess_slope) == (0.0025, 0.0, 0.0, 1.0)
    assert b.world(b._args(), "classes").noise == 0.03  # classes keeps the noise its scatter was fixed at
    monkeypatch.setattr(sys, "argv", ["bench_paragon.py", "--noise", "0.03", "--second-concept", "0.1",
                                      "--capacity-exponent", "1", "--excess-slope", "0.5"])
    old = b.world(b._args(), "frontier")
    assert (old.noise, old.second_concept, old.capacity_exponent, old.excess_slope) == (0.03, 0.1, 1.0, 0.5)


def test_a_negative_guard_exits_2_and_names_the_option() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--guard", "-1"], capture_output=True, text=True, timeout=120,
                          cwd=BENCH.parents[1], env={"PYTHONPATH": str(BENCH.parents[1])})
    assert done.returncode == 2 and "--guard" in done.stderr and "'-1'" in done.stderr and done.stdout == ""


def test_the_guard_sweep_reuses_the_headline_run_and_runs_the_others(monkeypatch) -> None:
    b = bench()
    ran = []
    monkeypatch.setattr(b.simulate, "run", lambda truth, jobs, scenario, scheduler, seed, guard: ran.append((scheduler, guard)) or guard)
    headline = object()
    out = b.guards(None, [], "low", 0, {1.0: headline})
    assert out[1.0] is headline and [out[k] for k in (0.0, 0.5, 2.0)] == [0.0, 0.5, 2.0]
    assert ran == [("paragon", 0.0), ("paragon", 0.5), ("paragon", 2.0)]


def test_a_guard_row_splits_qos_by_the_arrivals_the_greedy_relaxed() -> None:
    b = bench()
    jobs = [b.simulate.Job(sc_score=np.array(s), tolerated=np.ones(1), caused=np.zeros(1), cores=1)
            for s in ([0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0])]  # predicted best SC: 1, 0, 0, 1
    o = b.simulate.Outcome(performance=np.array([0.99, 0.5, 0.96, 0.9]), decision_ms=np.zeros(4),
                           backtracks=np.array([0, 3, 1, 0]), server_sc=np.array([1, 1, 0, 1]))
    assert b.guard_row(o, jobs) == {"qos": 0.5, "mean_performance": 0.8375, "relaxed": 2, "relaxed_qos": 0.5,
                                    "unrelaxed_qos": 0.5, "on_predicted_best_sc": 0.75}


def test_the_band_comparison_reuses_the_headline_run_and_reruns_the_other_band_on_the_same_profiles(monkeypatch) -> None:
    b = bench()
    ran, banded, classified = [], [], []
    monkeypatch.setattr(b.simulate, "run", lambda truth, jobs, scenario, scheduler, seed, guard: ran.append((jobs, scheduler, guard)) or "other")
    monkeypatch.setattr(b.simulate, "rebanded", lambda trained, levels: banded.append(levels) or "rebanded")
    monkeypatch.setattr(b.simulate, "classify_workloads",
                        lambda trained, truth, rng, batch: classified.append((trained, rng.random())) or b.simulate.Classified(["re"], [], {}))
    state = np.random.default_rng(5).bit_generator.state
    headline = object()
    out = b.band_variants("trained", None, b.simulate.Classified(["jobs"], [], {}), state, "low", 0, 1.0, headline)
    other = next(levels for levels in b.BANDS if levels != b.simulate.BAND_LEVELS)
    assert out[b.BANDS[b.simulate.BAND_LEVELS]] is headline and out[b.BANDS[other]] == "other"
    assert banded == [other] and ran == [(["re"], "paragon", 1.0)]
    assert classified == [("rebanded", np.random.default_rng(5).random())]  # the headline's profiling draws, replayed


def test_the_soi_rules_reuse_the_headline_runs_and_rerun_the_other_rule_on_the_same_profiling_draws(monkeypatch) -> None:
    b = bench()
    ran, classified = [], []
    jobs = [b.simulate.Job(sc_score=np.zeros(1), tolerated=np.ones(1), caused=np.zeros(1), cores=1)] * 2
    monkeypatch.setattr(b.simulate, "run", lambda truth, jobs, scenario, scheduler, seed, guard: ran.append(guard) or outcome(guard))
    monkeypatch.setattr(b.simulate, "classify_workloads",
                        lambda trained, truth, rng, batch: classified.append((trained, rng.random())) or b.simulate.Classified(jobs, [], accuracy()))
    trained = b.simulate.Trained(*[None] * 3, profile_scs=(0, 1), profile_sois=(2, 4), offline=(), band=())
    other = b.dataclasses.replace(trained, profile_sois=None)
    state = np.random.default_rng(5).bit_generator.state
    headline = b.simulate.Classified(jobs, [], accuracy())
    out = b.soi_rules(trained, other, None, headline, state, "low", 0, 1.0, {1.0: outcome(1.0), 0.0: outcome(0.0)})
    assert sorted(ran) == [0.0, 1.0]  # only the other rule is run again, at the guard and unguarded
    assert classified == [(other, np.random.default_rng(5).random())]  # the headline's profiling draws, replayed
    default, random = out[f"{b.simulate.SOI_RULE} (default)"], out[b.OTHER_SOI_RULE]
    assert default["profile_sois"] == ["l1_instruction", "llc"] and random["profile_sois"] == "random"
    assert default["qos"] == random["qos"] == 0.5 and default["qos_unguarded"] == 0.0 and default["classification"]["best_sc"] == 0.9


def test_the_sc_rules_reuse_the_headline_run_and_run_the_other_rule_on_the_same_workloads(monkeypatch) -> None:
    b = bench()
    ran = []
    jobs = [b.simulate.Job(sc_score=np.zeros(1), tolerated=np.ones(1), caused=np.zeros(1), cores=1)] * 2
    monkeypatch.setattr(b.simulate, "run", lambda truth, jobs_, scenario, scheduler, seed, guard, sc_rule:
                        ran.append((jobs_, scheduler, guard, sc_rule)) or outcome(0.0))
    out = b.sc_rules(None, jobs, "low", 0, 1.0, outcome(1.0))
    assert b.OTHER_SC_RULE == "sc_qos" and ran == [(jobs, "paragon", 1.0, "sc_qos")]
    assert out[f"{b.simulate.SC_RULE} (default)"]["qos"] == 0.5 and out["sc_qos"]["qos"] == 0.0


def test_seeds_below_two_exit_2_and_name_the_option() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--seeds", "1"], capture_output=True, text=True, timeout=120,
                          cwd=BENCH.parents[1], env={"PYTHONPATH": str(BENCH.parents[1])})
    assert done.returncode == 2 and "--seeds" in done.stderr and "'1'" in done.stderr and done.stdout == ""


def test_the_spread_is_the_mean_sample_deviation_and_t_interval_of_the_values() -> None:
    assert bench().spread([0.9, 0.8, 1.0]) == {"mean": 0.9, "std": 0.1, "min": 0.8, "max": 1.0, "ci95": [0.6516, 1.1484]}


SEEDS_KEYS = {"benchmark", "seeds", "servers", "scs", "cores", "offline_jobs", "truth", "scenario", "guard", "sc_rule", "soi_rule",
              "validation", "qos_paired_difference_from_paragon", "qos_fraction_by_seed", "qos_fraction", "classification_by_seed", "classification", "greedy_timeout_ms",
              "decisions_at_timeout_by_seed", "decision_ms", "truths", "paper", "seconds"}


def test_the_seeds_line_gives_each_seeds_headline_and_the_spread_computed_from_them(monkeypatch, capsys) -> None:
    b = bench()
    monkeypatch.setitem(b.simulate.SCENARIOS, "low", (200, 0, 0.5))  # --quick-sized: 200 workloads per seed
    monkeypatch.setattr(sys, "argv", ["bench_paragon.py", "--truths", "frontier", "--seed", "3", "--seeds", "3"])
    b.main()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    line = b.json.loads(lines[0])
    assert set(line) == SEEDS_KEYS and line["seeds"] == [3, 4, 5] and line["truth"] == "frontier" and line["truths"] == {}
    by_seed = line["qos_fraction_by_seed"]
    assert set(by_seed) == {*b.SEEDS_SCHEDULERS, "paragon_unguarded", "paragon_profiled_sois_validation"} == set(line["qos_fraction"])
    assert line["validation"] == "random_entries" and set(line["qos_paired_difference_from_paragon"]) == set(b.PAIRED)
    for name, row in line["qos_paired_difference_from_paragon"].items():
        assert row["mean"] == pytest.approx(np.mean(np.subtract(by_seed[name], by_seed["paragon"])), abs=1e-4)
    for scheduler, values in by_seed.items():
        assert len(values) == 3 and all(0 <= v <= 1 for v in values)
        row = line["qos_fraction"][scheduler]
        half = stats.t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3)
        assert row["mean"] == pytest.approx(np.mean(values), abs=1e-4) and row["std"] == pytest.approx(np.std(values, ddof=1), abs=1e-4)
        assert (row["min"], row["max"]) == (min(values), max(values))
        assert row["ci95"] == pytest.approx([np.mean(values) - half, np.mean(values) + half], abs=2e-4)
    for key, values in line["classification_by_seed"].items():
        assert len(values) == 3 and line["classification"][key] == pytest.approx(np.mean(values), abs=1e-4)
    assert len(set(line["classification_by_seed"]["interference_err"])) > 1  # each seed its own world and workloads
    assert all(len(v) == 3 and all(0 <= s <= 1 for s in v) for v in line["decisions_at_timeout_by_seed"].values())
    assert line["decision_ms"]["median"] <= line["decision_ms"]["p99"]


def outcome(guard: float):
    from corral_yarn.paragon.simulate import Outcome
    meets = np.array([1.0, 0.5]) if guard else np.zeros(2)
    return Outcome(performance=meets, decision_ms=np.zeros(2), backtracks=np.zeros(2, dtype=int), server_sc=np.zeros(2, dtype=int))


def accuracy() -> dict:
    return {"best_sc": 0.9, "within_5pct": 1.0, "interference_err": 0.03, "caused_top_decile_bias": -0.05}
