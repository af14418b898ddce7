"""Oktopus allocation on small trees: found whenever one exists (brute force), valid, released exactly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.errors import InputError
from corral_yarn.selector.tree import Allocation, Datacenter, TreeTopology, VirtualCluster

FANOUTS = [(4,), (3, 2), (2, 2, 2), (2, 3)]


def _node_counts(topology: TreeTopology, machine_counts: np.ndarray) -> list[np.ndarray]:
    """Per level, VMs under every node, for each row of machine counts."""
    levels = [machine_counts]
    for lvl in range(1, topology.levels):
        levels.append(levels[-1].reshape(machine_counts.shape[0], -1, topology.fanout[lvl - 1]).sum(axis=2))
    return levels


def _exists(dc: Datacenter, request: VirtualCluster) -> bool:
    """Brute force: does any placement of N VMs on machines respect every slot and uplink?"""
    t, n, b = dc.topology, request.vms, request.bandwidth
    ranges = [range(min(int(k), n) + 1) for k in dc.free_slots[0]]
    combos = np.array(list(itertools.product(*ranges)), dtype=np.int64)
    combos = combos[combos.sum(axis=1) == n]
    if not len(combos):
        return False
    ok = np.ones(len(combos), bool)
    for lvl, m in enumerate(_node_counts(t, combos)):
        ok &= (np.minimum(m, n - m) * b <= dc.free_link[lvl]).all(axis=1)
    return bool(ok.any())


def _check_valid(dc: Datacenter, alloc: Allocation) -> None:
    t, n = dc.topology, alloc.request.vms
    machine = np.zeros(t.machines, np.int64)
    machine[alloc.nodes[0]] = alloc.counts[0]
    assert machine.sum() == n
    assert (machine <= dc.free_slots[0]).all()
    for lvl, m in enumerate(_node_counts(t, machine[None, :])):
        m = m[0]
        assert (m[alloc.nodes[lvl]] == alloc.counts[lvl]).all()
        assert set(np.flatnonzero(m).tolist()) == set(alloc.nodes[lvl].tolist())
        needed = np.minimum(m, n - m) * alloc.request.bandwidth
        assert (needed <= dc.free_link[lvl]).all()
        reserved = np.zeros_like(m)
        reserved[alloc.nodes[lvl]] = alloc.reserved(lvl)
        assert (reserved == needed).all()


@st.composite
def _states(draw):
    fanout = draw(st.sampled_from(FANOUTS))
    slots = draw(st.integers(1, 3))  # 4^8 placements at most on the 8-machine tree
    topology = TreeTopology(fanout=fanout, vm_slots=slots, nic_bytes_per_s=6, oversubscription=(1.0,) * (len(fanout) - 1))
    machine_slots = np.array(draw(st.lists(st.integers(0, slots), min_size=topology.machines, max_size=topology.machines)))
    links = [np.array(draw(st.lists(st.integers(0, 8), min_size=topology.nodes(l), max_size=topology.nodes(l)))) for l in range(topology.levels)]
    request = VirtualCluster(vms=draw(st.integers(1, topology.vms)), bandwidth=draw(st.integers(1, 4)))
    return Datacenter.with_residual(topology, machine_slots, links), request


@settings(max_examples=300, deadline=None)
@given(_states())
def test_found_whenever_one_exists(state):
    dc, request = state
    alloc = dc.find(request)
    assert (alloc is not None) == _exists(dc, request)
    if alloc is not None:
        _check_valid(dc, alloc)


def test_non_interval_counts_are_found():
    # N = 6, B = 1 in one rack: machine 0 can hold 0-2 VMs, machine 1 (uplink 1) only 0, 1 or 5.
    # Giving each machine in turn its largest count (2, then 4) lands in machine 1's gap; 1 + 5 fits.
    t = TreeTopology(fanout=(2,), vm_slots=5, nic_bytes_per_s=10, oversubscription=())
    dc = Datacenter.with_residual(t, np.array([2, 5]), [np.array([10, 1])])
    alloc = dc.find(VirtualCluster(vms=6, bandwidth=1))
    assert alloc is not None and alloc.machines == {0: 1, 1: 5}
    assert alloc.reserved(0).tolist() == [1, 1]
    # one level up: rack 0 holds 5 + 1 through a rack uplink of 1, rack 1 the sixth VM
    t = TreeTopology(fanout=(2, 2), vm_slots=5, nic_bytes_per_s=10, oversubscription=(1.0,))
    dc = Datacenter.with_residual(t, np.array([5, 0, 1, 0]), [np.array([1, 0, 1, 0]), np.array([1, 1])])
    alloc = dc.find(VirtualCluster(vms=6, bandwidth=1))
    assert alloc is not None and alloc.machines == {0: 5, 2: 1}


@settings(max_examples=100, deadline=None)
@given(_states(), st.randoms(use_true_random=False))
def test_release_restores_state(state, rnd):
    dc, _ = state
    before = ([x.copy() for x in dc.free_slots], [x.copy() for x in dc.free_link])
    committed = []
    for _ in range(5):
        alloc = dc.find(VirtualCluster(vms=rnd.randint(1, 4), bandwidth=rnd.randint(1, 3)))
        if alloc is not None:
            dc.commit(alloc)
            committed.append(alloc)
            assert all((x >= 0).all() for x in dc.free_slots + dc.free_link)
    rnd.shuffle(committed)
    for alloc in committed:
        dc.release(alloc)
    assert all((x == y).all() for x, y in zip(dc.free_slots, before[0]))
    assert all((x == y).all() for x, y in zip(dc.free_link, before[1]))


def test_lowest_level_first_and_no_uplink_when_inside_one_machine():
    t = TreeTopology(fanout=(4, 2), vm_slots=4, nic_bytes_per_s=1000, oversubscription=(10.0,))
    dc = Datacenter(t)
    alloc = dc.find(VirtualCluster(vms=3, bandwidth=500))
    assert alloc.host_level == 0 and alloc.machines == {0: 3}
    assert alloc.reserved(0).tolist() == [0]
    assert dc.imbalance(alloc) == pytest.approx((1 / 4) ** 2 + (13 / 16) ** 2)


def test_topology_capacities_and_errors():
    t = TreeTopology(fanout=(40, 10, 40), vm_slots=4, nic_bytes_per_s=125_000_000, oversubscription=(10.0, 1.0))
    assert (t.machines, t.vms, t.nodes(1), t.nodes(2)) == (16_000, 64_000, 400, 40)
    assert t.link_capacity(1) == 500_000_000 and t.link_capacity(2) == 5_000_000_000
    assert [t.level_name(l) for l in range(3)] == ["machine", "rack", "pod"]
    with pytest.raises(InputError, match="oversubscription"):
        TreeTopology(fanout=(4, 2), vm_slots=2, nic_bytes_per_s=10, oversubscription=())
    for ratio in (0.5, float("nan"), float("inf")):
        with pytest.raises(InputError, match="^oversubscription: must be finite and >= 1"):
            TreeTopology(fanout=(4, 2), vm_slots=2, nic_bytes_per_s=10, oversubscription=(ratio,))
    with pytest.raises(InputError, match="N >= 1"):
        VirtualCluster(vms=0, bandwidth=10)
