"""The estimator against the embedded cluster's real JobHistory server: the same wordcount job runs
four times on one rack; ingestion gives rows whose bytes match the job counters, and the MRCute
parameters fitted on the first three runs predict the fourth (error measured and printed)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from corral_yarn.cluster import Cluster, CorralTags, Endpoints
from corral_yarn.cluster.connect import http_url
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.contracts import StageSpec
from corral_yarn.model.mrcute import reservation_latency
from estimator.fit import disk_bandwidth, fit_job
from estimator.identity import RecurringKey
from estimator.records import IngestReport
from estimator.sources.jobhistory import API, JobHistorySource, job_counters
from estimator.store import HistoryStore

pytestmark = pytest.mark.integration
BLOCK = 65536
RUNS = 4
WORDS = [f"w{k:03d}" for k in range(400)]


def description(minicluster: Any) -> dict[str, Any]:
    if isinstance(minicluster, dict):
        return minicluster
    return json.loads(Path(getattr(minicluster, "path", minicluster)).read_text())


def text(seed: int, size: int) -> str:
    rng = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def history(minicluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the recurring job RUNS times (one after the other, as a daily job would), then ingest."""
    desc = description(minicluster)
    cluster = Cluster(Endpoints.model_validate(desc), progress=False)
    topo = cluster.topology()
    rack = topo.racks[0]
    local = tmp_path_factory.mktemp("est")
    tag = f"est-{random.Random().randrange(10**6)}"
    submitter, uploader = cluster.mapreduce(), cluster.uploader(topo)
    job_ids = []
    for i in range(RUNS):
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        (local / f"in{i}.txt").write_text(text(i, 4 * BLOCK))
        base = f"/it/{tag}/run{i}"
        uploader.upload(local / f"in{i}.txt", f"{base}/in/data.txt", [rack], block_bytes=BLOCK)
        job = MapReduceJob(name=f"est-wordcount-{stamp}", jar=desc["examples_jar"], program="wordcount",
                           inputs=[f"{base}/in"], output=f"{base}/out", reduces=2)
        app = submitter.submit(job, CorralTags(tag, f"run{i}", (rack,)), priority=1)
        final = cluster.rm.wait(app.app_id, timeout_s=900)
        assert final.succeeded, final
        cluster.history.wait_for_job(job_id_of(app.app_id))
        job_ids.append(job_id_of(app.app_id))
    store = HistoryStore(tmp_path_factory.mktemp("store"))
    report = IngestReport()
    url = http_url(desc["jobhistory"])
    store.append(JobHistorySource(url, RecurringKey()).read(report, skip_ids=store.run_ids()), report)
    again = IngestReport()
    store.append(JobHistorySource(url, RecurringKey()).read(again, skip_ids=store.run_ids()), again)
    runs = {r.run_id: r for r in store.runs()}
    return {"cluster": cluster, "topology": topo, "rack": rack, "job_ids": job_ids, "report": report, "again": again,
            "runs": [runs[f"jobhistory:{j}"] for j in job_ids]}


def test_rows_match_the_job_counters(history: dict[str, Any]) -> None:
    rest = history["cluster"].history.rest
    for job_id, run in zip(history["job_ids"], history["runs"], strict=True):
        counters = job_counters(rest.get(f"{API}/jobs/{job_id}/counters")["jobCounters"])
        job = rest.get(f"{API}/jobs/{job_id}")["job"]
        assert run.input_bytes == counters["HDFS_BYTES_READ"]["map"]
        assert run.shuffle_bytes == counters["REDUCE_SHUFFLE_BYTES"]["total"]
        assert run.output_bytes == counters["HDFS_BYTES_WRITTEN"]["total"]
        assert (run.map_tasks, run.reduce_tasks) == (job["mapsTotal"], job["reducesTotal"]) == (len(run.map_task_samples), len(run.reduce_task_samples))
        assert sum(s.bytes for s in run.map_task_samples) == run.input_bytes
        assert sum(s.bytes for s in run.reduce_task_samples) == run.output_bytes
        assert run.recurring_key == "est-wordcount" and {r.lower() for r in run.racks} == {history["rack"].lower()}
    assert history["report"].read == history["report"].written + history["report"].duplicates + sum(history["report"].skipped.values())
    assert history["again"].written == 0 and history["again"].duplicates >= RUNS


def test_fitted_parameters_predict_the_next_run(history: dict[str, Any]) -> None:
    *past, nxt = history["runs"]
    params = fit_job(past)
    disk = disk_bandwidth(past)
    topo, rack = history["topology"], history["rack"]
    spec = topo.cluster_spec("mini", nic_bandwidth_bytes_per_s=1.25e9, disk_bandwidth_bytes_per_s=float(np.median(list(disk.values()))),
                             oversubscription=2.0)
    machines = len(next(r for r in spec.racks if r.name == rack).machines)
    stage = StageSpec(name="main", input_bytes=nxt.input_bytes, shuffle_bytes=nxt.shuffle_bytes, output_bytes=nxt.output_bytes,
                      map_tasks=nxt.map_tasks, reduce_tasks=nxt.reduce_tasks,
                      map_rate_bytes_per_s=params.map_rate_bytes_per_s, reduce_rate_bytes_per_s=params.reduce_rate_bytes_per_s)
    predicted = float(reservation_latency(stage, spec, machines, spec.nic_bandwidth_bytes_per_s))
    actual = (nxt.finish_time - nxt.start_time).total_seconds()
    overheads = []
    for r in past:  # what MRCute does not model on this cluster: AM start, container launch, commit
        s = StageSpec(name="main", input_bytes=r.input_bytes, shuffle_bytes=r.shuffle_bytes, output_bytes=r.output_bytes,
                      map_tasks=r.map_tasks, reduce_tasks=r.reduce_tasks,
                      map_rate_bytes_per_s=params.map_rate_bytes_per_s, reduce_rate_bytes_per_s=params.reduce_rate_bytes_per_s)
        overheads.append((r.finish_time - r.start_time).total_seconds() - float(reservation_latency(s, spec, machines, spec.nic_bandwidth_bytes_per_s)))
    with_overhead = predicted + float(np.median(overheads))
    map_phase = max(s.seconds for s in nxt.map_task_samples)
    predicted_map = float(np.ceil(nxt.map_tasks / (machines * spec.map_slots_per_machine))) * (nxt.input_bytes / nxt.map_tasks) / min(
        spec.disk_bandwidth_bytes_per_s, params.map_rate_bytes_per_s)
    figures = {
        "runs_fitted": len(past), "map_rate_bytes_per_s": params.map_rate_bytes_per_s, "reduce_rate_bytes_per_s": params.reduce_rate_bytes_per_s,
        "S_map": params.map_selectivity, "S_reduce": params.reduce_selectivity, "B_D_per_node": disk,
        "actual_s": actual, "mrcute_s": predicted, "mrcute_error": abs(predicted - actual) / actual,
        "mrcute_plus_history_overhead_s": with_overhead, "mrcute_plus_overhead_error": abs(with_overhead - actual) / actual,
        "longest_map_task_s": map_phase, "mrcute_map_stage_s": predicted_map,
    }
    print("ESTIMATOR_INTEGRATION " + json.dumps(figures))
    assert params.map_rate_bytes_per_s and params.reduce_rate_bytes_per_s and disk
    assert figures["mrcute_plus_overhead_error"] < 0.5
