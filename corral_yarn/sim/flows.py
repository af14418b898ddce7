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
class RackLinks:
    """The links the simulator shares among flows, three per rack of the two-tier cluster (§4.5.2):
    the rack's fabric (LOCAL), its uplink to the core (UP) and its downlink (DOWN)."""

    racks: int
    machines: NDArray[np.int64]  # machines per rack
    nic: float
    capacity: Array  # per link, bytes/s

    @staticmethod
    def of(cluster: ClusterSpec, background_share: float = 0.0) -> RackLinks:
        """Rack uplink = machines x NIC / O (folded Clos); background traffic takes a share of it."""
        machines = np.array([len(r.machines) for r in cluster.racks], dtype=np.int64)
        nic = cluster.nic_bandwidth_bytes_per_s
        core_share = machines * nic / cluster.oversubscription
        local = machines * nic - core_share  # B_M - B_M / O per machine, as T_local assumes
        core = core_share * (1.0 - background_share)
        capacity = np.stack([local, core, core], axis=1).astype(np.float64).ravel()
        return RackLinks(len(machines), machines, nic, capacity)

    @staticmethod
    def link(rack: int, kind: int) -> int:
        return LINKS_PER_RACK * rack + kind


def effective_cluster(cluster: ClusterSpec, background_share: float) -> ClusterSpec:
    """The cluster as its jobs see it when background traffic takes ``background_share`` of every
    rack's core link (§4.5.2): what a Corral operator gives the planner.

    MRCute reads bandwidth only as B_M / O to the core and B_M - B_M / O inside the rack (§3.1.2), so
    the view keeps the in-rack share and lowers the core share to B_M / O x (1 - share):
    B_M' = B_M / O x (1 - share) + B_M - B_M / O and O' = B_M' / (B_M / O x (1 - share)); the rack's
    core bandwidth, hence alpha, drops by the same share. Same name and racks, so plans still apply.
    """
    if background_share == 0.0:
        return cluster
    nic = cluster.nic_bandwidth_bytes_per_s
    core = nic / cluster.oversubscription * (1.0 - background_share)
    seen = nic - nic / cluster.oversubscription + core
    fields = cluster.model_dump(exclude={"rack_core_bandwidth_bytes_per_s"})
    return ClusterSpec.model_validate({**fields, "nic_bandwidth_bytes_per_s": seen, "oversubscription": seen / core})


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


KINDS = ("read", "shuffle", "write")


class FlowTable:
    """Active flows with their rates; rates are recomputed only when the set of flows changes.

    Flows live in flat numpy arrays (one row per flow, one entry per flow x link) so that adding,
    finishing and re-rating them costs numpy operations, not Python loops over every flow.
    """

    def __init__(self, topology: RackLinks, sharing: str) -> None:
        self.topology = topology
        self.allocate = SHARING[sharing]
        self.objects = np.empty(0, dtype=object)
        self.weight, self.cap, self.volume, self.remaining, self.rate, self.cross = (np.zeros(0) for _ in range(6))
        self.coflow, self.kind = np.zeros(0, np.int64), np.zeros(0, np.int64)
        self.rows, self.cols, self.coefs = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        self.pending: list[Flow] = []
        self.dirty = False
        self.recomputations = 0
        self.cross_rack_bytes: dict[str, float] = dict.fromkeys(KINDS, 0.0)
        self.moved_bytes: dict[str, float] = dict.fromkeys(KINDS, 0.0)

    @property
    def busy(self) -> bool:
        return bool(self.pending) or self.objects.size > 0

    def add(self, flow: Flow) -> None:
        self.pending.append(flow)
        self.dirty = True

    def _absorb(self) -> None:
        new, n = self.pending, self.objects.size
        if not new:
            return
        self.pending = []
        objects = np.empty(len(new), dtype=object)
        objects[:] = new
        self.objects = np.concatenate([self.objects, objects])
        for name, values in (("weight", [f.weight for f in new]), ("cap", [f.cap for f in new]), ("volume", [f.volume for f in new]),
                             ("remaining", [f.volume for f in new]), ("rate", [0.0] * len(new)), ("cross", [f.cross_rack_fraction for f in new])):
            setattr(self, name, np.concatenate([getattr(self, name), np.array(values, dtype=np.float64)]))
        self.coflow = np.concatenate([self.coflow, np.array([f.coflow for f in new], dtype=np.int64)])
        self.kind = np.concatenate([self.kind, np.array([KINDS.index(f.kind) for f in new], dtype=np.int64)])
        sizes = [f.links.size for f in new]
        self.rows = np.concatenate([self.rows, np.repeat(np.arange(n, n + len(new)), sizes)])
        self.cols = np.concatenate([self.cols, *(f.links for f in new)])
        self.coefs = np.concatenate([self.coefs, *(f.coefs for f in new)])

    def _recompute(self) -> None:
        self._absorb()
        fs = FlowSet(self.rows, self.cols, self.coefs, self.weight, self.cap, self.remaining.copy(), self.coflow)
        self.rate = self.allocate(self.topology.capacity, fs)
        self.recomputations += 1
        self.dirty = False

    def next_finish(self, now: float) -> float:
        """Absolute time of the next flow completion at the current rates (inf if none)."""
        if self.dirty:
            self._recompute()
        if self.objects.size == 0:
            return math.inf
        with np.errstate(divide="ignore"):
            t = np.where(self.rate > 0, self.remaining / self.rate, np.inf)
        return now + float(t.min())

    def advance(self, dt: float) -> None:
        if self.objects.size and dt > 0:
            self.remaining -= self.rate * dt

    def pop_finished(self, now: float) -> list[Flow]:
        """Remove the flows that delivered all their bytes and account for them."""
        if self.objects.size == 0:
            return []
        done = self.remaining <= 1e-9 * self.volume + 1e-3
        if not done.any():
            return []
        finished = list(self.objects[done])
        moved = np.bincount(self.kind[done], self.volume[done], minlength=len(KINDS))
        crossed = np.bincount(self.kind[done], (self.volume * self.cross)[done], minlength=len(KINDS))
        for k, kind in enumerate(KINDS):
            self.moved_bytes[kind] += float(moved[k])
            self.cross_rack_bytes[kind] += float(crossed[k])
        keep = ~done
        new_index = np.cumsum(keep) - 1
        entry_keep = keep[self.rows]
        self.rows = new_index[self.rows[entry_keep]]
        self.cols, self.coefs = self.cols[entry_keep], self.coefs[entry_keep]
        self.objects = self.objects[keep]
        for name in ("weight", "cap", "volume", "remaining", "rate", "cross", "coflow", "kind"):
            setattr(self, name, getattr(self, name)[keep])
        self.dirty = True
        return finished
