"""Soak (issue 20 item 2): many small tagged and untagged applications through the ResourceManager
of the embedded cluster, once under stock YARN's CapacityScheduler and once under Corral's
scheduler, side by side in one run; one JSON line with ``apps`` and ``throughput_ratio_corral_vs_stock``.

Each application is the cheapest one that reaches the scheduler: its ApplicationMaster container runs
``true`` (no JVM), so the RM admits it, the scheduler allocates its AM container (inside its rack set
R_j for a tagged application under Corral), a NodeManager launches and releases it, and the RM ends
the application. The AM never registers, so every application ends FAILED by design; what is measured
is the RM's admission, scheduling and release path, not a job. A share of the applications (default
1/2) is tagged with a rack set of one or two racks (thesis §4.1), the rest are untagged. The client
keeps ``--in-flight`` applications not yet ended and submits through the project's RM adapter
(``ResourceManager.submit``: queue check, idempotency look-up by tag, new-application, submit).

Figures per scheduler: ``apps_per_s`` (applications ended / seconds from the first submission to the
last end), ``containers_allocated_per_s`` (the root queue's AggregateContainersAllocated over the
same time), the RM heap (``heap_used_mb_peak`` / ``_end``, sampled once a second from the RM's JMX;
the embedded cluster runs every daemon in one JVM, so this is the whole cluster JVM's heap, an upper
bound of the RM's), the scheduler's own allocate and commit times from ``CapacitySchedulerMetrics``,
and for tagged applications the share whose AM container ran inside R_j. The embedded cluster's
NodeManagers heartbeat every 250 ms and get one container per heartbeat (docs/minicluster.md), so a
6-node cluster allocates at most 24 containers/s under either scheduler: the throughput ratio tells
whether Corral's scheduler keeps up with that pace, not the schedulers' peak rates (benchmarks/
bench_java_plugins.py measures allocate's cost per call). Each scheduler's phase is bounded by a count
and a time (default 600 applications, 600 s; ``--quick``: 200 and 180 s, about 10 minutes with both
cluster starts on a quiet machine, longer under load); throughput is the applications that ended within the phase over
its length, so a phase cut by its time is still measured like a full one. ``apps`` in the JSON line
is the applications that ended in both phases.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from corral_yarn.cluster import Cluster
from corral_yarn.cluster.rm import AmContainerSpec, ResourceManager, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.minicluster import StartOptions, start_cluster, stop_cluster

ROOT_QUEUE = "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root"
SCHEDULER_METRICS = "Hadoop:service=ResourceManager,name=CapacitySchedulerMetrics"
CORRAL_METRICS = "Hadoop:service=ResourceManager,name=CorralSchedulerMetrics"
CORRAL_COUNTERS = ("RestrictedApplications", "RackSetFallbacks", "MalformedRackSetTags", "UngrantedTags")
MEMORY = "java.lang:type=Memory"
ENDED = ("appsCompleted", "appsFailed", "appsKilled")
QUICK = (200, 180.0)  # applications and seconds per scheduler with --quick


def jmx(rm: ResourceManager, bean: str) -> dict[str, Any]:
    """One JMX bean of the RM (its ``/jmx`` servlet), or {} when it has none of that name."""
    beans = rm.rest.get("/jmx", params={"qry": bean}).get("beans", [])
    return beans[0] if beans else {}


def ended(rm: ResourceManager) -> int:
    metrics = rm.rest.get("/ws/v1/cluster/metrics")["clusterMetrics"]
    return sum(int(metrics[k]) for k in ENDED)


class HeapSampler(threading.Thread):
    """Samples the RM JVM's used heap once a second until stopped."""

    def __init__(self, rm: ResourceManager) -> None:
        super().__init__(daemon=True)
        self.rm, self.samples, self.stop = rm, [], threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.samples.append(jmx(self.rm, MEMORY)["HeapMemoryUsage"]["used"] / 2**20)


def submission(i: int, run_id: str, racks: list[str], tagged_share: float, rng: random.Random) -> Submission:
    tagged = rng.random() < tagged_share
    rack_set = tuple(rng.sample(racks, rng.choice((1, 2)))) if tagged else ()
    return Submission(name=f"soak-{i}", tags=CorralTags(f"{run_id}x{i}", f"soak-{i}", rack_set), am=AmContainerSpec(command="true"),
                      priority=rng.randrange(0, 10), memory_mb=128, vcores=1, max_attempts=1)


