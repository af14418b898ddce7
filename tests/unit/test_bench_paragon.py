"""benchmarks/bench_paragon.py's options: bad --truths values are named and exit 2, before any figure is measured."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

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
