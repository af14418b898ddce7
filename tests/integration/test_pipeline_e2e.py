"""The Airflow pipeline end to end on the embedded cluster (``airflow dags test``): corral_plan, then
corral_run with one job's input missing (that job fails, the others run in their racks), then
corral_run again once the input is there (the finished jobs are not submitted again, the last one runs);
then the period's planned-vs-actual report on the history those runs left. The DAGs run with a 2 s retry delay
and a 2 s trigger poll (their settings, docs/pipeline.md) instead of 20 s and 10 s: the same retries and polls,
less idle waiting. corral_plan runs with the Params of heterogeneous racks (docs/paragon.md): a node classes file
made from ``corral topology --out`` (the first rack a class twice as fast as the others) and interference on, whole
racks (the default sharing), so its task log warns that the interference pairs are apart already.
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from corral_yarn import io
from corral_yarn.cli import main
from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.contracts import ClusterSpec
from corral_yarn.pipeline import demo_workload
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.dag_params import POLL_INTERVAL_ENV, RETRY_DELAY_ENV
from corral_yarn.pipeline.demo import DemoPaths, LocalAirflow, PipelineRunError, latest_summary, plan_conf, prepare, run_conf, today
from corral_yarn.pipeline.outcome import period_comparison
from corral_yarn.pipeline.settings import Period
from estimator.interference import THRESHOLD
from estimator.store import HistoryStore

pytestmark = pytest.mark.integration
MISSING = "queries-wordcount"
NODE_CLASSES = "node-classes.json"  # under the pipeline's home; the first rack "new", the others "old"
SHORT_WAITS = {RETRY_DELAY_ENV: "2", POLL_INTERVAL_ENV: "2"}  # seconds


@pytest.fixture(scope="module")
def pipeline(minicluster: dict[str, Any], migrated_airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pipeline")
    prefix = f"/it-pipeline-{random.randrange(10**6)}"
    paths = DemoPaths(airflow_home=root / "airflow", pipeline_home=root / "pipeline", plans_dir=f"{prefix}/plans", runs_dir=f"{prefix}/runs")
    start = today()
    settings = prepare(paths, minicluster, start)
    catalog = Catalog.load(settings.catalog)
    missing_input = catalog.entry(MISSING).input_dir(start + dict((j.key, j.time_of_day) for j in demo_workload.DEMO_JOBS)[MISSING])
    shutil.rmtree(missing_input)
    write_node_classes(minicluster, settings.home / NODE_CLASSES, root)
    airflow = LocalAirflow(paths, minicluster)
    paths.airflow_home.mkdir(parents=True)
    shutil.copy(migrated_airflow_db, paths.airflow_home / "airflow.db")
    with pytest.MonkeyPatch.context() as env:  # the airflow commands inherit this environment
        for name, value in SHORT_WAITS.items():
            env.setenv(name, value)
        airflow.test_dag("corral_plan", {**plan_conf(settings, start, "batch"), "node_classes_file": NODE_CLASSES, "interference": True})
        with pytest.raises(PipelineRunError, match="corral_run"):
            airflow.test_dag("corral_run", run_conf(settings))
        first = latest_summary(settings)
        demo_workload.write_period_inputs(catalog, start)
        airflow.test_dag("corral_run", run_conf(settings))
    return {"settings": settings, "first": first, "second": latest_summary(settings), "cluster": Cluster.from_description(minicluster, progress=False),
            "plan_log": (paths.logs / "corral_plan.log").read_text(errors="replace")}


def write_node_classes(description: dict[str, Any], path: Path, scratch: Path) -> None:
    """What an operator of two hardware generations writes: the cluster spec of ``corral topology --out``, each rack
    given its node class."""
    (scratch / "cluster.json").write_text(json.dumps(description))
    assert main(["topology", "--cluster", str(scratch / "cluster.json"), "--no-progress", "--out", str(path)]) == 0
    spec = json.loads(path.read_text())
    for i, rack in enumerate(spec["racks"]):
        rack["node_class"] = "new" if i == 0 else "old"
    path.write_text(json.dumps({**spec, "node_classes": {"new": {"speedup": 2.0}, "old": {"speedup": 1.0}}}))


def test_the_plan_puts_every_job_on_a_node_class_and_learns_with_the_estimators_threshold(pipeline: dict[str, Any]) -> None:
    """estimate -> plan with the node classes Params: the live racks carry the file's classes in cluster.json, as
    published; every planned job runs inside one class; details.json says what was learnt at F = THRESHOLD."""
    settings, version = pipeline["settings"], pipeline["second"]["version"]
    period_dir = Path(settings.periods, version.split("-")[0])
    spec = io.load_cluster(period_dir / "cluster.json")
    given = io.load_cluster(settings.home / NODE_CLASSES)
    assert [(r.name, r.node_class) for r in spec.racks] == [(r.name, r.node_class) for r in given.racks]
    assert spec.node_classes == given.node_classes
    classes = {r.name: r.node_class for r in spec.racks}
    plan = io.load_plan(period_dir / "plan.json")
    for job in plan.jobs:
        assert job.node_class in ("new", "old") and {classes[r] for r in job.racks} == {job.node_class}, job
    details = json.loads((period_dir / "details.json").read_text())
    assert set(details["class_speedups"]) == {"speedups", "filled_by_classification"}
    assert details["interference"]["threshold"] == THRESHOLD
    with pipeline["cluster"].hdfs.read(f"{settings.plans_dir}/{version}/cluster.json", encoding="utf-8") as f:
        assert io.parse(ClusterSpec, json.loads(f.read())) == spec


def test_interference_with_whole_racks_says_in_the_task_log_that_its_pairs_are_apart_already(pipeline: dict[str, Any]) -> None:
    """corral_plan ran with interference on and the default sharing, whole-rack (docs/pipeline.md, "Slot-aware sharing")."""
    version = pipeline["second"]["version"]
    assert io.load_plan(Path(pipeline["settings"].periods, version.split("-")[0], "plan.json")).options.sharing == "whole-rack"
    warned = [line for line in pipeline["plan_log"].splitlines() if "interference is on but sharing is whole-rack" in line]
    assert warned and all("[warning" in line and "sharing 'slots'" in line for line in warned), warned


def test_a_job_without_input_fails_alone(pipeline: dict[str, Any]) -> None:
    first = pipeline["first"]
    assert first["planned"] == 4 and len(first["missing"]) == 1 and first["missing"][0].startswith(MISSING)
    assert first["succeeded"] == 3


def test_the_rerun_completes_the_plan_with_every_job_inside_its_racks(pipeline: dict[str, Any]) -> None:
    second = pipeline["second"]
    assert (second["planned"], second["succeeded"], second["missing"]) == (4, 4, [])
    for job in second["jobs"]:
        loc = job["locality"]
        assert job["final_status"] == "SUCCEEDED"
        assert loc["containers"] >= 3 and loc["containers_in_racks"] == loc["containers"], job
        assert loc["blocks"] >= 1 and loc["blocks_with_replica_in_racks"] == loc["blocks"], job
    assert second["container_share"] == 1.0 and second["block_share"] == 1.0


def test_the_rerun_did_not_submit_finished_jobs_again(pipeline: dict[str, Any]) -> None:
    first = {j["job"]: j["app_id"] for j in pipeline["first"]["jobs"]}
    second = {j["job"]: j["app_id"] for j in pipeline["second"]["jobs"]}
    assert all(second[name] == app for name, app in first.items())
    rm = pipeline["cluster"].rm
    plan_id = pipeline["second"]["version"].split("-")[1]
    for job in pipeline["second"]["jobs"]:
        apps = rm.find(CorralTags(plan_id, job["job"], tuple(job["racks"])))
        assert [a.app_id for a in apps] == [job["app_id"]]
        assert apps[0].priority == job["priority"]
        assert sorted(apps[0].corral.racks) == sorted(r.lower() for r in job["racks"])


def test_the_plan_and_its_report_are_published_on_hdfs(pipeline: dict[str, Any]) -> None:
    settings, hdfs = pipeline["settings"], pipeline["cluster"].hdfs
    version = pipeline["second"]["version"]
    with hdfs.read(f"{settings.plans_dir}/LATEST", encoding="utf-8") as f:
        assert f.read().strip() == version
    assert {"plan.json", "jobs.json", "cluster.json", "period.json", "report"} <= set(hdfs.list(f"{settings.plans_dir}/{version}"))
    assert "index.html" in hdfs.list(f"{settings.plans_dir}/{version}/report")
    assert Path(settings.periods, version.split("-")[0], "report", "index.html").is_file()


def test_history_rows_carry_their_plan_entry_and_the_report_compares_plan_and_runs(pipeline: dict[str, Any], tmp_path: Path,
                                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Planned vs actual fed by the run: the jobs' history rows (JobHistory, ingested by the DAG) join the plan
    by their tags, and ``corral report --history --records`` gives every planned job its actual times and locality."""
    settings, second = pipeline["settings"], pipeline["second"]
    version = second["version"]
    period_dir = Path(settings.periods, version.split("-")[0])
    plan = io.load_plan(period_dir / "plan.json")
    entry = (plan.plan_id.lower(), period_dir.name.lower())
    runs = HistoryStore(settings.store).runs()
    tagged = [r for r in runs if r.plan_id == entry[0]]  # other tests' tagged jobs on the shared cluster carry other plan ids
    assert sorted(r.planned_job for r in tagged) == sorted(j.name.lower() for j in plan.jobs)
    assert {r.plan_period for r in tagged} == {entry[1]}
    out = tmp_path / "report"
    assert main(["report", str(period_dir / "plan.json"), "--out", str(out), "--history", str(settings.store),
                 "--records", str(settings.records / version)]) == 0
    printed = capsys.readouterr().out
    assert "4 of 4 planned jobs ran," in printed and "containers inside R_j 100.0 %, input blocks 100.0 %" in printed
    start = io.load(Period, period_dir / "period.json").start
    end = start + timedelta(days=1)
    actual = period_comparison(plan, start, end, settings.store, settings.records / version)
    assert actual.never_ran == [] and actual.shares() == (1.0, 1.0)
    others = {r.run_id for r in runs if (r.plan_id, r.plan_period) != entry and start <= r.submit_time < end}
    assert {r.run_id for r in actual.ad_hoc} == others  # other tests' jobs on the shared cluster today, if any
    for job in actual.jobs:
        assert job.finished and job.attempts == 1 and job.run.run_id.startswith("jobhistory:job_"), job
        assert 0.0 <= job.start_s < job.finish_s and job.model_error is not None, job
    assert actual.actual_objective_s() is not None
    assert "Planned vs actual" in (out / "index.html").read_text()
    summary_report = Path(second["report"])  # the run DAG's summary re-rendered the period's report with the runs
    assert summary_report == (period_dir / "report" / "index.html").resolve() and "Planned vs actual" in summary_report.read_text()
