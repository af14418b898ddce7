"""Kwiken for YARN on the embedded cluster: a recurring job's run is ingested into a history store, Kwiken's
speculation settings are planned from it, and the pipeline's submit step carries them into the next run's
configuration (JobHistory's view of its job.xml)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.history import job_id_of
from corral_yarn.kwiken.speculation import MINIMUM_ALLOWED, SPECULATIVE
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
    assert props[SPECULATIVE["reduce"]] == "false"  # one reduce: DefaultSpeculator could never copy it
    assert settings.jobs[0].stages[0].tasks >= 2 and settings.jobs[0].stages[0].samples >= 2

    second = _run(cluster, _planned(entry, racks, base, "second", props), minicluster["examples_jar"])
    before, after = cluster.history.conf(first), cluster.history.conf(second)
    assert all(_same(after.get(k), v) for k, v in props.items()), ({k: after.get(k) for k in props}, props)  # JobHistory's view of the job.xml the AM ran with
    assert before.get(SPECULATIVE["reduce"]) == "true"  # the cluster's default, which the settings changed
    if props[SPECULATIVE["map"]] == "true":
        assert after[MINIMUM_ALLOWED] == props[MINIMUM_ALLOWED] != before.get(MINIMUM_ALLOWED)
