"""An admitted deadline job on the embedded cluster: its <N, B> becomes a real YARN reservation
(RM REST reservation API), listed back, and a MapReduce job submitted into it runs to success."""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cluster import Cluster, CorralTags, RemoteError
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.cluster.reservations import Reservations
from corral_yarn.selector.candidates import Candidate
from corral_yarn.selector.yarn import reservation_for

pytestmark = pytest.mark.integration
PLAN_QUEUE = "reservations"  # the embedded cluster's reservable queue (ClusterConfig)


def test_a_job_runs_inside_the_reservation_of_its_chosen_tuple(minicluster: dict[str, Any], tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    reservations = Reservations(cluster.rm)
    run = random.Random().randrange(10**6)
    now_ms = int(time.time() * 1000)
    definition = reservation_for(f"rsv-{run}", Candidate(vms=2, bandwidth=125_000, latency_s=300.0), now_ms, now_ms + 900_000)
    reservation_id = reservations.submit(PLAN_QUEUE, definition)
    try:
        [listed] = reservations.list(PLAN_QUEUE, reservation_id)
        assert (listed.reservation_id, listed.name) == (reservation_id, f"rsv-{run}")
        assert sum(a.memory_mb for a in listed.allocations) >= 3 * 512  # two task containers and the AM
        reservations.wait_active(reservation_id)
        text = tmp_path / "in.txt"
        text.write_text("corral reserves corral\n" * 200)
        cluster.hdfs.upload(f"/it/rsv-{run}/in/part.txt", str(text))
        job = MapReduceJob(name=f"rsv-wc-{run}", jar=minicluster["examples_jar"], program="wordcount",
                           inputs=[f"/it/rsv-{run}/in"], output=f"/it/rsv-{run}/out")
        rack = cluster.topology().racks[0]
        submitted = cluster.mapreduce().submit(job, CorralTags(f"rsv-{run}", "wc", (rack,)), queue=f"root.{PLAN_QUEUE}",
                                               reservation_id=reservation_id)
        final = cluster.rm.wait(submitted.app_id, timeout_s=300)
        assert final.succeeded and final.queue == f"root.{PLAN_QUEUE}"
        with cluster.hdfs.read(f"/it/rsv-{run}/out/part-r-00000", encoding="utf-8") as f:
            assert dict(line.split("\t") for line in f.read().split("\n") if line) == {"corral": "400", "reserves": "200"}
    finally:
        reservations.delete(reservation_id)
    assert reservations.list(PLAN_QUEUE, reservation_id) == []


def test_a_deadline_before_the_arrival_is_refused_with_the_rms_message(minicluster: dict[str, Any]) -> None:
    reservations = Reservations(Cluster.from_description(minicluster, progress=False).rm)
    now_ms = int(time.time() * 1000)
    fits = reservation_for("bad", Candidate(vms=1, bandwidth=1, latency_s=1.0), now_ms + 600_000, now_ms + 601_000)
    bad = replace(fits, deadline_ms=now_ms + 300_000)
    with pytest.raises(RemoteError, match="deadline") as refused:
        reservations.submit(PLAN_QUEUE, bad)
    assert refused.value.status == 400 and refused.value.exception == "BadRequestException"
