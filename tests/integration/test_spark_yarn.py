"""Spark on the embedded cluster: a Spark job given a planned job's settings (job_settings().spark_conf())
runs its ApplicationMaster and every executor inside R_j and reads input with a replica there; an
untagged Spark job runs as before. Real spark-submit --master yarn (the pyspark package), real cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.airflow.frameworks import job_settings
from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.contracts import Plan, PlannedJob
from corral_yarn.pipeline.locality import input_blocks, measure

pyspark = pytest.importorskip("pyspark")
pytestmark = pytest.mark.integration

SPARK_HOME = Path(pyspark.__file__).parent
APP = Path(__file__).parent / "spark_apps" / "count_lines.py"
RACK = "/rack-b"
EXECUTORS = 2
LINES = 20_000


def _plan() -> Plan:
    job = PlannedJob(name="spark-count", racks=[RACK], priority=5, order=0, arrival_s=0, planned_start_s=0, predicted_duration_s=1,
                     planned_finish_s=1, input_bytes=1, cross_rack_shuffle_bytes=0)
    return Plan(plan_id="spark-it", planner_version="t", inputs_sha256="x", cluster_name="mini", scenario="batch", objective="makespan",
                objective_s=1, lower_bound_s=None, gap=None, alpha_s_per_byte=0, jobs=[job], rack_input_bytes={}, rack_input_cov=0,
                cross_rack_shuffle_bytes=0, all_racks_cross_rack_shuffle_bytes=0)


def spark_submit(minicluster: dict[str, Any], conf: dict[str, str], input_url: str) -> dict[str, Any]:
    """Run the app with spark-submit --master yarn (client mode); the Spark jars are local: on every node, never uploaded."""
    base = {"spark.yarn.jars": f"local:{SPARK_HOME / 'jars'}/*", "spark.executor.instances": str(EXECUTORS),
            "spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.driver.memory": "512m", "spark.yarn.am.memory": "512m",
            "spark.ui.enabled": "false", "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s", "spark.dynamicAllocation.enabled": "false"}
    args = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", "yarn", "--deploy-mode", "client"]
    for key, value in {**base, **conf}.items():
        args += ["--conf", f"{key}={value}"]
    env = {**os.environ, "HADOOP_CONF_DIR": minicluster["conf_dir"], "SPARK_HOME": str(SPARK_HOME), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([*args, str(APP), input_url], capture_output=True, text=True, env=env, timeout=300)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("CORRAL-SPARK ")), None)
    assert done.returncode == 0 and line, done.stderr[-3000:]
    return json.loads(line.removeprefix("CORRAL-SPARK "))


@pytest.fixture(scope="module")
def cluster(minicluster: dict[str, Any]) -> Cluster:
    return Cluster.from_description(minicluster, progress=False)


@pytest.fixture(scope="module")
def input_url(minicluster: dict[str, Any], cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    local = tmp_path_factory.mktemp("spark-input") / "lines.txt"
    local.write_text("".join(f"line {i} of the spark test input\n" for i in range(LINES)))
    cluster.uploader().upload(local, "/it/spark/input", [RACK], block_bytes=65536, overwrite=True)
    return minicluster["namenode_rpc"] + "/it/spark/input"


@pytest.fixture(scope="module")
def spark_runs(minicluster: dict[str, Any], input_url: str) -> dict[str, dict[str, Any]]:
    """The tagged job (a planned job's settings) and the untagged one, submitted at once; R_j has room for both."""
    settings = job_settings(_plan(), "spark-count", recurring_key="spark-count")
    with ThreadPoolExecutor(2) as pool:
        tagged = pool.submit(spark_submit, minicluster, settings.spark_conf(), input_url)
        untagged = pool.submit(spark_submit, minicluster, {}, input_url)
        return {"tagged": tagged.result(), "untagged": untagged.result()}


def test_tagged_spark_job_runs_am_and_executors_inside_rj(cluster: Cluster, spark_runs: dict[str, dict[str, Any]]) -> None:
    ran = spark_runs["tagged"]
    rack_of = {n.host: n.rack for n in cluster.rm.nodes()}
    am_hosts = [a.am.node_id.rpartition(":")[0] for a in cluster.rm.attempts(ran["app_id"])]
    racks = [rack_of[h] for h in am_hosts + ran["executor_hosts"]]
    locality = measure(racks, input_blocks(cluster.hdfs, "/it/spark/input"), [RACK])
    print(json.dumps({"spark_tagged": ran["app_id"], **locality.to_json()}))
    app = cluster.rm.application(ran["app_id"])
    assert app.succeeded and ran["lines"] == LINES
    assert app.corral == CorralTags("spark-it", "spark-count", (RACK,), key="spark-count")
    assert len(ran["executor_hosts"]) == EXECUTORS and len(am_hosts) >= 1
    assert locality.containers_in_racks == locality.containers == EXECUTORS + len(am_hosts)
    assert locality.blocks > 1 and locality.blocks_with_replica_in_racks == locality.blocks


def test_untagged_spark_job_runs_as_before(cluster: Cluster, spark_runs: dict[str, dict[str, Any]]) -> None:
    ran = spark_runs["untagged"]
    app = cluster.rm.application(ran["app_id"])
    assert app.succeeded and ran["lines"] == LINES and app.corral is None
    assert len(ran["executor_hosts"]) == EXECUTORS
