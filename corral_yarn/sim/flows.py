"""The links of a folded-Clos cluster and the table of active (aggregate) flows.

Links, per rack a, split as MRCute splits a machine's NIC (thesis §3.1.2): ``up[a]`` and ``down[a]``
are the rack's links to the core, machines x B_M / O (less the share taken by background traffic,
§4.5.2); ``local[a]`` is what the pooled NICs have left for traffic inside the rack (full bisection
there), machines x (B_M - B_M / O).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from corral_yarn.contracts import ClusterSpec
from corral_yarn.sim.network import SHARING, FlowSet

Array = NDArray[np.float64]
LOCAL, UP, DOWN = range(3)
LINKS_PER_RACK = 3


@dataclass(frozen=True)
class Topology:
    racks: int
    machines: NDArray[np.int64]  # machines per rack
    nic: float
    capacity: Array  # per link, bytes/s

    @staticmethod
    def of(cluster: ClusterSpec, background_share: float = 0.0) -> Topology:
        """Rack uplink = machines x NIC / O (folded Clos); background traffic takes a share of it."""
        machines = np.array([len(r.machines) for r in cluster.racks], dtype=np.int64)
        nic = cluster.nic_bandwidth_bytes_per_s
        core_share = machines * nic / cluster.oversubscription
        local = machines * nic - core_share  # B_M - B_M / O per machine, as T_local assumes
        core = core_share * (1.0 - background_share)
        capacity = np.stack([local, core, core], axis=1).astype(np.float64).ravel()
        return Topology(len(machines), machines, nic, capacity)

    @staticmethod
    def link(rack: int, kind: int) -> int:
        return LINKS_PER_RACK * rack + kind


@dataclass(eq=False)
class Flow:
    """A cohort's transfer: ``volume`` bytes over ``links`` with ``coefs``, at most ``cap`` bytes/s."""

    links: NDArray[np.int64]
    coefs: Array
    volume: float
    weight: float
    cap: float
    coflow: int
    kind: str  # "read", "shuffle" or "write"
    cross_rack_fraction: float
    on_done: Callable[[float], None]


class FlowTable:
    """Active flows with their rates; rates are recomputed only when the set of flows changes."""

    def __init__(self, topology: Topology, sharing: str) -> None:
        self.topology = topology
        self.allocate = SHARING[sharing]
        self.flows: list[Flow] = []
        self.rate = np.zeros(0)
        self.remaining = np.zeros(0)
        self.dirty = False
        self.recomputations = 0
        self.cross_rack_bytes: dict[str, float] = {"read": 0.0, "shuffle": 0.0, "write": 0.0}
        self.moved_bytes: dict[str, float] = {"read": 0.0, "shuffle": 0.0, "write": 0.0}

    def add(self, flow: Flow) -> None:
        self.flows.append(flow)
        self.remaining = np.append(self.remaining, flow.volume)
        self.dirty = True

    def _recompute(self) -> None:
        flows = self.flows
        sizes = np.array([f.links.size for f in flows], dtype=np.int64)
        fs = FlowSet(
            rows=np.repeat(np.arange(len(flows)), sizes),
            cols=np.concatenate([f.links for f in flows]) if flows else np.zeros(0, np.int64),
            coef=np.concatenate([f.coefs for f in flows]) if flows else np.zeros(0),
            weight=np.array([f.weight for f in flows]),
            cap=np.array([f.cap for f in flows]),
            remaining=self.remaining.copy(),
            coflow=np.array([f.coflow for f in flows], dtype=np.int64),
        )
        self.rate = self.allocate(self.topology.capacity, fs)
        self.recomputations += 1
        self.dirty = False

    def next_finish(self, now: float) -> float:
        """Absolute time of the next flow completion at the current rates (inf if none)."""
        if not self.flows:
            return math.inf
        if self.dirty:
            self._recompute()
        with np.errstate(divide="ignore"):
            t = np.where(self.rate > 0, self.remaining / self.rate, np.inf)
        return now + float(t.min())

    def advance(self, dt: float) -> None:
        if self.flows and dt > 0:
            self.remaining -= self.rate * dt

    def pop_finished(self, now: float) -> list[Flow]:
        """Remove the flows that delivered all their bytes and account for them."""
        if not self.flows:
            return []
        volume = np.array([f.volume for f in self.flows])
        done = self.remaining <= 1e-9 * volume + 1e-3
        if not done.any():
            return []
        finished = [f for f, d in zip(self.flows, done) if d]
        self.flows = [f for f, d in zip(self.flows, done) if not d]
        self.remaining = self.remaining[~done]
        self.rate = self.rate[~done]
        self.dirty = True
        for f in finished:
            self.moved_bytes[f.kind] += f.volume
            self.cross_rack_bytes[f.kind] += f.volume * f.cross_rack_fraction
        return finished
