"""Heterogeneous racks, session 18 (docs/paragon.md "Session 18, 27 Nov: per-task start-up scaled by class"):
MRCute+'s per-task start-up per node class, t_0 / speedup, in the model, the identical-machines guard, the
simulator and the fit from history."""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.contracts import ClusterSpec, MRCutePlus, Workload
from corral_yarn.model import latency_table, plus_terms, rack_waves
from corral_yarn.model.classes import class_cluster, identical_machines, job_on_class, mean_startup
from corral_yarn.planner.build import _on_its_racks, build_plan, default_alpha
from corral_yarn.planner.fast import plan as fast_plan
from corral_yarn.sim.run import RunSpec, simulate
from corral_yarn.workloads import example_cluster, w1_like
from estimator.fit import ObservedRun, fit_cluster
from tests.unit.test_planner_hetero import classed

T_0 = 6.0  # the per-task start-up at speedup 1: 6 s on the slow class, 2 s on the fast one (speedup 3)


def task_startup_cluster(per_class: bool = True) -> ClusterSpec:
    base = example_cluster(racks=2, machines_per_rack=2).model_copy(update={"model": MRCutePlus(task_startup_s=4.0)})
    figures = ({"task_startup_s": T_0}, {"task_startup_s": T_0 / 3.0}) if per_class else ({}, {})
    return classed(base, {"slow": figures[0], "fast": {"speedup": 3.0, **figures[1]}}, ["slow", "fast"])


def test_a_job_on_a_class_pays_its_classs_task_startup_per_wave() -> None:
    cluster = task_startup_cluster()
    job = w1_like(1, seed=4).jobs[0]
    for c, seconds in (("slow", T_0), ("fast", T_0 / 3.0)):
        sub = class_cluster(cluster, c)
        none = sub.model_copy(update={"model": sub.model.model_copy(update={"task_startup_s": 0.0})})
        on, without = (latency_table([job_on_class(job, cluster, c)], s, 1e-9)[0][0, 0] for s in (sub, none))
        waves = sum(float(rack_waves(s, sub, 1)) for s in job.stages)
        assert on - without == pytest.approx(seconds * waves)
    _, flat = identical_machines([job], cluster)
    assert flat.model.task_startup_s == pytest.approx((T_0 + T_0 / 3.0) / 2)  # the class-blind view: the mean over racks


def test_the_identical_plan_replayed_pays_its_racks_task_startup() -> None:
    cluster = task_startup_cluster()
    jobs = w1_like(4, seed=2).jobs
    flat_jobs, flat = identical_machines(jobs, cluster)
    alpha = default_alpha(flat)
    spread = fast_plan("batch", latency_table(flat_jobs, flat, alpha)[1], np.zeros(len(jobs)), "thesis")
    _, replayed, _, _ = _on_its_racks(jobs, cluster, flat, alpha, spread, np.zeros(len(jobs)), "batch")
    assert any(len(racks) == 1 for racks in spread.rack_sets)
    for j, racks in enumerate(spread.rack_sets):
        (rated,), _ = identical_machines([jobs[j]], cluster.model_copy(update={"racks": [cluster.racks[i] for i in racks]}))
        task = float(np.mean([{"slow": T_0, "fast": T_0 / 3.0}[cluster.racks[i].node_class] for i in racks]))  # R_j's mix of classes
        own = flat.model.model_copy(update={"job_startup_s": mean_startup(cluster, "job_startup_s", list(racks)), "task_startup_s": task})
        alone = latency_table([rated], flat.model_copy(update={"model": own}), alpha)[1][0, len(racks) - 1]
        assert replayed[j, len(racks) - 1] == pytest.approx(alone)


def test_the_simulator_runs_each_racks_classs_task_startup() -> None:
    cluster = task_startup_cluster()
    zero = task_startup_cluster(per_class=False).model_copy(update={"model": MRCutePlus()})
    job = w1_like(1, seed=4).jobs[0].model_copy(update={"class_speedups": {"slow": 1.0, "fast": 1.0}})  # same task rates on both
    delay = {}
    for c, rack in (("slow", "/rack-00"), ("fast", "/rack-01")):
        plan = build_plan(Workload(jobs=[job]), cluster, "batch", with_bound=False)
        plan = plan.model_copy(update={"jobs": [p.model_copy(update={"racks": [rack], "node_class": c}) for p in plan.jobs]})
        with_, without = (simulate(s, Workload(jobs=[job]), RunSpec("corral", scenario="batch"), plan=plan).jobs[0].completion_s for s in (cluster, zero))
        delay[c] = with_ - without
    assert delay["fast"] > 0 and delay["slow"] == pytest.approx(3.0 * delay["fast"], rel=0.1)


@pytest.mark.parametrize("confined", [True, False])
def test_fit_cluster_gives_t0_back_from_runs_whose_startup_grows_with_one_over_speedup(confined: bool) -> None:
    # Corral's runs confined to one class (per-class job constants) or stock YARN's spread over both (one s_0)
    cluster = task_startup_cluster(per_class=False).model_copy(update={"model": MRCutePlus()})
    speed = {"slow": 1.0, "fast": 3.0}
    observed = []
    for k, job in enumerate(w1_like(24, seed=5).jobs):
        classes = (("slow", "fast")[k % 2],) if confined else ("slow", "fast")
        racks = len(classes)
        base, waves = plus_terms(job.stages[0], cluster, racks, MRCutePlus())
        per_wave = T_0 * float(np.mean([1.0 / speed[c] for c in classes]))
        observed.append(ObservedRun(str(k), job.name, job.stages[0], racks, float(0.9 * base + per_wave * waves + 20.0), classes))
    fitted = fit_cluster(observed, cluster)
    for c, s in speed.items():
        assert fitted.node_classes[c].task_startup_s == pytest.approx(T_0 / s, rel=0.03)
    assert fitted.model.task_startup_s == pytest.approx(mean_startup(fitted, "task_startup_s")) == pytest.approx(T_0 * 2 / 3, rel=0.03)
    assert fitted.model.scale == pytest.approx(0.9, rel=0.02)
