"""java_patch on the embedded cluster (issue 3, "Done when"): Corral's block placement for a file
written through a DataNode of one rack, and the Corral scheduler confining a tagged MapReduce job
to its rack while the same job untagged spreads. Read back through WebHDFS, the ResourceManager
and the JobHistory server's REST APIs only."""

from __future__ import annotations

import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlparse

import pytest
import requests

pytestmark = pytest.mark.integration

BLOCK = 1024 * 1024
JSON = {"Accept": "application/json"}


def rack_of_host(cluster: dict[str, Any]) -> dict[str, str]:
    return {node["host"]: rack["name"] for rack in cluster["racks"] for node in rack["nodes"]}


def write_through_datanode(cluster: dict[str, Any], node: dict[str, Any], path: str, data: bytes, replication: int) -> None:
    """WebHDFS CREATE sent straight to one DataNode, which then writes as an HDFS client on its host."""
    namenode = urlparse(cluster["namenode_rpc"]).netloc
    params = {"op": "CREATE", "namenoderpcaddress": namenode, "blocksize": BLOCK, "replication": replication,
              "overwrite": "true", "createparent": "true", "user.name": "corral"}  # fmt: skip
    response = requests.put(f"{node['datanode_http']}/webhdfs/v1{path}", params=params, data=data, timeout=120)
    assert response.status_code == 201, response.text


def block_racks(cluster: dict[str, Any], path: str) -> list[set[str]]:
    """The racks of each block's replicas, from WebHDFS GETFILEBLOCKLOCATIONS."""
    response = requests.get(f"{cluster['webhdfs']}/webhdfs/v1{path}", params={"op": "GETFILEBLOCKLOCATIONS"}, timeout=30)
    response.raise_for_status()
    blocks = response.json()["BlockLocations"]["BlockLocation"]
    return [{topology.rsplit("/", 1)[0] for topology in block["topologyPaths"]} for block in blocks]


@pytest.mark.parametrize("replication", [2, 3])
def test_every_block_written_through_rack_b_has_a_replica_there(minicluster: dict[str, Any], replication: int) -> None:
    rack_b = minicluster["racks"][1]
    path = f"/it/java-patch/placement-{replication}-{uuid.uuid4().hex[:8]}"
    write_through_datanode(minicluster, rack_b["nodes"][0], path, (b"c" * 1023 + b"\n") * (6 * BLOCK // 1024), replication)
    racks = block_racks(minicluster, path)
    assert len(racks) == 6
    for block in racks:
        assert rack_b["name"] in block
        assert len(block) == replication  # every replica on its own rack (>= 2 racks)


def run_wordcount(cluster: dict[str, Any], job_tag: str, rack_tags: list[str], source: str, output: str) -> str:
    """Runs hadoop-mapreduce-examples wordcount with the Java client; returns its YARN application id.

    ``job_tag`` (a ``corral-job:`` tag, which the scheduler ignores) finds the application afterwards.
    """
    tags = ",".join([job_tag, *rack_tags])
    command = ["java", "-Xmx512m", "-cp", cluster["client_classpath"], "org.apache.hadoop.util.RunJar", cluster["examples_jar"],
               "wordcount", f"-Dmapreduce.job.tags={tags}", source, output]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    apps = requests.get(f"{cluster['resourcemanager']}/ws/v1/cluster/apps", headers=JSON, timeout=30).json()["apps"]["app"]
    [app] = [a for a in apps if job_tag in a.get("applicationTags", "").split(",")]
    assert app["finalStatus"] == "SUCCEEDED"
    return str(app["id"])


def as_list(value: Any) -> list[Any]:
    """JobHistory's JSON gives a one-element list as the element itself."""
    return value if isinstance(value, list) else [value]


def container_hosts(cluster: dict[str, Any], app_id: str) -> list[str]:
    """Hosts of the job's AM and of every task attempt, from the JobHistory REST API."""
    job = cluster["jobhistory"] + "/ws/v1/history/mapreduce/jobs/" + app_id.replace("application_", "job_")
    deadline = time.monotonic() + 120
    while (response := requests.get(job, headers=JSON, timeout=30)).status_code != 200:
        assert time.monotonic() < deadline, f"{job} never appeared in the JobHistory server"
        time.sleep(1)
    hosts = [a["nodeId"].split(":")[0] for a in as_list(requests.get(f"{job}/jobattempts", headers=JSON, timeout=30).json()["jobAttempts"]["jobAttempt"])]
    for task in as_list(requests.get(f"{job}/tasks", headers=JSON, timeout=30).json()["tasks"]["task"]):
        attempts = requests.get(f"{job}/tasks/{task['id']}/attempts", headers=JSON, timeout=30).json()["taskAttempts"]["taskAttempt"]
        hosts += [a["nodeHttpAddress"].split(":")[0] for a in as_list(attempts)]
    return hosts


def test_tagged_job_runs_every_container_in_its_rack_and_untagged_spreads(minicluster: dict[str, Any]) -> None:
    rack_b = minicluster["racks"][1]
    run = uuid.uuid4().hex[:8]
    source = f"/it/java-patch/wc-{run}/in"
    words = b"".join(b"corral rack %d planner %d\n" % (i % 97, i) for i in range(6 * BLOCK // 24))
    write_through_datanode(minicluster, rack_b["nodes"][1], f"{source}/words.txt", words, 3)
    racks = rack_of_host(minicluster)

    # The two jobs run at once: the tagged one holds to rack B while the untagged one may use any rack.
    with ThreadPoolExecutor(2) as pool:
        tagged_run = pool.submit(run_wordcount, minicluster, f"corral-job:wc-tagged-{run}",
                                 [f"corral-racks-0:{rack_b['name']}", f"corral-plan:{run}"], source, f"/it/java-patch/wc-{run}/tagged")
        untagged_run = pool.submit(run_wordcount, minicluster, f"corral-job:wc-untagged-{run}", [], source,
                                   f"/it/java-patch/wc-{run}/untagged")
        tagged, untagged = tagged_run.result(), untagged_run.result()
    tagged_racks = [racks[host] for host in container_hosts(minicluster, tagged)]
    assert len(tagged_racks) >= 1 + 6 + 1  # AM, one map per block, a reducer
    assert set(tagged_racks) == {rack_b["name"]}

    assert len({racks[host] for host in container_hosts(minicluster, untagged)}) >= 2
