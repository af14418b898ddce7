"""The testbed experiment's pure parts: the workload, the planner's view of the testbed, placements."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral_yarn.cluster.rm import NodeReport
from corral_yarn.contracts import MRCutePlus
from corral_yarn.testbed import experiment
from corral_yarn.testbed.shaping import Network

DESCRIPTION = {"examples_jar": "/x/examples.jar",
               "racks": [{"name": f"/rack-{c}", "nodes": [{"host": f"127.0.{100 + i}.{10 + n}"} for n in range(2)]}
                         for i, c in enumerate("abc")]}
NET = Network(node_mbit_s=8.0, oversubscription=5.0)


def test_the_workload_is_the_same_for_a_seed_and_shaped_like_w1() -> None:
    jobs = experiment.workload(3, "online")
    assert jobs == experiment.workload(3, "online")
    assert jobs != experiment.workload(4, "online")
    sorts = [j for j in jobs if j.program == "sort"]
    small = [j for j in jobs if j.program != "sort" and j.recurring]
    assert len(sorts) < len(small) and min(s.input_bytes for s in sorts) > max(j.input_bytes for j in small)
    assert [j for j in jobs if not j.recurring], "ad hoc jobs arrive too"
    assert all(j.arrival_s == 0 for j in experiment.workload(3, "batch") if j.recurring)


def test_yarn_cs_places_nothing_and_corral_places_every_recurring_job_in_its_planned_racks() -> None:
    jobs = experiment.workload(0, "batch", quick=True)
    spec = experiment.cluster_spec(DESCRIPTION, NET)
    assert spec.rack_core_bandwidth_bytes_per_s == 2 * 1e6 / 5  # 2 nodes x 8 Mbit/s / O
    yarn, _ = experiment.placements(jobs, "yarn-cs", "batch", spec)
    assert all(p.racks == () and not p.place_input and p.priority == 0 for p in yarn.values())
    corral, figures = experiment.placements(jobs, "corral", "batch", spec)
    for job in jobs:
        placed = corral[job.name]
        assert bool(placed.racks) == job.recurring == placed.place_input
        assert set(placed.racks) <= {"/rack-a", "/rack-b", "/rack-c"}
    assert figures["objective_s"] >= figures["lower_bound_s"] > 0


def test_every_job_is_submitted_when_it_arrives_under_both_schedulers() -> None:
    """§4.1: a job is submitted by its user on arrival; Corral's priorities, not a delayed submit, order it."""
    jobs = experiment.workload(1, "online", quick=True)
    spec = experiment.cluster_spec(DESCRIPTION, NET)
    for scheduler in experiment.SCHEDULERS:
        chosen, _ = experiment.placements(jobs, scheduler, "online", spec)
        assert [chosen[j.name].submit_s for j in jobs] == [j.arrival_s for j in jobs]


def test_inputs_are_what_each_program_reads(tmp_path: Path) -> None:
    sort = experiment.TestbedJob("sort-x", "sort", 200_000, 2**20, 1, 0.0)
    grep = next(j for j in experiment.workload(0, "batch", quick=True) if j.program == "grep")
    sort_file = experiment.write_input(sort, tmp_path, 0)
    assert sort_file.stat().st_size >= sort.input_bytes
    assert all("\t" in line for line in sort_file.read_text().splitlines()[:100])  # KeyValueTextInputFormat
    job = experiment.mapreduce_job(grep, DESCRIPTION, "/t", output_replication=1)
    assert job.properties["dfs.replication"] == "1" and "mapreduce.mapper.regex" in job.properties
    assert experiment.write_input(grep, tmp_path, 0).read_text() == experiment.write_input(grep, tmp_path, 0).read_text()


def test_localshuffle_takes_corrals_plan_without_its_data_placement() -> None:
    jobs = experiment.workload(0, "batch", quick=True)
    spec = experiment.cluster_spec(DESCRIPTION, NET)
    corral, _ = experiment.placements(jobs, "corral", "batch", spec)
    local, _ = experiment.placements(jobs, "localshuffle", "batch", spec)
    assert {n: (p.racks, p.priority) for n, p in local.items()} == {n: (p.racks, p.priority) for n, p in corral.items()}
    assert not any(p.place_input for p in local.values())


def _node(host: str, rack: str, free_mb: int, state: str = "RUNNING") -> NodeReport:
    return NodeReport(f"{host}:1", host, rack, state, f"{host}:2", 4096, 4, free_mb)


