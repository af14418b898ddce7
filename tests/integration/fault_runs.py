"""What the master-restart fault tests share: one small planned wordcount run of the pipeline, its input,
and the wait for it to run (docs/reliability.md)."""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.rm import AppReport
from corral_yarn.pipeline.catalog import RecurringJob
from corral_yarn.pipeline.execution import PlannedRun

os.environ.setdefault("AIRFLOW_HOME", tempfile.mkdtemp(prefix="corral-airflow-"))  # before the trigger's import
BLOCK = 65536
WORDS = [f"w{k:03d}" for k in range(200)]


def planned_run(description: dict[str, Any], local: Path, name: str, rack: str) -> PlannedRun:
    """A batch run of a wordcount over 4 blocks of words on ``rack``, with a fresh plan id (so its tags are new)."""
    rng = random.Random(name)
    local.mkdir(parents=True, exist_ok=True)
    lines = [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(4 * BLOCK // 50)]
    (local / "words.txt").write_text("\n".join(lines) + "\n")
    now = datetime.now(UTC).replace(microsecond=0)
    plan_id = f"{name}-{random.randrange(10**6)}"
    return PlannedRun(version=plan_id, plan_id=plan_id, scenario="batch", name=name, racks=[rack], priority=5, order=0,
                      planned_start=now, arrival=now, period_start=now - timedelta(hours=1), period_end=now + timedelta(hours=23),
                      job=RecurringJob(key=name, program="wordcount", local_input=str(local), block_bytes=BLOCK),
                      jar=description["examples_jar"], hdfs_input=f"/fault/{plan_id}/input", hdfs_output=f"/fault/{plan_id}/output")


def expected_counts(local: Path) -> Counter[str]:
    return Counter((local / "words.txt").read_text().split())


def output_counts(cluster: Cluster, directory: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for part in sorted(n for n in cluster.hdfs.list(directory) if n.startswith("part-")):
        with cluster.hdfs.read(f"{directory}/{part}", encoding="utf-8") as f:
            for line in f.read().splitlines():
                word, count = line.split("\t")
                counts[word] += int(count)
    return counts


def digest(cluster: Cluster, path: str) -> tuple[int, str]:
    """Length and SHA-256 of an HDFS file's bytes as read back."""
    with cluster.hdfs.read(path) as f:
        data = f.read()
    return len(data), hashlib.sha256(data).hexdigest()


def await_running(cluster: Cluster, app_id: str, timeout_s: float = 300.0) -> AppReport:
    """The report once the application RUNS (its AM registered); it must not have ended already."""
    deadline = time.monotonic() + timeout_s
    while (report := cluster.rm.application(app_id)).state != "RUNNING":
        assert not report.done, f"{app_id} ended {report.state} before the fault: {report.diagnostics}"
        assert time.monotonic() < deadline, f"{app_id} still {report.state} after {timeout_s:.0f} s"
        time.sleep(1.0)
    return report
