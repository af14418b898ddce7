"""Heterogeneous racks (docs/paragon.md "Heterogeneous racks in Corral"): node classes in the cluster
spec, per-class rates in the latency model, the class of each job chosen by the planned objective."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cli import main
from corral_yarn.contracts import ClusterSpec, JobSpec, Workload
from corral_yarn.errors import InputError
from corral_yarn.io import inputs_sha256, parse, to_json
from corral_yarn.model import latency_table
from corral_yarn.model.classes import class_cluster, identical_machines, job_on_class
from corral_yarn.planner import fast, hetero, reference
from corral_yarn.planner.build import ALGORITHM_VERSION, _on_its_racks, build_plan
from corral_yarn.planner.schedule import SlotDemand
from corral_yarn.workloads import example_cluster, w1_like
from tests.unit.planner_instances import arrivals, latencies
from tests.unit.test_cli_errors import assert_one_line_error, plan_args, write_inputs


def classed(cluster: ClusterSpec, classes: dict[str, dict], per_rack: list[str]) -> ClusterSpec:
    data = cluster.model_dump()
    for rack, name in zip(data["racks"], per_rack):
        rack["node_class"] = name
    return ClusterSpec.model_validate({**data, "node_classes": classes})


# sha256 (first 16 hex) of the plan JSON without its version-bearing fields, made by main before node
# classes existed (commit 999b4a4): a cluster without node_classes must plan byte for byte as then.
# slots plans changed on 25 Nov 2026 (split jobs hold their racks' uplinks, docs/planner.md "Slot-aware sharing")
BEFORE = {("batch", "whole-rack"): "d2c812c9e3eb3d2b", ("batch", "slots"): "8a4686ec090d5c77",
          ("online", "whole-rack"): "7c25f4cfeafa5c77", ("online", "slots"): "8ad1b4f16c19dced"}
# the algorithm version of each sharing mode these hashes were made with: a plan change (a new hash) needs a
# bump of build.ALGORITHM_VERSION, so that a plan_id keeps pinning one plan (docs/planner.md "Plan identity")
BEFORE_ALGORITHM = {"whole-rack": 1, "slots": 2}


@pytest.mark.parametrize(("scenario", "sharing"), sorted(BEFORE))
def test_without_node_classes_plans_are_byte_for_byte_as_before(scenario: str, sharing: str) -> None:
    cluster, workload = example_cluster(), w1_like(20, seed=3, arrival_span_s=120.0)
    plan = json.loads(to_json(build_plan(workload, cluster, scenario, sharing=sharing, with_bound=False)))
    for key in ("plan_id", "inputs_sha256", "planner_version"):
        plan.pop(key)
    assert hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:16] == BEFORE[(scenario, sharing)]
    assert ALGORITHM_VERSION[sharing] == BEFORE_ALGORITHM[sharing]
    assert "node_class" not in to_json(cluster) and inputs_sha256(workload, cluster)[:16] == "f8eb47c437a5d1db"


def test_job_rates_scale_by_the_jobs_own_speedup_else_the_class_default() -> None:
    cluster = classed(example_cluster(racks=2), {"a": {"speedup": 2.0, "reduce_speedup": 4.0}, "b": {}}, ["a", "b"])
    job = w1_like(1).jobs[0]
    stage = job.stages[0]
    on_a = job_on_class(job, cluster, "a").stages[0]
    assert (on_a.map_rate_bytes_per_s, on_a.reduce_rate_bytes_per_s) == (2 * stage.map_rate_bytes_per_s, 4 * stage.reduce_rate_bytes_per_s)
    own = job.model_copy(update={"class_speedups": {"a": 0.5}})
    assert job_on_class(own, cluster, "a").stages[0].map_rate_bytes_per_s == 0.5 * stage.map_rate_bytes_per_s
    assert job_on_class(own, cluster, "b") is own


def test_class_cluster_keeps_the_network_and_takes_the_class_disk() -> None:
    base = example_cluster(racks=3)
    cluster = classed(base, {"a": {"disk_bandwidth_bytes_per_s": 5e7}, "b": {}}, ["a", "b", "a"])
    sub = class_cluster(cluster, "a")
    assert [r.name for r in sub.racks] == [base.racks[0].name, base.racks[2].name]
    assert sub.disk_bandwidth_bytes_per_s == 5e7 and sub.node_classes is None
    assert sub.rack_core_bandwidth_bytes_per_s == base.rack_core_bandwidth_bytes_per_s


def test_each_job_goes_to_the_class_it_runs_best_on() -> None:
    cluster = classed(example_cluster(racks=4, machines_per_rack=4), {"cpu": {}, "io": {}}, ["cpu", "cpu", "io", "io"])
    one = w1_like(1, seed=1).jobs[0]  # equal jobs, half 3x faster on cpu, half on io: each class its half
    jobs = [one.model_copy(update={"name": f"j{k}", "class_speedups": {"cpu": 3.0, "io": 1.0} if k % 2 else {"cpu": 1.0, "io": 3.0}})
            for k in range(8)]
    for scenario in ("batch", "online"):
        plan = build_plan(Workload(jobs=jobs), cluster, scenario)
        for k, job in enumerate(jobs):
            planned = plan.job(job.name)
            assert planned.node_class == ("cpu" if k % 2 else "io")
            assert {cluster.racks[i].node_class for i, r in enumerate(cluster.racks) if r.name in planned.racks} == {planned.node_class}
        assert plan.lower_bound_s <= plan.objective_s


SPOILED = {
    "unknown class": (lambda d: d["cluster"]["racks"][1].update(node_class="gpu"),
                      "cluster.json: ClusterSpec: racks[1].node_class must name one of node_classes (a, b), got 'gpu'"),
    "rack without class": (lambda d: d["cluster"]["racks"][2].pop("node_class"), "racks[2].node_class must name one of node_classes"),
    "classes absent": (lambda d: d["cluster"].pop("node_classes"), "racks[0].node_class 'a' given but the cluster has no node_classes"),
    "speedup out of range": (lambda d: d["cluster"]["node_classes"]["a"].update(speedup=0),
                             "cluster.json: node_classes.a.speedup: Input should be greater than or equal to 0.01"),
    "unknown field": (lambda d: d["cluster"]["node_classes"]["b"].update(cores=4), "cluster.json: node_classes.b.cores: Extra inputs are not permitted"),
    "job names an unknown class": (lambda d: d["jobs"]["jobs"][1].update(class_speedups={"c": 2.0}),
                                   "jobs[1].class_speedups (w1-medium-0001): names node classes the cluster does not have: ['c']"),
    "job speedup negative": (lambda d: d["jobs"]["jobs"][0].update(class_speedups={"a": -1}), "jobs.json: jobs[0].class_speedups.a: Input should be greater"),
}


@pytest.mark.parametrize("case", sorted(SPOILED))
def test_bad_node_classes_exit_2_naming_the_field(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example", "--out", str(tmp_path), "--jobs", "4", "--racks", "3", "--machines-per-rack", "2"]) == 0
    data = {"cluster": json.loads((tmp_path / "cluster.json").read_text()), "jobs": json.loads((tmp_path / "jobs.json").read_text())}
    data["cluster"]["node_classes"] = {"a": {"speedup": 2.0}, "b": {}}
    for rack, name in zip(data["cluster"]["racks"], "aba"):
        rack["node_class"] = name
    good = copy.deepcopy(data)
    write_inputs(tmp_path, good)
    assert main(plan_args(tmp_path)) == 0
    capsys.readouterr()
    (tmp_path / "plan.json").unlink()
    spoil, expected = SPOILED[case]
    spoil(data)
    write_inputs(tmp_path, data)
    assert main(plan_args(tmp_path)) == 2
    assert_one_line_error(capsys, expected)
    assert not (tmp_path / "plan.json").exists()


def test_a_job_speedup_on_a_cluster_without_classes_is_an_input_error() -> None:
    job = w1_like(1).jobs[0].model_copy(update={"class_speedups": {"a": 2.0}})
    with pytest.raises(InputError, match=r"jobs\[0\].class_speedups"):
        build_plan(Workload(jobs=[job]), example_cluster(), "batch")


def test_node_classes_round_trip_through_json() -> None:
    cluster = classed(example_cluster(racks=2), {"a": {"speedup": 2.0}, "b": {"map_speedup": 0.5}}, ["a", "b"])
    assert parse(ClusterSpec, json.loads(to_json(cluster))) == cluster
    job = JobSpec.model_validate({**w1_like(1).jobs[0].model_dump(), "class_speedups": {"a": 1.5}})
    assert parse(JobSpec, json.loads(to_json(job))) == job


@st.composite
def class_tables(draw: st.DrawFn) -> tuple[list[hetero.ClassTable], np.ndarray, bool]:
    """2-3 classes of 1-3 racks, each with its own latency table for the same jobs; sometimes slots."""
    n_jobs, sizes = draw(st.integers(1, 5)), draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    offsets = np.cumsum([0, *sizes])
    with_slots = draw(st.booleans())
    apart = frozenset(draw(st.sets(st.tuples(st.integers(0, n_jobs - 1), st.integers(0, n_jobs - 1)).filter(lambda p: p[0] < p[1]), max_size=3)))
    tables = []
    for c, size in enumerate(sizes):
        table = draw(latencies(n_jobs, size))
        slots = SlotDemand(np.array(draw(st.lists(st.integers(1, 4), min_size=n_jobs * size, max_size=n_jobs * size))).reshape(n_jobs, size), 4, apart) if with_slots else None
        packed = None if with_slots else (table * draw(st.floats(0.1, 1.0)), table * draw(st.floats(0.1, 1.0)))
        tables.append(hetero.ClassTable(list(range(offsets[c], offsets[c + 1])), table, slots, packed))
    return tables, draw(arrivals(n_jobs)), with_slots


@settings(max_examples=150, deadline=None)
@given(class_tables(), st.sampled_from(["batch", "online"]), st.sampled_from(["thesis", "shortest-work"]))
def test_fast_equals_reference_on_heterogeneous_instances(instance: tuple, scenario: str, order: str) -> None:
    tables, arrival, _ = instance
    got = hetero.plan(scenario, tables, arrival, fast.plan, order)
    want = hetero.plan(scenario, tables, arrival, reference.plan, order)
    assert got.schedule.same_as(want.schedule)
    assert np.array_equal(got.job_class, want.job_class)


def test_fast_equals_reference_plans_on_a_heterogeneous_cluster() -> None:
    cluster = classed(example_cluster(racks=5, machines_per_rack=3), {"x": {"speedup": 1.7}, "y": {"map_speedup": 0.6}, "z": {}},
                      ["x", "y", "x", "z", "y"])
    workload = w1_like(9, seed=4, arrival_span_s=60.0)
    for scenario in ("batch", "online"):
        assert to_json(build_plan(workload, cluster, scenario)) == to_json(build_plan(workload, cluster, scenario, implementation="reference"))


def test_one_class_at_speedup_one_is_the_homogeneous_schedule() -> None:
    base = example_cluster(racks=4, machines_per_rack=3)
    cluster = classed(base, {"only": {}}, ["only"] * 4)
    workload = w1_like(10, seed=5, arrival_span_s=30.0)
    for scenario in ("batch", "online"):
        a, b = build_plan(workload, cluster, scenario), build_plan(workload, base, scenario)
        assert [(j.name, j.racks, j.planned_start_s, j.priority) for j in a.jobs] == [(j.name, j.racks, j.planned_start_s, j.priority) for j in b.jobs]
        assert a.objective_s == b.objective_s and a.lower_bound_s == b.lower_bound_s


def test_greedy_puts_work_where_its_rack_time_is_least() -> None:
    cheap_on_0 = np.array([[1.0, 0.6], [10.0, 6.0]])
    tables = [hetero.ClassTable([0, 1], cheap_on_0), hetero.ClassTable([2, 3], cheap_on_0[::-1].copy())]
    assert hetero.greedy(tables).tolist() == [0, 1]


def test_latency_on_a_faster_class_is_shorter() -> None:
    cluster = classed(example_cluster(racks=2), {"fast": {"speedup": 2.0}, "slow": {}}, ["fast", "slow"])
    job = w1_like(1).jobs[0]
    fast_l = latency_table([job_on_class(job, cluster, "fast")], class_cluster(cluster, "fast"), 0.0)[0]
    slow_l = latency_table([job_on_class(job, cluster, "slow")], class_cluster(cluster, "slow"), 0.0)[0]
    assert (fast_l < slow_l).all()


def test_a_plan_over_every_class_wins_when_its_objective_is_smaller() -> None:
    """One wide job, two one-rack classes alike: spanning both racks beats either class alone."""
    cluster = classed(example_cluster(racks=2, machines_per_rack=2), {"a": {}, "b": {}}, ["a", "b"])
    plan = build_plan(Workload(jobs=[w1_like(5, seed=0).jobs[-1]]), cluster, "batch")
    (job,) = plan.jobs
    assert job.node_class is None and len(job.racks) == 2 and plan.lower_bound_s <= plan.objective_s


@pytest.mark.parametrize("scenario", ["batch", "online"])
def test_the_identical_machines_plan_replayed_on_alike_classes_is_the_plan_itself(scenario: str) -> None:
    """Classes alike: every R_j's mean rate is the cluster's, so the replay gives the planner's own starts."""
    cluster = classed(example_cluster(racks=4, machines_per_rack=2), {"a": {}, "b": {}}, ["a", "b", "a", "b"])
    jobs = w1_like(8, seed=2, arrival_span_s=60.0).jobs
    flat_jobs, flat = identical_machines(jobs, cluster)
    _, penalized = latency_table(flat_jobs, flat, 1e-9)
    arrival = np.array([j.arrival_s for j in jobs])
    spread = reference.plan(scenario, penalized, arrival, "thesis")
    _, replay_penalized, replay, _ = _on_its_racks(jobs, cluster, flat, 1e-9, spread, arrival, scenario)
    np.testing.assert_allclose(replay_penalized, penalized)
    np.testing.assert_allclose(replay.start, spread.start)
    assert replay.objective == pytest.approx(spread.objective)


