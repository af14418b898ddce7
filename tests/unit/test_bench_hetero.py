"""benchmarks/bench_hetero.py's options: a bad value exits 2 naming it, before any plan is made or run simulated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_hetero.py"


@pytest.mark.parametrize(("argv", "named"), [
    (["--task-startup", "-1"], "argument --task-startup: expected a finite number >= 0, got '-1'"),
    (["--task-startup", "nan"], "argument --task-startup: expected a finite number >= 0, got 'nan'"),
    (["--task-startup", "4000"], "node_classes.old.task_startup_s: Input should be less than or equal to 3600"),
    (["--task-startup-planned", "median"], "argument --task-startup-planned: invalid choice: 'median'"),
    (["--cpu-speedup", "500"], "node_classes.new.speedup: Input should be less than or equal to 100"),
    (["--jobs", "0"], "argument --jobs: expected a whole number >= 1, got '0'"),
    (["--sim-seeds", "0"], "argument --sim-seeds: expected a whole number >= 1, got '0'"),
])
def test_a_bad_option_exits_2_and_names_it(argv: list[str], named: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH), *argv], capture_output=True, text=True, timeout=120,
                          cwd=BENCH.parents[1], env={"PYTHONPATH": str(BENCH.parents[1])})
    assert done.returncode == 2 and named in done.stderr and "Traceback" not in done.stderr and done.stdout == ""
