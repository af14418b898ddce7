"""A chosen <N, B> as a YARN reservation: the cluster as the selector's tree, and the request JSON the
RM's reservation REST API takes (the RM client itself: test_cluster_reservations.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cluster.deadline import ContainerShape, reservation_for
from corral_yarn.cluster.reservations import Interpreter
from corral_yarn.cluster.rm import AmContainerSpec, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import Candidate
from corral_yarn.contracts import ClusterSpec, Rack
from corral_yarn.selector.tree import Datacenter, VirtualCluster, topology_of

TAGS = CorralTags("p", "j", ("/r",))


def test_a_cluster_becomes_a_tree_of_its_racks_with_a_vm_slot_per_task_slot() -> None:
    spec = ClusterSpec(racks=[Rack(name="/a", machines=["a1", "a2"]), Rack(name="/b", machines=["b1", "b2", "b3"]),
                              Rack(name="/c", machines=["c1", "c2"])],
                       map_slots_per_machine=4, reduce_slots_per_machine=2, nic_bandwidth_bytes_per_s=125e6,
                       disk_bandwidth_bytes_per_s=100e6, oversubscription=4.0)
    topology = topology_of(spec)
    assert (topology.fanout, topology.vm_slots, topology.nic_bytes_per_s) == ((2, 3), 2, 125_000_000)
    assert topology.link_capacity(1) == spec.rack_core_bandwidth_bytes_per_s == 62.5e6
    # 6 VMs need two racks of 4 slots; a rack uplink holding 2 or 4 of them carries 2 x B <= 62.5 MB/s
    assert Datacenter(topology).find(VirtualCluster(6, 31_250_000)) is not None
    assert Datacenter(topology).find(VirtualCluster(6, 31_250_001)) is None


def test_a_chosen_tuple_reserves_n_gang_containers_and_the_am_for_its_latency() -> None:
    definition = reservation_for(CorralTags("Plan-3", "job-7", ("/rack-a",)), Candidate(vms=4, bandwidth=250_000, latency_s=90.2),
                                 1_000, 200_000, ContainerShape(memory_mb=1024, vcores=2, am_memory_mb=512, am_vcores=1))
    assert definition.to_json() == {
        "arrival": 1_000, "deadline": 200_000, "reservation-name": "corral-plan:plan-3;corral-job:job-7",
        "reservation-requests": {"reservation-request-interpreter": 1, "reservation-request": [
            {"capability": {"memory": 1024, "vCores": 2}, "num-containers": 4, "min-concurrency": 4, "duration": 90_200},
            {"capability": {"memory": 512, "vCores": 1}, "num-containers": 1, "min-concurrency": 1, "duration": 90_200}]}}


@settings(max_examples=200, deadline=None)
@given(vms=st.integers(1, 500), latency_s=st.floats(0.001, 10_000), slack_ms=st.integers(0, 10**7))
def test_the_reservation_fits_between_arrival_and_deadline(vms: int, latency_s: float, slack_ms: int) -> None:
    arrival = 10**12
    duration = math.ceil(latency_s * 1000)  # the least whole ms that holds L (int(L x 10^6) truncated 1412.0002 ms to 1412)
    definition = reservation_for(TAGS, Candidate(vms, 1, latency_s), arrival, arrival + duration + slack_ms)
    tasks, am = definition.requests
    assert (tasks.num_containers, am.num_containers) == (vms, 1)
    assert tasks.duration_ms == am.duration_ms >= latency_s * 1000
    assert definition.arrival_ms + tasks.duration_ms <= definition.deadline_ms
    assert definition.interpreter is Interpreter.R_ALL


def test_a_tuple_slower_than_the_deadline_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"corral-job:j: L\(<3, 9>\) = 61.0 s does not fit"):
        reservation_for(TAGS, Candidate(3, 9, 61.0), 0, 60_000)


def test_submission_carries_the_reservation_id_only_when_given() -> None:
    plain = Submission(name="a", tags=CorralTags("p", "j", ("/r",)), am=AmContainerSpec(command="true"))
    reserved = Submission(name="a", tags=plain.tags, am=plain.am, queue="root.reservations", reservation_id="reservation_1_0001")
    assert "reservation-id" not in plain.to_json("application_1_0001")
    assert reserved.to_json("application_1_0001")["reservation-id"] == "reservation_1_0001"