def soak(description: dict[str, Any], apps: int, in_flight: int, tagged_share: float, duration_s: float, seed: int) -> dict[str, Any]:
    """Submit up to ``apps`` applications for at most ``duration_s``, keeping ``in_flight`` not ended; one scheduler's figures."""
    rm = Cluster.from_description(description, progress=False).rm
    racks = [r["name"] for r in description["racks"]]
    rng = random.Random(seed)
    run_id = f"soak{int(time.time())}"
    subs = [submission(i, run_id, racks, tagged_share, rng) for i in range(apps)]
    ended0, allocated0 = ended(rm), int(jmx(rm, ROOT_QUEUE)["AggregateContainersAllocated"])
    heap = HeapSampler(rm)
    heap.start()
    started = time.monotonic()
    reports = _submit_all(rm, subs, in_flight, lambda: ended(rm) - ended0, started + duration_s)
    while ended(rm) - ended0 < len(reports) and time.monotonic() < started + duration_s:
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    done = ended(rm) - ended0
    heap.stop.set()
    heap.join()
    allocated = int(jmx(rm, ROOT_QUEUE)["AggregateContainersAllocated"]) - allocated0
    scheduler, corral = jmx(rm, SCHEDULER_METRICS), jmx(rm, CORRAL_METRICS)
    return {
        "submitted": len(reports), "ended": done, "tagged": sum(1 for s in subs if s.tags.racks and s.name in reports),
        "seconds": round(elapsed, 1),
        "apps_per_s": round(done / elapsed, 3), "containers_allocated": allocated,
        "containers_allocated_per_s": round(allocated / elapsed, 3),
        "heap_used_mb_peak": round(max(heap.samples, default=0.0), 1),
        "heap_used_mb_end": round(jmx(rm, MEMORY)["HeapMemoryUsage"]["used"] / 2**20, 1),
        "allocate_avg_ms": scheduler.get("AllocateAvgTime"), "commit_success_avg_ms": scheduler.get("CommitSuccessAvgTime"),
        "tagged_am_in_rack_set_share": _in_rack_set(rm, description, subs, reports),
        "corral_metrics": {k: v for k, v in corral.items() if k in CORRAL_COUNTERS} or None,
    }


def _submit_all(rm: ResourceManager, subs: list[Submission], in_flight: int, ended_now: Callable[[], int],
                deadline: float) -> dict[str, str]:
    """Submit every application, never more than ``in_flight`` not ended; name -> application id."""
    reports: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        pending = list(subs)
        while pending and time.monotonic() < deadline:
            room = in_flight - (len(reports) - ended_now())
            if room <= 0:
                time.sleep(0.1)
                continue
            batch, pending = pending[:room], pending[room:]
            for s, report in zip(batch, pool.map(rm.submit, batch)):
                reports[s.name] = report.app_id
    return reports


def _in_rack_set(rm: ResourceManager, description: dict[str, Any], subs: list[Submission], reports: dict[str, str]) -> float | None:
    """Share of the tagged applications whose AM container ran on a node of their rack set."""
    rack_of = {n["host"]: r["name"] for r in description["racks"] for n in r["nodes"]}
    inside = total = 0
    for s in subs:
        if not s.tags.racks or s.name not in reports:
            continue
        attempts = rm.rest.get(f"/ws/v1/cluster/apps/{reports[s.name]}/appattempts")["appAttempts"]["appAttempt"]
        host = (attempts[0].get("nodeHttpAddress") or "").split(":")[0] if attempts else ""
        if host:
            total += 1
            inside += rack_of.get(host) in s.tags.racks
    return round(inside / total, 3) if total else None


def run_one(scheduler: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"soak-{scheduler}-") as base:
        options = StartOptions(base_dir=Path(base), exit_with=os.getpid(), scheduler=scheduler, timeout_s=args.start_timeout)
        description = start_cluster(options)
        try:
            print(f"soak: {scheduler} cluster up in {description['startup_ms'] / 1000:.0f} s", file=sys.stderr)
            return soak(description, args.apps, args.in_flight, args.tagged_share, args.duration, args.seed)
        finally:
            stop_cluster(options.description_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"at most {QUICK[0]} applications and {QUICK[1]:.0f} s per scheduler")
    parser.add_argument("--apps", type=int, default=600, help="applications per scheduler, at most (default 600)")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds per scheduler, at most (default 600)")
    parser.add_argument("--in-flight", type=int, default=24, help="applications not yet ended the client keeps (default 24)")
    parser.add_argument("--tagged-share", type=float, default=0.5, help="share of applications with a rack set (default 0.5)")
    parser.add_argument("--start-timeout", type=float, default=900.0, help="seconds to wait for each cluster to start (default 900)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.quick:
        args.apps, args.duration = QUICK
    results = {scheduler: run_one(scheduler, args) for scheduler in ("capacity", "corral")}
    stock, corral = results["capacity"], results["corral"]
    print(json.dumps({
        "benchmark": "soak", "apps": stock["ended"] + corral["ended"], "max_apps_per_scheduler": args.apps,
        "max_seconds_per_scheduler": args.duration, "in_flight": args.in_flight, "tagged_share": args.tagged_share,
        "throughput_ratio_corral_vs_stock": round(corral["apps_per_s"] / stock["apps_per_s"], 3) if stock["apps_per_s"] else None,
        "containers_ratio_corral_vs_stock": (round(corral["containers_allocated_per_s"] / stock["containers_allocated_per_s"], 3)
                                             if stock["containers_allocated_per_s"] else None),
        "stock": stock, "corral": corral, "cores": os.cpu_count(), "load_average_1min_at_end": round(os.getloadavg()[0], 2),
    }))


if __name__ == "__main__":
    main()
