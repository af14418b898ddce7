"""MapReduce jobs from hadoop-mapreduce-examples submitted through the RM REST API with rack sets
{A}, {B}, {A, C}: every container on the job's racks, correct outputs, history retrievable."""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.errors import ApplicationFailedError
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob

pytestmark = pytest.mark.integration
BLOCK = 65536
WORDS = [f"w{k:03d}" for k in range(300)] + ["Alpha", "beta", "GAMMA"]


@pytest.fixture(scope="module")
def cluster(minicluster: Any) -> Cluster:
    return Cluster.from_description(minicluster, progress=False)


def text(seed: int, size: int) -> str:
    rng = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def records(seed: int, size: int) -> str:
    rng = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = f"{rng.choice(WORDS)}{rng.randint(0, 99999):05d}\tv{rng.randint(0, 9)}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def read_output(cluster: Cluster, directory: str) -> dict[str, str]:
    parts = sorted(n for n in cluster.hdfs.list(directory) if n.startswith("part-"))
    out = {}
    for name in parts:
        with cluster.hdfs.read(f"{directory}/{name}", encoding="utf-8") as f:
            out[name] = f.read()
    return out


@pytest.fixture(scope="module")
def three_jobs(cluster: Cluster, minicluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Upload the inputs into each job's racks, submit the three jobs at once, wait for all."""
    topo = cluster.topology()
    a, b, c = topo.racks[:3]
    jar = minicluster["examples_jar"]
    local = tmp_path_factory.mktemp("mr")
    run = random.Random().randrange(10**6)
    jobs = {
        "wc-a": ("wordcount", [a], text(1, 2 * BLOCK), 1),
        "sort-b": ("sort", [b], records(2, 2 * BLOCK), 2),
        "wc-ac": ("wordcount", [a, c], text(3, 3 * BLOCK), 2),
    }
    uploader = cluster.uploader(topo)
    submitter = cluster.mapreduce()
    submitted = {}
    for name, (program, racks, data, reduces) in jobs.items():
        (local / name).write_text(data)
        uploader.upload(local / name, f"/it/mr-{run}/{name}/in/data.txt", racks, block_bytes=BLOCK)
        job = MapReduceJob(name=name, jar=jar, program=program, inputs=[f"/it/mr-{run}/{name}/in"],
                           output=f"/it/mr-{run}/{name}/out", reduces=reduces)
        tags = CorralTags(f"it-{run}", name, tuple(racks))
        submitted[name] = (job, tags, submitter.submit(job, tags, priority=5))
    with ThreadPoolExecutor(3) as pool:
        finals = dict(zip(submitted, pool.map(lambda s: cluster.rm.wait(s[2].app_id, timeout_s=900), submitted.values())))
    return {"jobs": jobs, "submitted": submitted, "finals": finals, "run": run, "topology": topo, "submitter": submitter}


def test_all_three_jobs_succeed_with_their_tags_and_priority(three_jobs: dict[str, Any]) -> None:
    for name, final in three_jobs["finals"].items():
        assert final.succeeded, final
        assert final.corral is not None and final.corral.job == name
        assert final.priority == 5


def test_every_container_ran_on_the_jobs_racks(cluster: Cluster, three_jobs: dict[str, Any]) -> None:
    topo = three_jobs["topology"]
    for name, (_, racks, _, _) in three_jobs["jobs"].items():
        app_id = three_jobs["finals"][name].app_id
        cluster.history.wait_for_job(job_id_of(app_id))
        attempts = cluster.history.attempts(job_id_of(app_id))
        kinds = Counter(a.type for a in attempts)
        assert kinds["AM"] >= 1 and kinds["MAP"] >= 2 and kinds["REDUCE"] >= 1, kinds
        for attempt in attempts:
            rack = attempt.rack or topo.rack_of_node(attempt.node_http_address)
            assert rack in racks, (name, attempt)
        for attempt in cluster.rm.attempts(app_id):
            assert topo.rack_of_node(attempt.am.node_id) in racks, (name, attempt)


def test_wordcount_outputs_match_a_python_count(cluster: Cluster, three_jobs: dict[str, Any]) -> None:
    run = three_jobs["run"]
    for name in ("wc-a", "wc-ac"):
        expected = Counter(three_jobs["jobs"][name][2].split())
        counted: Counter[str] = Counter()
        for body in read_output(cluster, f"/it/mr-{run}/{name}/out").values():
            for line in body.splitlines():
                word, count = line.split("\t")
                counted[word] += int(count)
        assert counted == expected


def test_sort_output_is_sorted_within_each_part_and_keeps_every_record(cluster: Cluster, three_jobs: dict[str, Any]) -> None:
    run = three_jobs["run"]
    parts = read_output(cluster, f"/it/mr-{run}/sort-b/out")
    assert len(parts) == 2
    everything = []
    for body in parts.values():
        keys = [line.split("\t")[0].encode() for line in body.splitlines()]
        assert keys == sorted(keys)  # Text keys compare as bytes
        everything += body.splitlines()
    assert sorted(everything) == sorted(three_jobs["jobs"]["sort-b"][2].splitlines())


def test_history_of_each_job_is_retrievable(cluster: Cluster, three_jobs: dict[str, Any]) -> None:
    for name, final in three_jobs["finals"].items():
        job = cluster.history.wait_for_job(job_id_of(final.app_id))
        assert job["state"] == "SUCCEEDED" and job["name"] == name
        assert job["reducesTotal"] == three_jobs["jobs"][name][3]


def test_resubmitting_a_job_of_the_plan_returns_the_same_application(cluster: Cluster, three_jobs: dict[str, Any]) -> None:
    job, tags, first = three_jobs["submitted"]["wc-a"]
    again = three_jobs["submitter"].submit(job, tags, priority=5)
    assert again.app_id == first.app_id
    assert [a.app_id for a in cluster.rm.find(tags)] == [first.app_id]


def test_a_job_that_failed_is_submitted_again(cluster: Cluster, minicluster: Any, tmp_path: Any) -> None:
    """A failed MapReduce job ends FINISHED with final status FAILED; resubmitting it must run it again."""
    run = random.Random().randrange(10**6)
    rack = cluster.topology().racks[0]
    (tmp_path / "data.txt").write_text(text(7, BLOCK))
    cluster.uploader().upload(tmp_path / "data.txt", f"/it/again-{run}/in/data.txt", [rack], block_bytes=BLOCK)
    tags = CorralTags(f"again-{run}", "wc", (rack,))
    broken = MapReduceJob(name="wc", jar=minicluster["examples_jar"], program="wordcount", mapper="no.such.Mapper",
                          inputs=[f"/it/again-{run}/in"], output=f"/it/again-{run}/out-1",
                          properties={"mapreduce.map.maxattempts": "1"})
    submitter = cluster.mapreduce()
    first = submitter.submit(broken, tags)
    with pytest.raises(ApplicationFailedError):
        cluster.rm.wait(first.app_id, timeout_s=600)
    ended = cluster.rm.application(first.app_id)
    assert (ended.state, ended.final_status) == ("FINISHED", "FAILED")
    fixed = broken.model_copy(update={"mapper": None, "output": f"/it/again-{run}/out-2"})
    second = submitter.submit(fixed, tags)
    assert second.app_id != first.app_id
    assert cluster.rm.wait(second.app_id, timeout_s=600).succeeded
    assert submitter.submit(fixed, tags).app_id == second.app_id  # and once it succeeded, it is not run a third time