def test_the_identical_machines_plan_is_judged_at_its_own_racks_rates() -> None:
    """A job of the identical-machines plan on racks of the slow class runs at that class's rate, not at
    the cluster's mean: its latency there is the slow class's, and the plan's objective grows with it."""
    cluster = classed(example_cluster(racks=2, machines_per_rack=2), {"fast": {"speedup": 4.0}, "slow": {}}, ["fast", "slow"])
    jobs = w1_like(6, seed=1).jobs
    flat_jobs, flat = identical_machines(jobs, cluster)
    _, penalized = latency_table(flat_jobs, flat, 1e-9)
    arrival = np.zeros(len(jobs))
    spread = reference.plan("batch", penalized, arrival, "thesis")
    _, replay_penalized, replay, _ = _on_its_racks(jobs, cluster, flat, 1e-9, spread, arrival, "batch")
    slow = class_cluster(cluster, "slow")
    for j, racks in enumerate(spread.rack_sets):
        if racks == (1,):
            alone = latency_table([job_on_class(jobs[j], cluster, "slow")], slow, 1e-9)[1][0, 0]
            assert replay_penalized[j, 0] == pytest.approx(alone) and alone > penalized[j, 0]
    assert any(racks == (1,) for racks in spread.rack_sets)
    assert replay.objective > spread.objective


