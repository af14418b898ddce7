"""MRCute parameters from task-level history (thesis §3.1.2)."""

from __future__ import annotations

import contextlib
import io
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pytest

from corral_yarn.errors import InputError
from estimator.fit import disk_bandwidth, fit_job
from estimator.profile import sample_text
from estimator.records import JobRun, TaskSample

T0 = datetime(2026, 1, 5, tzinfo=UTC)
MB = 1e6


def run(i: int, map_rate: float, reduce_rate: float, profile: bool = False, rng=None) -> JobRun:
    rng = rng or np.random.default_rng(i)
    maps = tuple(TaskSample(128 * MB / (map_rate * f), int(128 * MB), f"n{k % 3}") for k, f in enumerate(rng.uniform(0.9, 1.1, 8)))
    reds = tuple(TaskSample(50 * MB / (reduce_rate * f), int(50 * MB), f"n{k % 3}") for k, f in enumerate(rng.uniform(0.9, 1.1, 2)))
    return JobRun(
        run_id=f"r{i}{profile}", recurring_key="sort", name="sort", source="t", submit_time=T0 + timedelta(days=i),
        input_bytes=int(8 * 128 * MB), shuffle_bytes=int(4 * 128 * MB), output_bytes=int(100 * MB),
        map_tasks=8, reduce_tasks=2, map_task_samples=maps, reduce_task_samples=reds, is_profile=profile,
    )


def test_rates_and_selectivities_are_recovered():
    params = fit_job([run(i, 40 * MB, 20 * MB) for i in range(5)])
    assert params.map_rate_bytes_per_s == pytest.approx(40 * MB, rel=0.05)
    assert params.reduce_rate_bytes_per_s == pytest.approx(20 * MB, rel=0.1)
    assert params.map_selectivity == pytest.approx(2.0)
    assert params.reduce_selectivity == pytest.approx(4 * 128 / 100)
    assert params.bytes_per_map_task == pytest.approx(128 * MB) and params.reduce_tasks == 2
    assert not params.from_profile and params.runs == 5


def test_production_history_wins_over_a_profiling_run():
    params = fit_job([run(0, 10 * MB, 10 * MB, profile=True), run(1, 40 * MB, 20 * MB)])
    assert params.map_rate_bytes_per_s == pytest.approx(40 * MB, rel=0.1) and not params.from_profile


def test_profiling_run_is_the_fallback_for_a_job_without_task_history():
    no_tasks = JobRun(run_id="p", recurring_key="sort", name="sort", source="t", submit_time=T0, input_bytes=1, shuffle_bytes=1, output_bytes=1)
    params = fit_job([no_tasks, run(1, 30 * MB, 15 * MB, profile=True)])
    assert params.from_profile and params.map_rate_bytes_per_s == pytest.approx(30 * MB, rel=0.1)


def test_no_history_fits_nothing():
    params = fit_job([])
    assert params.runs == 0 and params.map_rate_bytes_per_s is None


def test_zero_duration_tasks_are_ignored():
    bad = run(0, 40 * MB, 20 * MB)
    broken = JobRun(**{**bad.__dict__, "map_task_samples": (TaskSample(0.0, 100, "n0"), *bad.map_task_samples)})
    assert fit_job([broken]).map_rate_bytes_per_s == pytest.approx(40 * MB, rel=0.1)


def test_disk_bandwidth_is_a_high_quantile_of_task_rates_per_machine():
    bd = disk_bandwidth([run(i, 40 * MB, 20 * MB) for i in range(3)])
    assert sorted(bd) == ["n0", "n1", "n2"]
    assert all(38 * MB < v < 45 * MB for v in bd.values())


class FakeHdfs:
    """status / list / read of a few in-memory files, as HdfsCLI answers them."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def status(self, path):
        return {"type": "FILE" if path in self.files else "DIRECTORY"}

    def list(self, path, status=False):
        return [(p.rsplit("/", 1)[1], {"type": "FILE"}) for p in self.files if p.startswith(path + "/")]

    def read(self, path, length=None):
        return contextlib.nullcontext(io.BytesIO(self.files[path][:length]))


def test_profile_sample_is_the_first_whole_lines_of_the_inputs():
    cluster = SimpleNamespace(hdfs=FakeHdfs({"/in/a": b"one two\nthree\n", "/in/b": b"four five\nsix\n", "/in/_SUCCESS": b""}))
    assert sample_text(cluster, ["/in"], 10) == b"one two\n"
    assert sample_text(cluster, ["/in"], 20) == b"one two\nthree\n"  # "four " of /in/b cut off
    assert sample_text(cluster, ["/in/b"], 100) == b"four five\nsix\n"
    with pytest.raises(InputError, match="no whole line"):
        sample_text(cluster, ["/in"], 3)
