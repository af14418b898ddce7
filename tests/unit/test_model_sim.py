"""MRCute+ against the simulator: one job alone, with the start-up costs the simulator now runs, and
MRCute+ fitted on simulated runs predicting other simulated runs (docs/model.md, docs/simulator.md)."""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.contracts import MRCutePlus, Workload
from corral_yarn.model import job_rack_latency, rack_waves
from corral_yarn.sim import RunSpec, simulate
from corral_yarn.workloads import example_cluster, w1_like
from estimator.fit import ObservedRun, fit_model

RACKS = (1, 2, 4, 7)


def alone(seed: int, jobs: int, model=None):
    """(cluster, racks, job, simulated completion) of every one-reduce-wave W1-like job run alone on r racks."""
    out = []
    for racks in RACKS:
        cluster = example_cluster(racks=racks)
        cluster = cluster if model is None else cluster.model_copy(update={"model": model})
        slots = racks * cluster.machines_per_rack * cluster.reduce_slots_per_machine
        for job in w1_like(jobs, seed=seed).jobs:
            if job.stages[0].reduce_tasks <= slots:
                result = simulate(cluster, Workload(jobs=[job]), RunSpec("yarn-cs", scenario="batch"))
                out.append((cluster, racks, job, result.jobs[0].completion_s))
    return out


def gaps(runs, model=None) -> np.ndarray:
    """simulated / predicted - 1 per run, by the cluster's model or ``model``."""
    return np.array([s / float(job_rack_latency(j, c if model is None else c.model_copy(update={"model": model}), r)) - 1
                     for c, r, j, s in runs])


def test_the_simulator_runs_the_start_up_costs_of_mrcute_plus():
    plus = MRCutePlus(job_startup_s=10.0, task_startup_s=1.0)
    bare, costly = alone(3, 6), alone(3, 6, plus)
    for (c, r, job, before), (_, _, _, after) in zip(bare, costly, strict=True):
        # each wave of tasks waits for its containers: the job is later by the constant plus 1 s per wave
        assert after - before == pytest.approx(10.0 + float(rack_waves(job.stages[0], c, r)), abs=1.0), (job.name, r)
    assert np.all(np.abs(gaps(costly)) <= 0.035)  # measured: 0 to +3.1 %, against 0 to +4.8 % without start-up costs


def test_mrcute_plus_fitted_on_simulated_runs_predicts_other_runs_better_than_the_thesis_model():
    # measured on the test set (seed 4): the thesis model 0 to +8.1 % below the simulator (heartbeats),
    # mean |gap| 3.5 %; MRCute+ fitted on other jobs (seed 3) -2.5 to +5.4 %, mean |gap| 1.7 %
    train, test = alone(3, 12), alone(4, 12)
    fitted = fit_model([ObservedRun(j.name, j.name, j.stages[0], r, s) for _, r, j, s in train], train[0][0])
    paper, plus = gaps(test), gaps(test, fitted)
    assert np.mean(np.abs(plus)) < 0.7 * np.mean(np.abs(paper))
    assert np.max(np.abs(plus)) <= 0.06 < np.max(np.abs(paper))
