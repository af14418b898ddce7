"""The planning pipeline's ``sharing`` Param (docs/pipeline.md "Params", docs/planner.md "Slot-aware sharing"): the plan
step plans as ``corral plan --sharing`` does and the plan records the mode; the run steps take a plan whose jobs share a
rack; ``interference`` with whole racks says in the task log that its pairs are apart already."""

from __future__ import annotations

import logging
from datetime import timedelta
from itertools import combinations
from pathlib import Path

import pytest
from test_pipeline_node_classes import MONDAY, history, live_cluster, settings
from test_pipeline_steps import SATURDAY

from corral_yarn import io
from corral_yarn.cli import main
from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError
from corral_yarn.pipeline import demo_workload, planning, tasks
from corral_yarn.pipeline.execution import planned_runs
from corral_yarn.pipeline.settings import Period
from estimator.store import HistoryStore

UNUSED = "interference is on but sharing is whole-rack"


def at_once_on_one_rack(plan: Plan) -> list[tuple[str, str]]:
    """Pairs of planned jobs with a rack in common whose planned intervals overlap."""
    return [(a.name, b.name) for a, b in combinations(plan.jobs, 2)
            if set(a.racks) & set(b.racks) and a.planned_start_s < b.planned_finish_s and b.planned_start_s < a.planned_finish_s]


def test_the_sharing_param_is_whole_rack_by_default_slots_on_request_and_anything_else_refused(tmp_path: Path) -> None:
    assert settings(tmp_path).sharing == "whole-rack"
    assert settings(tmp_path, sharing="slots").sharing == "slots"
    with pytest.raises(InputError, match="^params: sharing: .*'whole-rack' or 'slots'"):
        settings(tmp_path, sharing="shared")


def bundled_period(home: Path) -> Path:
    """The bundled four daily jobs (docs/pipeline.md) estimated for one batch period: the period directory."""
    HistoryStore(home / "history").append(demo_workload.demo_history(SATURDAY))
    return planning.estimate_period(settings(home), Period(start=SATURDAY, horizon_s=86_400, scenario="batch"), 128 << 20)


def test_the_plan_step_plans_as_corral_plan_sharing_and_records_the_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan task with the Param: the published plan says how it was made, jobs share a rack at once only with slots,
    and it is the plan 'corral plan --sharing' makes from the period's jobs.json and cluster.json."""
    monkeypatch.setattr(tasks, "cluster_from_airflow", live_cluster)
    for sharing, shares_a_rack in (("slots", True), ("whole-rack", False)):
        home = tmp_path / sharing
        directory = bundled_period(home)
        tasks.plan({"home": str(home), "sharing": sharing}, str(directory))
        plan = io.load_plan(directory / planning.PLAN)
        assert plan.options.sharing == sharing
        assert bool(at_once_on_one_rack(plan)) == shares_a_rack, [(j.name, j.racks, j.planned_start_s) for j in plan.jobs]
        assert main(["plan", "--jobs", str(directory / planning.JOBS), "--cluster", str(directory / planning.CLUSTER), "--scenario", "batch",
                     "--sharing", sharing, "--out", str(home / "cli.json")]) == 0
        assert io.load_plan(home / "cli.json") == plan


def test_the_run_steps_take_a_plan_whose_jobs_share_a_rack(tmp_path: Path) -> None:
    """corral_run's planned_jobs on a slots plan: one run per job, each with its own R_j (racks in common with
    another's), its own priority and its own tags, so each job is uploaded, submitted and verified on its own."""
    directory = bundled_period(tmp_path)
    chosen = settings(tmp_path, sharing="slots")
    plan = planning.plan_period(live_cluster(), chosen, directory)
    published = planning.Published("V1", io.load(Period, directory / planning.PERIOD), plan, io.load_workload(directory / planning.JOBS),
                                   io.load_cluster(directory / planning.CLUSTER))
    runs, unknown = planned_runs(published, demo_workload.demo_catalog(tmp_path, "/j.jar"), chosen)
    assert unknown == [] and {r.name: r.racks for r in runs} == {j.name: j.racks for j in plan.jobs}
    assert at_once_on_one_rack(plan)
    assert len({r.priority for r in runs}) == len(runs) and len({r.tags for r in runs}) == len(runs)
    assert len({r.hdfs_input for r in runs}) == len(runs) and len({r.hdfs_output for r in runs}) == len(runs)


def interference_period(home: Path) -> Path:
    """Jobs 'etl' and 'scan', which slowed each other in history (test_pipeline_node_classes.history), estimated with interference on."""
    HistoryStore(home / "history").append(history())
    return planning.estimate_period(settings(home, interference=True), Period(start=MONDAY + timedelta(days=4), horizon_s=86_400, scenario="batch"),
                                    128 << 20)


def test_interference_with_whole_racks_and_only_then_warns_that_its_pairs_are_apart_already(tmp_path: Path,
                                                                                               caplog: pytest.LogCaptureFixture) -> None:
    directory = interference_period(tmp_path)
    with caplog.at_level(logging.WARNING, logger="corral_yarn.pipeline.planning"):
        plan = planning.plan_period(live_cluster(), settings(tmp_path, interference=True), directory)
    assert plan.options.sharing == "whole-rack" and not at_once_on_one_rack(plan)
    [warning] = [r.getMessage() for r in caplog.records if UNUSED in r.getMessage()]
    assert "1 pair(s)" in warning and "sharing 'slots'" in warning
    for params in ({"interference": True, "sharing": "slots"}, {"interference": False}):  # the pairs steer the plan, or there are none
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="corral_yarn.pipeline.planning"):
            planning.plan_period(live_cluster(), settings(tmp_path, **params), directory)
        assert UNUSED not in caplog.text, params
