"""The Airflow pipeline end to end on the embedded cluster (``airflow dags test``): corral_plan, then
corral_run with one job's input missing (that job fails, the others run in their racks), then
corral_run again once the input is there (the finished jobs are not submitted again, the last one runs).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.pipeline import demo_workload
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.demo import DemoPaths, LocalAirflow, PipelineRunError, latest_summary, plan_conf, prepare, run_conf, today

pytestmark = pytest.mark.integration
MISSING = "queries-wordcount"


@pytest.fixture(scope="module")
def pipeline(minicluster: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pipeline")
    prefix = f"/it-pipeline-{random.randrange(10**6)}"
    paths = DemoPaths(airflow_home=root / "airflow", pipeline_home=root / "pipeline", plans_dir=f"{prefix}/plans", runs_dir=f"{prefix}/runs")
    start = today()
    settings = prepare(paths, minicluster, start)
    catalog = Catalog.load(settings.catalog)
    missing_input = catalog.entry(MISSING).input_dir(start + dict((j.key, j.time_of_day) for j in demo_workload.DEMO_JOBS)[MISSING])
    shutil.rmtree(missing_input)
    airflow = LocalAirflow(paths, minicluster)
    airflow.migrate()
    airflow.test_dag("corral_plan", plan_conf(settings, start, "batch"))
    with pytest.raises(PipelineRunError, match="corral_run"):
        airflow.test_dag("corral_run", run_conf(settings))
    first = latest_summary(settings)
    demo_workload.write_period_inputs(catalog, start)
    airflow.test_dag("corral_run", run_conf(settings))
    return {"settings": settings, "first": first, "second": latest_summary(settings), "cluster": Cluster.from_description(minicluster, progress=False)}


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
