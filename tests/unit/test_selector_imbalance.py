"""The resource-imbalance metric (thesis §4.2.1) and the §4.2.2 example: Corral-I picks <3, 500>."""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.selector.candidates import MBPS, Candidate, CandidateSpace
from corral_yarn.selector.strategies import select
from corral_yarn.selector.tree import Datacenter, TreeTopology, VirtualCluster

SMALL, BIG = Candidate(3, 500 * MBPS, 100.0), Candidate(6, 200 * MBPS, 100.0)


def _rack(with_rack_level: bool) -> Datacenter:
    """Figure 4.1: one rack of four machines, 2 VM slots and a 1 Gbps link each."""
    fanout, ratios = ((4, 1), (1.0,)) if with_rack_level else ((4,), ())
    return Datacenter(TreeTopology(fanout=fanout, vm_slots=2, nic_bytes_per_s=1000 * MBPS, oversubscription=ratios))


@pytest.mark.parametrize(("with_rack_level", "small", "big"), [(True, 1.140625, 1.1425), (False, 0.75, 1.08)])
def test_example_imbalance_values(with_rack_level, small, big):
    dc = _rack(with_rack_level)
    first, second = dc.find(SMALL.request), dc.find(BIG.request)
    # <3,500>: 2 VMs + 1 VM, both links left with 500 Mbps; <6,200>: 2+2+2, links left with 600 Mbps
    assert first.machines == {0: 2, 1: 1} and second.machines == {0: 2, 1: 2, 2: 2}
    assert (dc.free_link[0][first.nodes[0]] - first.reserved(0)).tolist() == [500 * MBPS] * 2
    assert (dc.free_link[0][second.nodes[0]] - second.reserved(0)).tolist() == [600 * MBPS] * 3
    # machines 0 + 0.25, links 0.25 + 0.25, rack (5/8)^2 vs three links 0.36 each, rack (2/8)^2
    assert dc.imbalance(first) == pytest.approx(small)
    assert dc.imbalance(second) == pytest.approx(big)


@pytest.mark.parametrize("with_rack_level", [True, False])
def test_corral_i_chooses_the_papers_tuple(with_rack_level):
    space = CandidateSpace.fixed((BIG, SMALL), (BIG, SMALL), BIG)
    choice = select("corral-i", _rack(with_rack_level), space, np.random.default_rng(0))
    assert choice.candidate == SMALL
    # state-1 can still take <3, 400> (the thesis's follow-up request), state-2 cannot
    for candidate, can_follow in ((SMALL, True), (BIG, False)):
        dc = _rack(with_rack_level)
        dc.commit(dc.find(candidate.request))
        assert (dc.find(VirtualCluster(3, 400 * MBPS)) is not None) == can_follow


def test_untouched_resources_do_not_count():
    # all VMs on one machine: its link carries nothing, so only slots of machine and rack count
    dc = _rack(True)
    alloc = dc.find(VirtualCluster(2, 900 * MBPS))
    assert alloc.host_level == 0
    assert dc.imbalance(alloc) == pytest.approx(0.0 + (6 / 8) ** 2)


def test_strategies_on_a_small_space():
    rng = np.random.default_rng(1)
    fast = Candidate(8, 900 * MBPS, 10.0)
    space = CandidateSpace.fixed((BIG, SMALL), (BIG, SMALL, fast), BIG)
    assert select("baseline", _rack(True), space, rng).candidate == BIG
    assert select("corral-r", _rack(True), space, rng).candidate in (BIG, SMALL)
    assert select("strawman", _rack(True), space, rng).candidate == BIG  # <8, 900> does not fit; ties keep order
    faster = CandidateSpace.fixed((BIG,), (BIG, Candidate(4, 300 * MBPS, 20.0)), BIG)
    assert select("corral-t", _rack(True), faster, rng).candidate.vms == 4  # imbalance x T
    assert select("baseline", _rack(True), CandidateSpace.fixed((), (), None), rng) is None
