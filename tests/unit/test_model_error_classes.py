"""Session 18 (docs/model.md "Error", docs/paragon.md "Session 18"): on node classes `corral model error`
charges each run the start-ups of its own racks, as the fit does; and the cluster spec `corral model fit`
writes, with per-class start-ups, fed to `corral plan`."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from corral_yarn.cli import main
from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, StageSpec, Workload
from corral_yarn.io import load_cluster, load_plan, save
from corral_yarn.model import job_rack_latency, plus_terms
from corral_yarn.model.classes import class_cluster, identical_machines, job_on_class
from corral_yarn.workloads import w1_like
from estimator.fit import ObservedRun, fit_cluster, model_errors, observed_runs
from estimator.records import JobRun, TaskSample
from estimator.store import HistoryStore
from tests.unit.test_estimator_fit import MB, T0, plus_cluster
from tests.unit.test_planner_hetero import classed

SPEED = {"slow": 1.0, "fast": 2.0}
JOB = {"slow": 40.0, "fast": 10.0}  # per-class job constants (s)
T_0 = 3.0  # the per-task start-up at speedup 1: each class's t_0 / speedup
RACKS = [("/r0",), ("/r2",), ("/r0", "/r1"), ("/r1", "/r2"), ("/r0", "/r1", "/r2")]  # confined to slow, to fast, and spread


def two_classes(model: MRCutePlus | str = "paper", figures: bool = False) -> ClusterSpec:
    """plus_cluster's 3 racks, /r0 and /r1 slow, /r2 fast (speedup 2); with ``figures`` the true start-ups per class."""
    per_class = {c: {"speedup": SPEED[c], **({"job_startup_s": JOB[c], "task_startup_s": T_0 / SPEED[c]} if figures else {})} for c in SPEED}
    return classed(plus_cluster().model_copy(update={"model": model}), per_class, ["slow", "slow", "fast"])


def test_a_run_confined_to_the_slow_class_is_charged_the_slow_classs_startups(caplog) -> None:
    cluster = two_classes(MRCutePlus(scale=1.1, job_startup_s=25.0, task_startup_s=2.25), figures=True)
    job = w1_like(1, seed=3).jobs[0]
    slow = cluster.model.model_copy(update={"job_startup_s": JOB["slow"], "task_startup_s": T_0})
    confined, unplaced = (ObservedRun(k, "j", job.stages[0], 1, 100.0, classes) for k, classes in (("a", ("slow",)), ("b", ())))
    on_slow, mean = (float(job_rack_latency(job, cluster.model_copy(update={"model": m}), 1)) for m in (slow, cluster.model))
    assert on_slow > mean  # the slow class's start-ups are the larger
    errors = model_errors([confined, unplaced], cluster)
    assert errors[0].model_s == pytest.approx(on_slow)
    assert errors[1].model_s == pytest.approx(mean)  # no racks recorded: the model's, the mean over every rack
    assert "1 runs do not record their racks' node classes" in caplog.text


def test_a_fit_on_runs_of_known_per_class_startups_has_no_error_on_any_run() -> None:
    cluster = two_classes(MRCutePlus())
    observed = []
    for k, job in enumerate(w1_like(25, seed=5).jobs):
        classes = tuple({"/r2": "fast"}.get(r, "slow") for r in RACKS[k % len(RACKS)])
        base, waves = plus_terms(job.stages[0], cluster, len(classes), MRCutePlus())
        startups = np.mean([JOB[c] for c in classes]) + np.mean([T_0 / SPEED[c] for c in classes]) * waves
        observed.append(ObservedRun(str(k), job.name, job.stages[0], len(classes), float(0.9 * base + startups), classes))
    fitted = fit_cluster(observed, cluster)
    assert max(abs(e.error) for e in model_errors(observed, fitted)) < 1e-6



def test_runs_that_recorded_no_racks_are_fitted_as_model_error_charges_them_over_every_rack() -> None:
    cluster, every_rack = two_classes(MRCutePlus()), ("slow", "slow", "fast")
    observed = []
    for k, job in enumerate(w1_like(25, seed=5).jobs):
        classes = tuple({"/r2": "fast"}.get(r, "slow") for r in RACKS[k % len(RACKS)]) if k % 3 else ()
        charged = classes or every_rack  # unrecorded: the model's figures, the means over every rack
        base, waves = plus_terms(job.stages[0], cluster, len(charged), MRCutePlus())
        startups = np.mean([JOB[c] for c in charged]) + np.mean([T_0 / SPEED[c] for c in charged]) * waves
        observed.append(ObservedRun(str(k), job.name, job.stages[0], len(charged), float(0.9 * base + startups), classes))
    fitted = fit_cluster(observed, cluster)
    assert max(abs(e.error) for e in model_errors(observed, fitted)) < 1e-6

