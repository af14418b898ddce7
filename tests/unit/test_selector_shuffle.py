"""The shuffle as max-min fair flows inside a virtual cluster (thesis §4.4.1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.contracts import StageSpec
from corral_yarn.model import reservation_latency
from corral_yarn.selector.candidates import vm_profile
from corral_yarn.selector.shuffle import group_flows, shuffle_seconds, transfer_seconds, wave_seconds
from corral_yarn.sim.network import max_min


def test_max_min_two_groups_on_shared_and_private_links():
    # link 0 (cap 10) carries one flow of each group; link 1 (cap 3) one flow of group 0 only
    per_link = np.array([[1.0, 1.0], [1.0, 0.0]])
    rates = max_min(np.array([10.0, 3.0]), group_flows(per_link))
    assert rates.tolist() == pytest.approx([3.0, 7.0])
    # group 0 moves 3 bytes (1 s); then group 1 gets all of link 0: 7 + 10 x t = 17 -> t = 1, 2 s in all
    assert transfer_seconds(per_link, np.array([10.0, 3.0]), np.array([3.0, 17.0])) == pytest.approx(2.0)


def test_full_wave_is_remote_share_over_the_reservation_plus_merge():
    # 10 VMs each fetching 1 GB, 9/10 of it remote, at B = 100 MB/s; then merging at the 125 MB/s disk
    assert wave_seconds(10, 10, 1e9, 1e8, 1.25e8) == pytest.approx(9.0 + 8.0)
    # 3 reducers: each takes 9 flows through its 100 MB/s link, the senders are not the bottleneck
    assert wave_seconds(10, 3, 1e9, 1e8, 1.25e8) == pytest.approx(9.0 + 8.0)
    assert wave_seconds(1, 1, 1e9, 1e8, 1.25e8) == pytest.approx(8.0)  # all local
    assert shuffle_seconds(4, 0, 0.0, 1e8, 1.25e8) == 0.0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.integers(1, 600), st.floats(1e6, 2e8), st.floats(1e8, 1e11))
def test_simulated_shuffle_never_exceeds_mrcute(vms, reduce_tasks, bandwidth, shuffle_bytes):
    """MRCute charges every fetched byte to the network; the flows skip the local share."""
    disk = 125e6
    stage = StageSpec(name="s", input_bytes=shuffle_bytes, shuffle_bytes=shuffle_bytes, output_bytes=0.0,
                      map_tasks=1, reduce_tasks=reduce_tasks, map_rate_bytes_per_s=1e13, reduce_rate_bytes_per_s=1e13)
    model = reservation_latency(stage, vm_profile(disk), np.array([vms]), np.array([bandwidth]))[0]
    model -= shuffle_bytes / 1 / min(disk, 1e13)  # minus the single map wave
    simulated = shuffle_seconds(vms, reduce_tasks, shuffle_bytes, bandwidth, disk)
    assert simulated <= model * (1 + 1e-9)
    assert simulated >= model * (vms - 1) / vms * 0.5
