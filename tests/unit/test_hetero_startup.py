"""Heterogeneous racks, session 7 (docs/paragon.md): a job start-up per node class in MRCute+ (model,
planner, simulator, fit from history), speedups pooled over runs, and the heterogeneous plan against the
identical-machines plan under one per-class model."""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.contracts import ClusterSpec, MRCutePlus, Workload
from corral_yarn.model import latency_table, plus_terms
from corral_yarn.model.classes import class_cluster, identical_machines, job_on_class, mean_startup
from corral_yarn.planner.build import _on_its_racks, build_plan, default_alpha
from corral_yarn.planner.fast import plan as fast_plan
from corral_yarn.sim.run import RunSpec, simulate
from corral_yarn.workloads import example_cluster, w1_like
from estimator.fit import ObservedRun, fit_cluster
from tests.unit.test_planner_hetero import classed

PLUS = MRCutePlus(job_startup_s=10.0, task_startup_s=1.0)


def startup_cluster() -> ClusterSpec:
    base = example_cluster(racks=2, machines_per_rack=2).model_copy(update={"model": PLUS})
    return classed(base, {"slow": {"job_startup_s": 50.0}, "fast": {}}, ["slow", "fast"])


def test_a_class_job_startup_is_in_its_latency_and_in_the_simulators_delay() -> None:
    cluster = startup_cluster()
    job = w1_like(1, seed=4).jobs[0]
    on = {c: latency_table([job_on_class(job, cluster, c)], class_cluster(cluster, c), 1e-9)[0][0, 0] for c in ("slow", "fast")}
    assert on["slow"] - on["fast"] == pytest.approx(40.0)  # the class's 50 s against the model's 10 s
    assert mean_startup(cluster, "job_startup_s") == pytest.approx(30.0) and mean_startup(cluster, "job_startup_s", [0]) == 50.0
    _, flat = identical_machines([job], cluster)
    assert flat.model.job_startup_s == pytest.approx(30.0)  # the class-blind view: the mean over racks
    first = {}
    for c, rack in (("slow", "/rack-00"), ("fast", "/rack-01")):
        plan = build_plan(Workload(jobs=[job]), cluster, "batch", with_bound=False)
        plan = plan.model_copy(update={"jobs": [p.model_copy(update={"racks": [rack], "node_class": c}) for p in plan.jobs]})
        first[c] = simulate(cluster, Workload(jobs=[job]), RunSpec("corral", scenario="batch"), plan=plan).jobs[0].first_task_s
    assert first["slow"] - first["fast"] == pytest.approx(40.0, abs=1.5)  # the AM starts on a rack of R_j


def test_the_identical_plan_replayed_pays_its_racks_job_startup() -> None:
    cluster = startup_cluster()
    jobs = w1_like(4, seed=2).jobs
    flat_jobs, flat = identical_machines(jobs, cluster)
    alpha = default_alpha(flat)
    _, penalized = latency_table(flat_jobs, flat, alpha)
    spread = fast_plan("batch", penalized, np.zeros(len(jobs)), "thesis")
    _, replayed, _, _ = _on_its_racks(jobs, cluster, flat, alpha, spread, np.zeros(len(jobs)), "batch")
    rated = [identical_machines([job], cluster.model_copy(update={"racks": [cluster.racks[i] for i in racks]}))[0][0]
             for job, racks in zip(jobs, spread.rack_sets)]
    for j, racks in enumerate(spread.rack_sets):
        alone = latency_table([rated[j]], flat, alpha)[1][0, len(racks) - 1] - 30.0 + mean_startup(cluster, "job_startup_s", list(racks))
        assert replayed[j, len(racks) - 1] == pytest.approx(alone)


def test_fit_cluster_recovers_a_job_startup_per_class() -> None:
    cluster = startup_cluster().model_copy(update={"model": MRCutePlus()})
    truth = {"slow": 40.0, "fast": 8.0}
    observed = []
    for k, job in enumerate(w1_like(24, seed=5).jobs):
        c = ("slow", "fast")[k % 2]
        base, waves = plus_terms(job.stages[0], cluster, 1, MRCutePlus())
        observed.append(ObservedRun(str(k), job.name, job.stages[0], 1, float(0.9 * base + 2.0 * waves + truth[c]), (c,)))
    fitted = fit_cluster(observed, cluster)
    assert fitted.node_classes["slow"].job_startup_s == pytest.approx(40.0, rel=0.02)
    assert fitted.node_classes["fast"].job_startup_s == pytest.approx(8.0, rel=0.05)
    assert fitted.model.scale == pytest.approx(0.9, rel=0.02) and fitted.model.job_startup_s == pytest.approx(24.0, rel=0.03)