def class_history(n: int = 20, seed: int = 3) -> list[JobRun]:
    """Runs on RACKS of plus_cluster's classes lasting scale 1.2 x the MRCute+ terms plus the true start-ups of their racks."""
    rng, cluster = np.random.default_rng(seed), two_classes(MRCutePlus())
    runs = []
    for i in range(n):
        key, map_rate, reduce_rate = [("sort", 20 * MB, 10 * MB), ("grep", 80 * MB, 40 * MB)][i % 2]
        maps, reds, racks = int(rng.integers(2, 60)), int(rng.integers(1, 14)), RACKS[i % len(RACKS)]
        size = maps * 64 * MB
        stage = StageSpec(name="main", input_bytes=size, shuffle_bytes=size / 2, output_bytes=size / 4, map_tasks=maps,
                          reduce_tasks=reds, map_rate_bytes_per_s=map_rate, reduce_rate_bytes_per_s=reduce_rate)
        base, waves = plus_terms(stage, cluster, len(racks), MRCutePlus())
        classes = [{"/r2": "fast"}.get(r, "slow") for r in racks]
        seconds = 1.2 * float(base) + np.mean([T_0 / SPEED[c] for c in classes]) * float(waves) + np.mean([JOB[c] for c in classes])
        start = T0 + timedelta(hours=i)
        runs.append(JobRun(
            run_id=f"r{i}", recurring_key=key, name=key, source="t", submit_time=start, start_time=start,
            finish_time=start + timedelta(seconds=float(seconds)), input_bytes=int(size), shuffle_bytes=int(size / 2),
            output_bytes=int(size / 4), map_tasks=maps, reduce_tasks=reds, map_task_samples=(TaskSample(64 * MB / map_rate, int(64 * MB)),),
            reduce_task_samples=(TaskSample(MB / reduce_rate, int(MB)),), racks=racks))
    return runs


def test_corral_model_fit_writes_per_class_startups_that_corral_plan_plans_with(tmp_path) -> None:
    HistoryStore(tmp_path / "store").append(class_history())
    save(two_classes(), tmp_path / "cluster.json")
    assert main(["model", "fit", "--store", str(tmp_path / "store"), "--cluster", str(tmp_path / "cluster.json"),
                 "--out", str(tmp_path / "fitted.json"), "--json"]) == 0
    fitted = load_cluster(tmp_path / "fitted.json")
    for c, n in fitted.node_classes.items():
        assert (n.job_startup_s, n.task_startup_s) == pytest.approx((JOB[c], T_0 / SPEED[c]), rel=1e-3)
    jobs = w1_like(6, seed=1)
    save(jobs, tmp_path / "jobs.json")
    assert main(["plan", "--jobs", str(tmp_path / "jobs.json"), "--cluster", str(tmp_path / "fitted.json"), "--scenario", "batch",
                 "--out", str(tmp_path / "plan.json")]) == 0
    plan = load_plan(tmp_path / "plan.json")
    assert plan.model == fitted.model
    by_name = {j.name: j for j in jobs.jobs}
    for p in plan.jobs:  # each job's L_j(r) with the fitted start-ups of its class, or their means over R_j
        assert p.predicted_duration_s == pytest.approx(on_fitted(by_name[p.name], fitted, p.racks, p.node_class))
    blind = fitted.model_copy(update={"node_classes": {c: n.model_copy(update={"job_startup_s": None, "task_startup_s": None})
                                                       for c, n in fitted.node_classes.items()}})  # the model's means everywhere
    assert any(p.predicted_duration_s != pytest.approx(on_fitted(by_name[p.name], blind, p.racks, p.node_class)) for p in plan.jobs)


def on_fitted(job: JobSpec, fitted: ClusterSpec, racks: list[str], node_class: str | None) -> float:
    """L_j(|R_j|) as the planner takes it: on one class at its speedups there and its start-ups, or, when the
    plan spreads jobs over the classes, at the job's mean rates and the mean start-ups over R_j."""
    if node_class:
        return float(job_rack_latency(job_on_class(job, fitted, node_class), class_cluster(fitted, node_class), len(racks)))
    (rated,), flat = identical_machines([job], fitted.model_copy(update={"racks": [r for r in fitted.racks if r.name in racks]}))
    return float(job_rack_latency(rated, flat, len(racks)))
