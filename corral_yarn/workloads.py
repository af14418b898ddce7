"""Seeded example inputs: a cluster like the thesis's testbed and W1-like workloads (§4.5.2)."""

from __future__ import annotations

import numpy as np

from corral_yarn.contracts import BLOCK_BYTES, ClusterSpec, JobSpec, Rack, StageSpec, Workload

GB = 1e9
# W1 (§4.5.2): small (<= 50 tasks), medium (<= 500), large (>= 1000); our mix, chosen like Quantcast's
# mostly-small workloads, is set here and documented in docs/planner.md.
SIZE_CLASSES = {"small": (5, 50, 0.6), "medium": (51, 500, 0.3), "large": (1000, 2000, 0.1)}


def example_cluster(
    racks: int = 7,
    machines_per_rack: int = 30,
    oversubscription: float = 5.0,
    map_slots: int = 8,
    reduce_slots: int = 4,
    nic_bytes_per_s: float = 1.25 * GB,
    name: str | None = None,
) -> ClusterSpec:
    """The thesis's testbed by default (§4.5.2): 7 racks x 30 machines, 10 Gbps NICs, 5:1 to the core."""
    return ClusterSpec(
        name=name or f"example-{racks}x{machines_per_rack}",
        racks=[Rack(name=f"/rack-{i:02d}", machines=[f"r{i:02d}m{k:02d}" for k in range(machines_per_rack)]) for i in range(racks)],
        map_slots_per_machine=map_slots,
        reduce_slots_per_machine=reduce_slots,
        nic_bandwidth_bytes_per_s=nic_bytes_per_s,
        disk_bandwidth_bytes_per_s=0.1 * GB,
        oversubscription=oversubscription,
    )


def _w1_job(rng: np.random.Generator, index: int, arrival_s: float) -> JobSpec:
    size = rng.choice(list(SIZE_CLASSES), p=[p for _, _, p in SIZE_CLASSES.values()])
    low, high, _ = SIZE_CLASSES[size]
    tasks = int(rng.integers(low, high + 1))
    reduce_tasks = max(1, tasks // 5)
    map_tasks = max(1, tasks - reduce_tasks)
    map_sel, reduce_sel = np.exp(rng.uniform(np.log(0.25), np.log(4.0), size=2))  # 4:1 .. 1:4
    stage = StageSpec(
        name="main",
        input_bytes=float(map_tasks * BLOCK_BYTES),
        map_selectivity=float(map_sel),
        reduce_selectivity=float(reduce_sel),
        map_tasks=map_tasks,
        reduce_tasks=reduce_tasks,
        map_rate_bytes_per_s=float(rng.uniform(20e6, 80e6)),
        reduce_rate_bytes_per_s=float(rng.uniform(20e6, 80e6)),
    )
    return JobSpec(name=f"w1-{size}-{index:04d}", arrival_s=arrival_s, stages=[stage], recurring_key=f"w1-{index:04d}")


def w1_like(n_jobs: int = 50, seed: int = 0, arrival_span_s: float = 0.0) -> Workload:
    """A seeded W1-like workload; arrivals uniform over ``arrival_span_s`` (0 = a batch)."""
    rng = np.random.default_rng(seed)
    arrivals = np.sort(rng.uniform(0.0, arrival_span_s, size=n_jobs)) if arrival_span_s > 0 else np.zeros(n_jobs)
    return Workload(jobs=[_w1_job(rng, i, float(a)) for i, a in enumerate(arrivals)])