def test_runs_spread_over_the_classes_alike_get_one_job_startup_scaled_by_each_classs_speedup() -> None:
    # stock YARN's runs each take racks of both classes in like shares: the per-class constants are collinear,
    # so one constant s_0 is fitted and each class takes s_0 / its speedup (docs/paragon.md, Sessions 16-17)
    cluster = classed(example_cluster(racks=2, machines_per_rack=2).model_copy(update={"model": MRCutePlus()}),
                      {"slow": {}, "fast": {"speedup": 3.0}}, ["slow", "fast"])
    truth = {"slow": 36.0, "fast": 12.0}  # s_0 = 36 s at speedup 1
    observed = []
    for k, job in enumerate(w1_like(24, seed=5).jobs):
        base, waves = plus_terms(job.stages[0], cluster, 2, MRCutePlus())
        observed.append(ObservedRun(str(k), job.name, job.stages[0], 2, float(0.9 * base + 2.0 * waves + np.mean(list(truth.values()))),
                                    ("slow", "fast")))
    fitted = fit_cluster(observed, cluster)
    for c, seconds in truth.items():
        assert fitted.node_classes[c].job_startup_s == pytest.approx(seconds, rel=0.03)
    assert fitted.model.job_startup_s == pytest.approx(24.0, rel=0.03) and fitted.model.scale == pytest.approx(0.9, rel=0.02)
    one_confined = [*observed, ObservedRun("x", "x", observed[0].stage, 1, observed[0].actual_s, ("slow",))]
    still = fit_cluster(one_confined, cluster).node_classes  # fast still unconfined: the same rule
    assert still["slow"].job_startup_s == pytest.approx(3.0 * still["fast"].job_startup_s)
    spec = ClusterSpec.model_validate_json(fitted.model_dump_json())  # the file `corral plan --cluster` reads
    without = spec.model_copy(update={"node_classes": {c: n.model_copy(update={"job_startup_s": 0.0}) for c, n in spec.node_classes.items()}})
    compared = set()
    for seed in range(4):  # one job: its class's constant is in its L_j, the racks' mean when it spans the classes
        (job,), (other,) = (build_plan(w1_like(1, seed=seed), s, "batch").jobs for s in (spec, without))
        if (job.racks, job.node_class) == (other.racks, other.node_class):
            compared.add(job.node_class)
            assert job.predicted_duration_s - other.predicted_duration_s == pytest.approx(truth.get(job.node_class, 24.0), rel=0.03)
    assert "fast" in compared


MISPREDICTED = pytest.mark.xfail(strict=True, reason="the thesis's model has no output-write term: w1-medium-0000 (107.8 GB of shuffle, one fast "
                                 "rack) is planned 213 s and takes 437 s alone in the simulator (457 s with the workload), so the class "
                                 "balance is wrong (docs/paragon.md, 26 Nov correction)")


NO_WRITE_TERM = pytest.mark.xfail(strict=True, reason="session 14: judged as the run-time executes it, the thesis's model (no output-write "
                                  "term) underrates the writes of the jobs it packs on one class: 159.6 s against 151.6 s simulated "
                                  "(seeds 0-7 with MRCute+ all win or tie, docs/paragon.md Session 14)")


@pytest.mark.parametrize(("seed", "model"), [pytest.param(0, "paper", marks=MISPREDICTED), (1, "paper"), pytest.param(2, "paper", marks=NO_WRITE_TERM),
                                             (0, "mrcute+"), (1, "mrcute+"), (2, "mrcute+")])
def test_with_a_clear_speed_gap_the_hetero_plan_wins_in_its_model_and_in_the_simulator(seed: int, model: str) -> None:
    """Two classes 4x apart, every job CPU-bound: the plan chosen (one class per job, or the identical-machines
    plan when the run-time's objective of the latter, at its own racks' per-class rates, is smaller) must not
    lose to the identical-machines plan in the simulator (MRCute+ seed 0 lost, 1.054, while the class choice
    and that guard used the planned sequential objective)."""
    cluster = classed(example_cluster(racks=4, machines_per_rack=4), {"fast": {"speedup": 4.0, "disk_bandwidth_bytes_per_s": 4e8}, "slow": {}},
                      ["fast", "slow", "fast", "slow"])
    cluster = cluster if model == "paper" else cluster.model_copy(update={"model": MRCutePlus()})
    workload = w1_like(10, seed=seed)
    aware = build_plan(workload, cluster, "batch", with_bound=False)
    flat_jobs, flat = identical_machines(workload.jobs, cluster)
    blind = build_plan(Workload(jobs=flat_jobs), flat, "batch", with_bound=False)
    alpha = default_alpha(flat)
    spread = fast_plan("batch", latency_table(flat_jobs, flat, alpha)[1], np.zeros(len(flat_jobs)), "thesis")
    # the benchmark's identical plan is the one the guard judges
    assert [p.racks for p in blind.jobs] == [[cluster.rack_names[i] for i in spread.rack_sets[j]] for j in spread.order]
    run = {label: simulate(cluster, workload, RunSpec("corral", scenario="batch", seed=seed), plan=p).summary.makespan_s
           for label, p in (("hetero", aware), ("identical", blind))}
    assert run["hetero"] <= run["identical"]


def test_the_fitted_spec_as_corral_model_fit_writes_it_feeds_the_planner() -> None:
    cluster = startup_cluster().model_copy(update={"model": MRCutePlus()})
    observed = []
    for k, job in enumerate(w1_like(24, seed=5).jobs):
        c = ("slow", "fast")[k % 2]
        base, waves = plus_terms(job.stages[0], cluster, 1, MRCutePlus())
        observed.append(ObservedRun(str(k), job.name, job.stages[0], 1, float(0.9 * base + 2.0 * waves + {"slow": 40.0, "fast": 8.0}[c]), (c,)))
    spec = ClusterSpec.model_validate_json(fit_cluster(observed, cluster).model_dump_json())  # the file `corral plan --cluster` reads
    slow = spec.node_classes["slow"]
    without = spec.model_copy(update={"node_classes": {**spec.node_classes, "slow": slow.model_copy(update={"job_startup_s": 0.0})}})
    planned, baseline = (build_plan(w1_like(6, seed=1), s, "batch") for s in (spec, without))
    slow_racks = {r.name for r in spec.racks if r.node_class == "slow"}
    # the start-up changes the run-time's objective, so the class choice may differ: compare jobs on the same racks
    others = {job.name: job for job in baseline.jobs}
    same = [(job, others[job.name]) for job in planned.jobs if job.racks == others[job.name].racks]
    assert same
    for job, other in same:
        share = len(slow_racks & set(job.racks)) / len(job.racks)  # the start-up counts at its mean over R_j
        assert job.predicted_duration_s - other.predicted_duration_s == pytest.approx(share * slow.job_startup_s)
