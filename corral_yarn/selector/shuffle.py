"""The shuffle of a job inside its virtual cluster, as max-min fair flows (thesis §4.4.1).

The simulator of §4.4.1 runs the all-to-all shuffle as N^2 flows between the job's N VMs at max-min
fair rates; the shuffle ends when the last flow ends. A virtual cluster guarantees each VM B bytes/s
to the virtual switch (the hose model), whatever the physical placement, so the flows share the
VMs' virtual links only: B out of every VM, and Min{B_D, B} into every reducer (the fetched bytes are
written to disk, §3.1.2). Map output is spread evenly over the N VMs and each VM runs one reducer
per wave, so the VMs fall into two classes per wave -- with a reducer (h of them) or without -- and
the N^2 flows into two groups of identical flows; progressive filling over those groups gives the
exact max-min rates (the simulator's solver, :func:`~corral_yarn.sim.network.max_min`). After the fetch, each reducer merges its partition from disk at B_D.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from corral_yarn.sim.network import FlowSet, max_min

_EPS = 1e-12


def group_flows(flows_per_link: NDArray[np.float64]) -> FlowSet:
    """The flow groups as flows of the max-min solver: one per group, crossing a link of class l with
    coefficient ``flows_per_link[l, g]`` (how many of its flows cross one such link), so its rate is
    the rate of each of its flows."""
    links, groups = np.nonzero(flows_per_link)
    n = flows_per_link.shape[1]
    return FlowSet(rows=groups, cols=links, coef=flows_per_link[links, groups], weight=np.ones(n),
                   cap=np.full(n, np.inf), remaining=np.zeros(n), coflow=np.zeros(n, dtype=np.int64))


def transfer_seconds(flows_per_link: NDArray[np.float64], capacity: NDArray[np.float64], flow_bytes: NDArray[np.float64]) -> float:
    """When the last flow ends, re-sharing the links each time a group of flows finishes."""
    flows = group_flows(flows_per_link)
    left = flow_bytes.astype(np.float64).copy()
    active = left > 0
    elapsed = 0.0
    while active.any():
        rate = max_min(capacity, flows, cap=np.where(active, np.inf, 0.0))
        step = float(np.min(left[active] / rate[active]))
        elapsed += step
        left = np.where(active, left - rate * step, left)
        active &= left > _EPS * np.maximum(flow_bytes, 1.0)
    return elapsed


def wave_seconds(vms: int, reducers: int, partition_bytes: float, bandwidth: float, disk: float) -> float:
    """One reduce wave: ``reducers`` VMs (one reducer each) fetch from all ``vms``, then merge."""
    flow = partition_bytes / vms  # each VM holds 1/N of every partition
    h, others = reducers, vms - reducers
    # link classes: out of a reducer VM, out of another VM, into a reducer VM;
    # flow groups: reducer VM -> other reducer VMs, other VM -> reducer VMs
    flows_per_link = np.array([[h - 1, 0], [0, h], [h - 1, others]], dtype=np.float64)
    capacity = np.array([bandwidth, bandwidth, min(disk, bandwidth)])
    groups = np.array([flow if h > 1 else 0.0, flow if others > 0 else 0.0])  # an empty group moves nothing
    fetch = transfer_seconds(flows_per_link, capacity, groups)
    return fetch + partition_bytes / disk


def shuffle_seconds(vms: int, reduce_tasks: int, shuffle_bytes: float, bandwidth: float, disk: float) -> float:
    """All reduce waves of a stage: full waves of N reducers, then the remainder."""
    if reduce_tasks == 0 or shuffle_bytes <= 0:
        return 0.0
    partition = shuffle_bytes / reduce_tasks
    full, last = divmod(reduce_tasks, vms)
    seconds = full * wave_seconds(vms, vms, partition, bandwidth, disk) if full else 0.0
    return seconds + (wave_seconds(vms, last, partition, bandwidth, disk) if last else 0.0)
