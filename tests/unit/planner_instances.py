"""Hypothesis strategies for planner inputs: latency tables L_j(r) (J x R), arrival times A_j and slot demands d_j(r)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

from corral_yarn.contracts import JobSpec, StageSpec
from corral_yarn.model import latency_table
from corral_yarn.planner.schedule import SlotDemand
from corral_yarn.workloads import example_cluster

Instance = tuple[NDArray[np.float64], NDArray[np.float64]]


@st.composite
def _mrcute_job(draw: st.DrawFn, index: int) -> JobSpec:
    """A random MapReduce job; about one in three is map-only (zero shuffle)."""
    map_tasks = draw(st.integers(1, 400))
    map_only = draw(st.integers(0, 2)) == 0
    stage = StageSpec(
        name="main",
        input_bytes=float(map_tasks * draw(st.sampled_from([1e6, 64e6, 128e6]))),
        map_selectivity=None if map_only else draw(st.sampled_from([0.25, 1.0, 4.0])),
        shuffle_bytes=0.0 if map_only else None,
        output_bytes=0.0 if map_only else None,
        reduce_selectivity=None if map_only else draw(st.sampled_from([0.25, 1.0, 4.0])),
        map_tasks=map_tasks,
        reduce_tasks=0 if map_only else draw(st.integers(1, 100)),
        map_rate_bytes_per_s=draw(st.sampled_from([20e6, 50e6])),
        reduce_rate_bytes_per_s=draw(st.sampled_from([20e6, 50e6])),
    )
    return JobSpec(name=f"j{index}", stages=[stage])


@st.composite
def latencies(draw: st.DrawFn, n_jobs: int, n_racks: int) -> NDArray[np.float64]:
    """Tables of every kind the planner must handle, including ties and non-monotone L_j."""
    kind = draw(st.sampled_from(["ties", "floats", "monotone", "identical", "mrcute"]))
    shape = (n_jobs, n_racks)
    if kind == "mrcute":
        cluster = example_cluster(racks=n_racks, machines_per_rack=draw(st.integers(1, 4)))
        jobs = [draw(_mrcute_job(i)) for i in range(n_jobs)]
        alpha = draw(st.sampled_from([0.0, 1e-9]))
        return latency_table(jobs, cluster, alpha)[1]
    if kind == "floats":  # distinct values, rows in any order (non-monotone)
        return np.array(draw(st.lists(st.floats(0.0, 100.0), min_size=n_jobs * n_racks, max_size=n_jobs * n_racks))).reshape(shape)
    ints = np.array(draw(st.lists(st.integers(0, 4), min_size=n_jobs * n_racks, max_size=n_jobs * n_racks)), dtype=np.float64).reshape(shape)
    if kind == "monotone":
        return -np.sort(-ints, axis=1) + 1.0
    if kind == "identical":
        return np.repeat(ints[:1], n_jobs, axis=0)
    return ints


@st.composite
def arrivals(draw: st.DrawFn, n_jobs: int) -> NDArray[np.float64]:
    """All equal, a few distinct values (ties), or arbitrary times."""
    values = draw(st.one_of(st.just([0.0] * n_jobs), st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=n_jobs, max_size=n_jobs), st.lists(st.floats(0.0, 50.0), min_size=n_jobs, max_size=n_jobs)))
    return np.array(values, dtype=np.float64)


@st.composite
def instances(draw: st.DrawFn, max_jobs: int = 7, max_racks: int = 6) -> Instance:
    n_jobs = draw(st.integers(1, max_jobs))
    n_racks = draw(st.integers(1, max_racks))
    return draw(latencies(n_jobs, n_racks)), draw(arrivals(n_jobs))


NetworkInstance = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], list]


def _wavy(latency_us: float) -> float:
    """A performance-latency function that falls, then rises again (the planner takes its running minimum)."""
    return 1.0 if latency_us < 25 else 0.5 if latency_us < 120 else 0.8


@st.composite
def network_instances(draw: st.DrawFn, max_jobs: int = 6, max_racks: int = 5) -> NetworkInstance:
    """An instance plus a rack-pair latency matrix (µs; ties, asymmetric entries, a non-zero diagonal) and
    per job a performance-latency function or None (latency-insensitive)."""
    from corral_yarn.nomora.perf import PUBLISHED

    latency, arrival = draw(instances(max_jobs, max_racks))
    n_jobs, n_racks = latency.shape
    cells = draw(st.lists(st.sampled_from([0.0, 10.0, 30.0, 45.0, 60.0, 200.0, 900.0, 2500.0]), min_size=n_racks * n_racks, max_size=n_racks * n_racks))
    rack_us = np.array(cells).reshape(n_racks, n_racks)
    functions = [None, _wavy, *PUBLISHED.values()]
    perf = [draw(st.sampled_from(functions)) for _ in range(n_jobs)]
    return latency, arrival, rack_us, perf


@st.composite
def slot_demands(draw: st.DrawFn, shape: tuple[int, int]) -> SlotDemand:
    """d_j(r) in 1..S for a rack of S slots: arbitrary, falling with r (as ``build.slot_demand``), or whole racks;
    every job split across racks holding their uplinks (the default), or only some (as map-only jobs do not)."""
    capacity = draw(st.integers(1, 6))
    values = np.array(draw(st.lists(st.integers(1, capacity), min_size=shape[0] * shape[1], max_size=shape[0] * shape[1])), dtype=np.int64).reshape(shape)
    kind = draw(st.sampled_from(["any", "falling", "whole"]))
    if kind == "falling":
        values = -np.sort(-values, axis=1)
    elif kind == "whole":
        values = np.full(shape, capacity, dtype=np.int64)
    core = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=shape[0], max_size=shape[0]).map(lambda flags: np.array(flags, dtype=bool))))
    return SlotDemand(values, capacity, core=core)