def test_shufflewatcher_confines_a_job_to_the_freest_racks_that_hold_its_maps_in_one_wave() -> None:
    nodes = [_node("a1", "/rack-a", 1024), _node("a2", "/rack-a", 1024), _node("b1", "/rack-b", 4096),
             _node("b2", "/rack-b", 3072), _node("c1", "/rack-c", 4096), _node("c2", "/rack-c", 0, "LOST")]
    small = experiment.TestbedJob("s", "grep", 2 * 2**20, 4 * 2**20, 1, 0.0)
    assert experiment.shufflewatcher_racks(small, nodes, map_slots=4) == ("/rack-b",)
    wide = experiment.TestbedJob("w", "sort", 40 * 2**20, 4 * 2**20, 2, 0.0)  # 10 maps: 8 slots in rack b, 4 in c
    assert experiment.shufflewatcher_racks(wide, nodes, map_slots=4) == ("/rack-b", "/rack-c")


def test_corral_plans_with_the_model_sharing_and_order_it_is_given() -> None:
    """The ablation's variants (docs/planner.md): each PlanChoice reaches the planner, and the plan says so."""
    jobs = experiment.workload(0, "online", quick=True)
    spec = experiment.cluster_spec(DESCRIPTION, NET)
    _, thesis = experiment.placements(jobs, "corral", "online", spec, choice=experiment.PlanChoice("paper", "whole-rack", "thesis"))
    assert (thesis["model"], thesis["sharing"], thesis["order"]) == ("paper", "whole-rack", "thesis")
    plus = MRCutePlus(replication=1, scale=1.3, job_startup_s=12.0)
    _, fitted = experiment.placements(jobs, "corral", "online", spec, choice=experiment.PlanChoice(plus, "slots", "shortest-work"))
    assert (fitted["model"], fitted["sharing"], fitted["order"]) == ("mrcute+", "slots", "shortest-work")
    assert fitted["objective_s"] > thesis["objective_s"], "a per-job start-up cost lengthens every job's predicted latency"
    _, default = experiment.placements(jobs, "corral", "online", spec)
    assert (default["model"], default["sharing"], default["order"]) == ("paper", "whole-rack", "shortest-work")


def test_a_profiled_job_is_this_runs_input_at_its_profiles_selectivities_and_rates() -> None:
    """Thesis §3.1.2: shuffle = input / S_map, output = shuffle / S_reduce, the task rates as profiled."""
    job = experiment.workload(0, "online", quick=True)[0]
    profile = experiment.Profile(map_selectivity=2.0, reduce_selectivity=4.0, map_rate_bytes_per_s=5e5, reduce_rate_bytes_per_s=2e6)
    stage = experiment.job_spec(job, 0.333, profile).stages[0]
    assert (stage.input_bytes, stage.shuffle_bytes, stage.output_bytes) == (job.input_bytes, job.input_bytes / 2, job.input_bytes / 8)
    assert (stage.map_rate_bytes_per_s, stage.reduce_rate_bytes_per_s) == (5e5, 2e6)
    assert experiment.job_spec(job, 0.333).stages[0].map_rate_bytes_per_s == experiment.task_rate(0.333)


def test_corral_plans_profiled_jobs_with_their_profiles_and_refuses_a_job_without_one() -> None:
    jobs = experiment.workload(0, "online", quick=True)
    spec = experiment.cluster_spec(DESCRIPTION, NET)
    fast = experiment.Profile(1.0, 1.0, 4e7, 4e7)
    profiles = {j.name: fast for j in jobs if j.recurring}
    _, workload = experiment.placements(jobs, "corral", "online", spec, 0.333, experiment.PlanChoice("paper", "whole-rack", "thesis"))
    _, profiled = experiment.placements(jobs, "corral", "online", spec, 0.333, experiment.PlanChoice("paper", "whole-rack", "thesis", profiles))
    assert (workload["job_specs"], profiled["job_specs"]) == ("workload", "profiled")
    assert profiled["objective_s"] < workload["objective_s"], "tasks profiled 100x faster finish sooner in the plan"
    del profiles["sort-0"]
    with pytest.raises(ValueError, match="no profile for the recurring jobs sort-0"):
        experiment.placements(jobs, "corral", "online", spec, 0.333, experiment.PlanChoice("paper", "whole-rack", "thesis", profiles))
