"""Kwiken for YARN on the embedded cluster: a recurring job's run is ingested into a history store, Kwiken's
speculation settings are planned from it, the pipeline's submit step carries them into the next run's
configuration (JobHistory's view of its job.xml), and Kwiken's TaskRuntimeEstimator, loaded by that run's
MR AM, has DefaultSpeculator copy the maps that run past their timeout."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.history import job_id_of
from corral_yarn.kwiken.speculation import ESTIMATOR, KWIKEN_ESTIMATOR, SPECULATIVE, TIMEOUT_MS, settings as speculation_settings
from corral_yarn.pipeline import execution
from corral_yarn.pipeline.catalog import RecurringJob
from corral_yarn.pipeline.history import history_source
from corral_yarn.pipeline.speculation import plan_from_store
from estimator.store import HistoryStore

pytestmark = pytest.mark.integration
BLOCK = 65536


def _planned(entry: RecurringJob, racks: list[str], base: str, name: str, speculation: dict[str, str]) -> execution.PlannedRun:
    now = datetime.now(UTC)
    return execution.PlannedRun(version="v1", plan_id=f"{entry.key}-{name}", scenario="batch", name=name, racks=racks, priority=1,
                                order=0, planned_start=now, arrival=now, period_start=now, period_end=now + timedelta(hours=1),
                                job=entry, jar="", hdfs_input=f"{base}/in", hdfs_output=f"{base}/{name}", speculation=speculation)


def _same(shown: str | None, given: str) -> bool:
    """JobHistory's JSON types values (``0.0`` may come back as ``0``): equal as numbers, else as text."""
    try:
        return float(shown or "nan") == float(given)
    except ValueError:
        return shown == given


def _run(cluster: Cluster, run: execution.PlannedRun, jar: str) -> str:
    app_id = execution.submit(cluster, run.model_copy(update={"jar": jar}))
    assert cluster.rm.wait(app_id, timeout_s=600).succeeded
    cluster.history.wait_for_job(job_id_of(app_id))
    return job_id_of(app_id)


def test_settings_planned_from_the_history_reach_the_next_runs_job_conf(minicluster: Any, tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    topology = cluster.topology()
    racks = list(topology.racks)
    key = f"kwy{random.randrange(10**6)}"
    entry = RecurringJob(key=key, program="wordcount", reduces=1, local_input=str(tmp_path / "in"))
    (tmp_path / "in").mkdir()
    rng = random.Random(0)
    (tmp_path / "in" / "words.txt").write_text("".join(f"w{rng.randrange(500)} " + ("\n" if k % 9 == 8 else "") for k in range(8 * BLOCK // 5)))
    base = f"/it/kwiken-yarn/{key}"
    cluster.uploader(topology).upload(tmp_path / "in", f"{base}/in", racks, block_bytes=BLOCK)

    first = _run(cluster, _planned(entry, racks, base, "first", {}), minicluster["examples_jar"])
    store = HistoryStore(tmp_path / "history")
    store.append([history_source(cluster).run(first)])
    settings = plan_from_store(store.root, 1.0, keys=[key])
    props = settings.properties(key)
    assert props[SPECULATIVE["reduce"]] == "false"  # one reduce: too few durations for a tail
    maps = settings.jobs[0].stages[0]
    assert maps.type == "map" and maps.samples == maps.tasks >= 2
    # every map past a 0 ms timeout: each gets a copy from the AM's speculator once all maps have containers
    props |= speculation_settings([("map", 1.0, maps.tasks, 0.0), ("reduce", 0.0, 1, None)])
    assert props[ESTIMATOR] == KWIKEN_ESTIMATOR and props[TIMEOUT_MS["map"]] == "0"

    second = _run(cluster, _planned(entry, racks, base, "second", props), minicluster["examples_jar"])
    before, after = cluster.history.conf(first), cluster.history.conf(second)
    assert all(_same(after.get(k), v) for k, v in props.items()), ({k: after.get(k) for k in props}, props)  # JobHistory's view of the job.xml the AM ran with
    assert before.get(SPECULATIVE["reduce"]) == "true" and before.get(ESTIMATOR) != KWIKEN_ESTIMATOR  # the cluster's defaults
    attempts = [a for a in cluster.history.attempts(second) if a.type == "MAP"]
    tasks = {a.attempt_id.rsplit("_", 1)[0] for a in attempts}
    assert len(attempts) > len(tasks), [(a.attempt_id, a.state) for a in attempts]  # the AM's speculator made copies
    # DistinctNodeSpeculator: a copy that started where an earlier attempt of its task still ran (1 s margin: the original
    # may end as the copy starts) was killed there and then, with its reason in JobHistory
    on_original_node = 0
    for a in attempts:
        earlier = [e for e in attempts if e.attempt_id.rsplit("_", 1)[0] == a.attempt_id.rsplit("_", 1)[0] and e.started_ms < a.started_ms]
        if any(e.node_http_address == a.node_http_address and e.finished_ms > a.started_ms + 1000 for e in earlier):
            assert a.state == "KILLED" and "speculative copy started on its original's node" in a.diagnostics, (a, earlier)
            on_original_node += 1
    print(f"KWIKEN_YARN copies {len(attempts) - len(tasks)}, killed on their original's node {on_original_node}")
