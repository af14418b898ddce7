"""Per-class task rates from the history store and the classification engine's fill-in (docs/paragon.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from corral_yarn.cli import main
from corral_yarn.contracts import ClusterSpec, Workload
from corral_yarn.io import save
from corral_yarn.workloads import example_cluster, w1_like
from estimator.classes import observed, speedups, with_class_speedups
from estimator.records import JobRun, TaskSample
from estimator.store import HistoryStore

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def cluster() -> ClusterSpec:
    data = example_cluster(racks=4, machines_per_rack=2).model_dump()
    for rack, name in zip(data["racks"], ["fast", "slow", "fast", "slow"]):
        rack["node_class"] = name
    return ClusterSpec.model_validate({**data, "node_classes": {"fast": {"speedup": 1.5}, "slow": {}}})


def run(key: str, k: int, rates: dict[str, float], day: int = 0) -> JobRun:
    """A run whose map tasks ran on the given nodes at the given rates (bytes/s)."""
    samples = tuple(TaskSample(seconds=128e6 / rate, bytes=int(128e6), node=node) for node, rate in rates.items())
    return JobRun(run_id=f"{key}:{day}:{k}", recurring_key=key, name=key, source="test", submit_time=T0 + timedelta(days=day, minutes=k),
                  start_time=T0 + timedelta(days=day, minutes=k), finish_time=T0 + timedelta(days=day, minutes=k + 5),
                  input_bytes=int(128e6) * len(rates), shuffle_bytes=0, output_bytes=0, map_tasks=len(rates), reduce_tasks=0,
                  map_task_samples=samples)


def history() -> list[JobRun]:
    """cpu-* jobs run 2x faster on fast nodes, io-* the same on both; 'new' ran only on slow nodes."""
    runs = []
    for k in range(3):
        runs.append(run(f"cpu-{k}", k, {"r00m00": 40e6 * (k + 1), "r00m01": 40e6 * (k + 1), "r01m00": 20e6 * (k + 1), "r01m01": 20e6 * (k + 1)}))
        runs.append(run(f"io-{k}", k, {"r02m00": 30e6, "r02m01": 30e6, "r03m00": 30e6, "r03m01": 30e6}))
    runs.append(run("new", 0, {"r01m00": 10e6, "r03m01": 10e6}))
    runs.append(run("elsewhere", 0, {"unknown-host": 10e6}))
    return runs


def test_observed_speedups_are_the_class_median_over_the_jobs_median() -> None:
    seen = observed(history(), cluster())
    assert seen["cpu-1"] == pytest.approx({"fast": 80 / 60, "slow": 40 / 60})
    assert seen["io-0"] == pytest.approx({"fast": 1.0, "slow": 1.0})
    assert seen["new"] == pytest.approx({"slow": 1.0})
    assert "elsewhere" not in seen  # samples on nodes the cluster spec does not know are left out


def test_unseen_classes_are_filled_in_by_the_classification_engine() -> None:
    found = speedups(history(), cluster())
    assert found.filled == {"new": ["fast"]}
    # from the dense rows: half the jobs 2x faster on fast, half alike: a job's fast/slow ratio lies between
    ratio = found.speedups["new"]["fast"] / found.speedups["new"]["slow"]
    assert 1.0 < ratio < 2.0
    assert found.speedups["cpu-0"] == pytest.approx({"fast": 4 / 3, "slow": 2 / 3})


def test_a_cpu_bound_newcomer_is_filled_in_like_the_cpu_bound_jobs() -> None:
    runs = [r for r in history() if not r.recurring_key.startswith("io")]
    found = speedups(runs, cluster())
    assert found.speedups["new"]["fast"] == pytest.approx(2.0, rel=0.1)  # like every dense row: fast = 2 x slow


def test_without_enough_dense_rows_unseen_classes_keep_the_defaults() -> None:
    runs = [r for r in history() if r.recurring_key in ("cpu-0", "new")]
    found = speedups(runs, cluster())
    assert found.filled == {} and found.speedups["new"] == pytest.approx({"slow": 1.0})


def test_with_class_speedups_sets_the_jobs_per_class_figures() -> None:
    jobs = [j.model_copy(update={"recurring_key": key}) for j, key in zip(w1_like(3).jobs, ["cpu-0", "new", "none"])]
    workload, _ = with_class_speedups(Workload(jobs=jobs), history(), cluster())
    assert workload.jobs[0].class_speedups == pytest.approx({"fast": 4 / 3, "slow": 2 / 3})
    assert set(workload.jobs[1].class_speedups) == {"fast", "slow"}
    assert workload.jobs[2].class_speedups is None


def test_corral_estimate_with_a_cluster_of_node_classes(tmp_path) -> None:
    runs = []
    for day in range(4):
        runs += [r.__class__(**{**r.__dict__, "run_id": f"{r.run_id}:d{day}", "submit_time": r.submit_time + timedelta(days=day),
                               "start_time": r.start_time + timedelta(days=day), "finish_time": r.finish_time + timedelta(days=day)})
                 for r in history()]
    HistoryStore(tmp_path / "h").append(runs)
    save(cluster(), tmp_path / "cluster.json")
    args = ["estimate", "--store", str(tmp_path / "h"), "--at", "2026-01-09T00:00", "--horizon", "1d", "--no-adhoc",
            "--out", str(tmp_path / "jobs.json"), "--details", str(tmp_path / "d.json")]
    assert main([*args, "--cluster", str(tmp_path / "cluster.json")]) == 0
    jobs = {j["recurring_key"]: j for j in json.loads((tmp_path / "jobs.json").read_text())["jobs"]}
    assert jobs["cpu-0"]["class_speedups"] == pytest.approx({"fast": 4 / 3, "slow": 2 / 3})
    assert json.loads((tmp_path / "d.json").read_text())["class_speedups"]["filled_by_classification"] == {"new": ["fast"]}
    assert main(["plan", "--jobs", str(tmp_path / "jobs.json"), "--cluster", str(tmp_path / "cluster.json"), "--scenario", "batch",
                 "--out", str(tmp_path / "plan.json")]) == 0
    assert main([*args, "--cluster", str(tmp_path / "nope.json")]) == 2
    assert np.isfinite(json.loads((tmp_path / "plan.json").read_text())["objective_s"])


def test_runs_of_other_sizes_are_pooled_without_moving_the_ratio_between_classes() -> None:
    """Two runs of one job, one 4x faster throughout (other data), one task on fast nodes in the fast run
    and three in the slow run: raw medians would give 4x apart; rates relative to their run's median give 2x."""
    runs = [run("cpu", 0, {"r00m00": 160e6, "r01m00": 80e6, "r01m01": 80e6}),
            run("cpu", 1, {"r00m00": 40e6, "r00m01": 40e6, "r02m00": 40e6, "r01m00": 20e6}, day=1)]
    seen = observed(runs, cluster())["cpu"]
    assert seen["fast"] / seen["slow"] == pytest.approx(2.0)
