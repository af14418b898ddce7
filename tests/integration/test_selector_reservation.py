"""An admitted deadline job on the embedded cluster: the selector's candidates and Corral-I's choice on
the cluster's own ClusterSpec become a real YARN reservation (RM REST reservation API), made once
however often it is asked for, and a MapReduce job submitted into it runs to success."""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from corral_yarn.cluster import Cluster, CorralTags, RemoteError
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.cluster.reservations import Reservations, reservation_name
from corral_yarn.contracts import JobSpec
from corral_yarn.io import parse
from corral_yarn.selector import CandidateRules, Datacenter, candidate_space, select, vm_profile
from corral_yarn.selector.candidates import MBPS, Candidate
from corral_yarn.cluster.deadline import RESERVABLE_QUEUE, ContainerShape, reservation_for, reserve
from corral_yarn.selector.tree import topology_of

pytestmark = pytest.mark.integration
DEADLINE_S = 200.0
CONTAINER_MB = 512  # every container of the job, AM included: the reservation's ContainerShape


def predicted_wordcount(name: str) -> JobSpec:
    """The model's view of the job, as the estimator would give it: two map tasks (two input files)
    and one reducer. MRCute has no term for a container JVM's start-up, so the sizes and rates are
    chosen to make L(<N, B>) a few minutes (room for a run on this machine) with B mattering."""
    return parse(JobSpec, {"name": name, "input_bytes": 20e6, "map_selectivity": 1.0, "reduce_selectivity": 1.0,
                           "map_tasks": 2, "reduce_tasks": 1, "map_rate_bytes_per_s": 2e5,
                           "reduce_rate_bytes_per_s": 1e6}, source="predicted wordcount")


def test_the_selectors_choice_is_reserved_once_and_the_job_runs_inside_it(minicluster: dict[str, Any], tmp_path: Path) -> None:
    cluster = Cluster.from_description(minicluster, progress=False)
    reservations = Reservations(cluster.rm)
    topology = cluster.topology()
    spec = topology.cluster_spec("embedded", nic_bandwidth_bytes_per_s=1000 * MBPS, disk_bandwidth_bytes_per_s=125e6,
                                 oversubscription=2.0, task_memory_mb=CONTAINER_MB)
    space = candidate_space(predicted_wordcount("wc"), vm_profile(spec.disk_bandwidth_bytes_per_s), DEADLINE_S, 2, CandidateRules())
    choice = select("corral-i", Datacenter(topology_of(spec)), space, np.random.default_rng(0))
    assert choice is not None and choice.candidate in space.frontier
    chosen = choice.candidate
    run = random.Random().randrange(10**6)
    tags = CorralTags(f"rsv-{run}", "wc", (topology.racks[0],))
    now_ms = int(time.time() * 1000)
    reserved = reserve(reservations, tags, chosen, now_ms, now_ms + int(DEADLINE_S * 1000))
    try:
        retried = reserve(reservations, tags, chosen, int(time.time() * 1000), now_ms + int(DEADLINE_S * 1000))
        assert retried == reserved and reserved.queue == RESERVABLE_QUEUE
        [listed] = [r for r in reservations.list(RESERVABLE_QUEUE) if r.name == reservation_name(tags)]
        assert listed.reservation_id == reserved.reservation_id
        assert max(a.memory_mb for a in listed.allocations) >= (chosen.vms + 1) * CONTAINER_MB  # the gang and the AM at once
        reservations.wait_active(reserved.reservation_id)
        for part in range(2):
            text = tmp_path / f"part-{part}.txt"
            text.write_text("corral reserves corral\n" * 100)
            cluster.hdfs.upload(f"/it/rsv-{run}/in/part-{part}.txt", str(text))
        job = MapReduceJob(name=f"rsv-wc-{run}", jar=minicluster["examples_jar"], program="wordcount", inputs=[f"/it/rsv-{run}/in"],
                           output=f"/it/rsv-{run}/out", am_memory_mb=CONTAINER_MB, map_memory_mb=CONTAINER_MB,
                           reduce_memory_mb=CONTAINER_MB)
        submitted = cluster.mapreduce().submit(job, tags, queue=reserved.queue, reservation_id=reserved.reservation_id)
        final = cluster.rm.wait(submitted.app_id, timeout_s=300)
        assert final.succeeded and final.queue == RESERVABLE_QUEUE
        with cluster.hdfs.read(f"/it/rsv-{run}/out/part-r-00000", encoding="utf-8") as f:
            assert dict(line.split("\t") for line in f.read().split("\n") if line) == {"corral": "400", "reserves": "200"}
    finally:
        reservations.delete(reserved.reservation_id)
    assert reservations.list(RESERVABLE_QUEUE, reserved.reservation_id) == []


def test_a_deadline_before_the_arrival_is_refused_with_the_rms_message(minicluster: dict[str, Any]) -> None:
    reservations = Reservations(Cluster.from_description(minicluster, progress=False).rm)
    now_ms = int(time.time() * 1000)
    tags = CorralTags(f"bad-{random.Random().randrange(10**6)}", "late", ())
    fits = reservation_for(tags, Candidate(vms=1, bandwidth=1, latency_s=1.0), now_ms + 600_000, now_ms + 601_000, ContainerShape())
    bad = replace(fits, deadline_ms=now_ms + 300_000)
    with pytest.raises(RemoteError, match="deadline") as refused:
        reservations.submit(RESERVABLE_QUEUE, bad)
    assert refused.value.status == 400 and refused.value.exception == "BadRequestException"
    assert reservations.find(RESERVABLE_QUEUE, bad.name) is None
