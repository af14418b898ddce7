"""Oktopus virtual-cluster allocation on a tree datacenter (Ballani et al., SIGCOMM 2011; thesis §4.2).

A virtual cluster <N, B> is N VMs, each joined to a virtual switch by a link of B bytes/s. A physical
link with m of the N VMs below it must then carry min(m, N - m) x B (the hose model), so a node
whose uplink has ``r = residual // B`` "minority VMs" of room can hold m VMs iff
``min(m, N - m) <= r``. That set is not an interval (m <= r or m >= N - r), which is why a plain
"largest count per subtree" greedy can miss allocations. The exact test used here rests on one
fact: a node that uses the "m >= N - r" branch holds more than N/2 VMs, so all such nodes lie on one
root-to-leaf path. Each node then needs just three numbers, computed bottom-up with numpy:

* ``a`` -- the most VMs it can hold with every node below it in the "m <= r" branch (its feasible
  counts include all of 0..a: removing a VM never breaks ``m <= r``);
* ``hu`` -- the most VMs its children can hold together, ignoring its own uplink:
  ``min(N, sum(a_c) + max(h_c - a_c))`` (at most one child may hold more than its ``a``);
* ``h`` -- the most VMs it can hold through its uplink: ``hu`` if ``hu >= N - r`` else ``a``.

A subtree can host the whole request iff its ``hu >= N``. Like Oktopus we allocate in the lowest
level that can host it, then fill top-down: a node filling exactly ``h`` gives its best child exactly
its ``h`` and fills the rest from the other children's ``a``; any other node fills from its
children's ``a``, largest first. Link and slot state are integers (bytes/s, VMs), so releasing an
allocation restores the state exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from corral_yarn.contracts import ClusterSpec
from corral_yarn.errors import InputError

Ints = NDArray[np.int64]
LEVEL_NAMES = ("machine", "rack", "pod")


@dataclass(frozen=True)
class TreeTopology:
    """A tree: ``fanout[l]`` children per node of level l + 1, bottom-up; the top node is the core.

    ``fanout=(40, 10, 40)`` is 40 machines per rack, 10 racks per pod, 40 pods (16,000 machines).
    ``oversubscription[l - 1]`` divides the uplink of a level-l node (l >= 1): its capacity is the
    sum of its children's uplinks over that ratio. Machines have ``vm_slots`` VM slots and a NIC.
    """

    fanout: tuple[int, ...]
    vm_slots: int
    nic_bytes_per_s: int
    oversubscription: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.fanout or min(self.fanout) < 1:
            raise InputError("every level needs at least one child", field="fanout")
        if len(self.oversubscription) != len(self.fanout) - 1:
            raise InputError(f"give {len(self.fanout) - 1} ratios, one per level above machines", field="oversubscription")
        if not all(1.0 <= o < math.inf for o in self.oversubscription):  # written so that NaN fails too
            raise InputError(f"must be finite and >= 1, got {self.oversubscription}", field="oversubscription")
        if self.vm_slots < 1 or self.nic_bytes_per_s < 1:
            raise InputError("vm_slots and nic_bytes_per_s must be positive", field="vm_slots")

    @property
    def levels(self) -> int:
        """Levels with an uplink (machines, racks, pods); the core above them has none."""
        return len(self.fanout)

    def nodes(self, level: int) -> int:
        return int(np.prod(self.fanout[level:]))

    @property
    def machines(self) -> int:
        return self.nodes(0)

    @property
    def vms(self) -> int:
        return self.machines * self.vm_slots

    def slot_capacity(self, level: int) -> int:
        return self.vm_slots * int(np.prod(self.fanout[:level]))

    def link_capacity(self, level: int) -> int:
        capacity = float(self.nic_bytes_per_s)
        for lvl in range(1, level + 1):
            capacity = capacity * self.fanout[lvl - 1] / self.oversubscription[lvl - 1]
        return int(capacity)

    def level_name(self, level: int) -> str:
        return LEVEL_NAMES[level] if level < len(LEVEL_NAMES) else f"level-{level}"


def topology_of(spec: ClusterSpec) -> TreeTopology:
    """A cluster as the selector's tree (§4.2): its racks under one core, a VM slot per task slot of a
    machine, rack uplinks of machines x NIC / O. Uneven racks count as the smallest (as the planner does)."""
    return TreeTopology(fanout=(spec.machines_per_rack, len(spec.racks)),
                    vm_slots=min(spec.map_slots_per_machine, spec.reduce_slots_per_machine),
                    nic_bytes_per_s=int(spec.nic_bandwidth_bytes_per_s), oversubscription=(float(spec.oversubscription or 1.0),))


@dataclass(frozen=True)
class VirtualCluster:
    """The request <N, B>: N VMs with B bytes/s each to a virtual switch (thesis §3.1.2)."""

    vms: int
    bandwidth: int

    def __post_init__(self) -> None:
        if self.vms < 1 or self.bandwidth < 1:
            raise InputError(f"a virtual cluster needs N >= 1 and B >= 1 byte/s, got <{self.vms}, {self.bandwidth}>")


@dataclass(frozen=True)
class Allocation:
    """Where a virtual cluster sits: per level, the nodes holding its VMs and how many each holds."""

    request: VirtualCluster
    host_level: int
    nodes: tuple[Ints, ...]
    counts: tuple[Ints, ...]

    def reserved(self, level: int) -> Ints:
        """Bandwidth reserved on each node's uplink: min(m, N - m) x B below the host, else 0."""
        if level >= self.host_level:
            return np.zeros_like(self.counts[level])
        m, n = self.counts[level], self.request.vms
        return np.minimum(m, n - m) * self.request.bandwidth

    @property
    def machines(self) -> dict[int, int]:
        return dict(zip(self.nodes[0].tolist(), self.counts[0].tolist()))