def test_the_class_choice_credits_back_filling() -> None:
    """Two one-rack classes alike. X has a few long tasks (L' 15, but it holds the rack for P = 1: the
    run-time back-fills its idle slots); Y and Z fill the rack (P = L' = 10). Whole racks in sequence, X
    alone and Y, Z together is best (20 against 25); as the work-conserving run-time executes it, X beside
    Y is (15: X runs 15 s, Y starts after X's 1 s of rack), and Y, Z together take 20."""
    penalized = np.array([[15.0], [10.0], [10.0]])
    held = np.array([[1.0], [10.0], [10.0]])
    blind = hetero.plan("batch", [hetero.ClassTable([0], penalized), hetero.ClassTable([1], penalized)], np.zeros(3), reference.plan, "thesis")
    aware = hetero.plan("batch", [hetero.ClassTable([c], penalized, None, (held, penalized)) for c in (0, 1)], np.zeros(3), reference.plan, "thesis")
    assert blind.schedule.objective == 20.0 and blind.job_class[1] == blind.job_class[2] != blind.job_class[0]
    assert aware.run_time == 15.0 and aware.job_class[1] != aware.job_class[2]
    assert aware.schedule.objective == 25.0  # the plan's own (sequential) objective is kept as the plan's figure


def test_the_run_time_replay_holds_racks_for_the_back_filled_work_only() -> None:
    """T_j over the P holds in prioritization order, then max(P_j, F_j) of the job's own (thesis §4.1, Fig. 4.2)."""
    s = reference.plan("batch", np.array([[8.0, 5.0], [4.0, 3.0]]), np.zeros(2), "thesis")
    held, floor = np.array([[2.0, 1.0], [3.0, 2.0]]), np.array([[6.0, 4.0], [1.0, 1.0]])
    finish = hetero.run_time_finish("batch", s, held, floor, np.zeros(2), 2)
    r = s.rack_counts - 1
    first, second = s.order
    assert finish[first] == max(held[first, r[first]], floor[first, r[first]])
    shared = set(s.rack_sets[first]) & set(s.rack_sets[second])
    start = held[first, r[first]] if shared else 0.0
    assert finish[second] == start + max(held[second, r[second]], floor[second, r[second]])