@dataclass
class _Capacity:
    """Bottom-up capacities of every node of one level for one request (see the module docstring)."""

    a: Ints
    h: Ints
    hu: Ints


@dataclass
class Datacenter:
    """Residual VM slots and link bandwidth of a tree, as numpy arrays per level."""

    topology: TreeTopology
    free_slots: list[Ints] = field(init=False)
    free_link: list[Ints] = field(init=False)
    _slot_capacity: list[int] = field(init=False, repr=False)
    _link_capacity: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        t = self.topology
        self._slot_capacity = [t.slot_capacity(lvl) for lvl in range(t.levels)]
        self._link_capacity = [t.link_capacity(lvl) for lvl in range(t.levels)]
        self.free_slots = [np.full(t.nodes(lvl), self._slot_capacity[lvl], np.int64) for lvl in range(t.levels)]
        self.free_link = [np.full(t.nodes(lvl), self._link_capacity[lvl], np.int64) for lvl in range(t.levels)]

    @classmethod
    def with_residual(cls, topology: TreeTopology, machine_slots: Ints, links: list[Ints]) -> Datacenter:
        """A datacenter in a given state: free slots per machine and free bandwidth per uplink."""
        dc = cls(topology)
        dc.free_slots[0] = np.asarray(machine_slots, np.int64).copy()
        for lvl in range(1, topology.levels):
            dc.free_slots[lvl] = dc.free_slots[lvl - 1].reshape(-1, topology.fanout[lvl - 1]).sum(axis=1)
        dc.free_link = [np.asarray(x, np.int64).copy() for x in links]
        return dc

    def _children(self, values: Ints, level: int) -> Ints:
        """Values of level ``level - 1`` nodes as a (nodes at ``level``) x fanout matrix."""
        return values.reshape(-1, self.topology.fanout[level - 1])

    def capacities(self, request: VirtualCluster) -> list[_Capacity]:
        """a, h, hu for every node of every level, the core last (its ``a`` and ``h`` equal ``hu``)."""
        n, b, slots = request.vms, request.bandwidth, self.topology.vm_slots
        k = np.minimum(self.free_slots[0], n) if n < slots else self.free_slots[0]
        r = self.free_link[0] // b  # r above N changes nothing: a <= k <= N, and N - r < 0 passes
        a = np.minimum(k, r)
        # a machine can hold more than its a only by holding over N/2 VMs, i.e. when N < 2 x slots
        h = np.where(k >= n - r, k, a) if n < 2 * slots else a
        caps = [_Capacity(a=a, h=h, hu=k)]
        for lvl in range(1, self.topology.levels + 1):
            below = caps[-1]
            total = np.minimum(self._children(below.a, lvl).sum(axis=1), n)
            hu = np.minimum(total + self._children(below.h - below.a, lvl).max(axis=1), n) if below.h is not below.a else total
            if lvl == self.topology.levels:
                caps.append(_Capacity(a=hu, h=hu, hu=hu))
                break
            r = self.free_link[lvl] // b
            a = np.minimum(total, r)
            caps.append(_Capacity(a=a, h=np.where(hu >= n - r, hu, a), hu=hu))
        return caps

    def find(self, request: VirtualCluster) -> Allocation | None:
        """An allocation of the request if one exists (the state is not changed), else None."""
        caps = self.capacities(request)
        if caps[-1].hu[0] < request.vms:
            return None
        for lvl, cap in enumerate(caps):
            hosts = np.flatnonzero(cap.hu >= request.vms)
            if hosts.size:
                return self._fill(request, caps, lvl, int(hosts[0]))
        return None

    def _fill(self, request: VirtualCluster, caps: list[_Capacity], host_level: int, host: int) -> Allocation:
        n = request.vms
        nodes: list[Ints] = [np.empty(0, np.int64)] * self.topology.levels
        counts: list[Ints] = [np.empty(0, np.int64)] * self.topology.levels
        parents, targets, heavy = np.array([host]), np.array([n]), host
        for lvl in range(host_level, 0, -1):
            if lvl < self.topology.levels:
                nodes[lvl], counts[lvl] = parents, targets
            parents, targets, heavy = self._fill_children(caps[lvl - 1], lvl, parents, targets, heavy)
        nodes[0], counts[0] = parents, targets
        for lvl in range(host_level + 1, self.topology.levels):  # the host's ancestors hold all N
            nodes[lvl], counts[lvl] = np.array([host // int(np.prod(self.topology.fanout[host_level:lvl]))]), np.array([n])
        return Allocation(request, host_level, tuple(nodes), tuple(counts))

    def _fill_children(self, child: _Capacity, level: int, parents: Ints, targets: Ints, heavy: int) -> tuple[Ints, Ints, int]:
        """Split each parent's target over its children's ``a``, largest first.

        Only ``heavy`` (the node on the path that was given an ``h``) may need more than its children's
        ``a`` add up to; then its child with the largest h - a takes exactly its h.
        """
        fanout = self.topology.fanout[level - 1]
        index = parents[:, None] * fanout + np.arange(fanout)
        room = child.a[index].copy()
        given = np.zeros_like(room)
        next_heavy = -1
        row = int(np.flatnonzero(parents == heavy)[0]) if heavy >= 0 else -1
        if row >= 0 and targets[row] > room[row].sum():
            best = int(np.argmax(child.h[index[row]] - child.a[index[row]]))
            given[row, best] = child.h[index[row, best]]
            room[row, best] = 0
            next_heavy = int(index[row, best])
        order = np.argsort(-room, axis=1, kind="stable")  # largest first: the fewest links touched
        rows = np.arange(len(parents))[:, None]
        sorted_room = room[rows, order]
        left = (targets - given.sum(axis=1))[:, None]
        given[rows, order] += np.clip(left - (np.cumsum(sorted_room, axis=1) - sorted_room), 0, sorted_room)
        used = given > 0
        return index[used], given[used], next_heavy

    def imbalance(self, allocation: Allocation) -> float:
        """Sum of (1 - u)^2 over the machines, racks, pods and links the allocation touches (§4.2.1)."""
        total = 0.0
        for lvl in range(self.topology.levels):
            nodes, counts = allocation.nodes[lvl], allocation.counts[lvl]
            total += float(np.sum(((self.free_slots[lvl][nodes] - counts) / self._slot_capacity[lvl]) ** 2))
            if lvl < allocation.host_level:  # every node below the host reserves min(m, N - m) x B > 0
                left = self.free_link[lvl][nodes] - allocation.reserved(lvl)
                total += float(np.sum((left / self._link_capacity[lvl]) ** 2))
        return total

    def commit(self, allocation: Allocation) -> None:
        self._apply(allocation, -1)

    def release(self, allocation: Allocation) -> None:
        """Give back the slots and bandwidth of a finished virtual cluster."""
        self._apply(allocation, +1)

    def _apply(self, allocation: Allocation, sign: int) -> None:
        for lvl in range(self.topology.levels):
            nodes = allocation.nodes[lvl]
            self.free_slots[lvl][nodes] += sign * allocation.counts[lvl]
            self.free_link[lvl][nodes] += sign * allocation.reserved(lvl)

    @property
    def occupied_vms(self) -> int:
        return self.topology.vms - int(self.free_slots[0].sum())
