"""A chosen <N, B> as a YARN reservation: the request JSON the RM's reservation REST API takes, and
the RM's replies read back (bodies recorded from the embedded Hadoop 3.5 ResourceManager)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cluster.errors import MalformedResponseError
from corral_yarn.cluster.reservations import Allocation, Interpreter, ReservationDefinition, ReservationRequest, Reservations
from corral_yarn.cluster.rm import AmContainerSpec, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import Candidate
from corral_yarn.selector.yarn import ContainerShape, reservation_for

LISTED = {"reservations": [{
    "acceptance-time": 1795275246477, "user": "root", "reservation-id": "reservation_1795275186878_0005",
    "resource-allocations": [{"resource": {"memory": 1536, "vCores": 3}, "startTime": 1795275246430, "endTime": 1795275546430}],
    "reservation-definition": {
        "arrival": 1795275246430, "deadline": 1795275846430, "reservation-name": "t1", "priority": 0,
        "reservation-requests": {"reservation-request-interpreter": 0, "reservation-request": [
            {"capability": {"memory": 512, "vCores": 1}, "min-concurrency": 3, "num-containers": 3, "duration": 300000}]}}}]}


class FakeRest:
    """Scripted replies by path; records (method, path, body, params)."""

    def __init__(self, replies: dict[str, Any]) -> None:
        self.replies = replies
        self.sent: list[tuple[str, str, Any, Any]] = []

    def request(self, method: str, path: str, body: Any = None, params: Any = None, accept_empty: bool = False) -> Any:
        self.sent.append((method, path, body, params))
        return self.replies.get(path)

    def get(self, path: str, params: Any = None) -> Any:
        return self.request("GET", path, params=params)


class FakeRm:
    def __init__(self, replies: dict[str, Any]) -> None:
        self.rest = FakeRest(replies)


def test_a_chosen_tuple_reserves_n_gang_containers_and_the_am_for_its_latency() -> None:
    definition = reservation_for("job-7", Candidate(vms=4, bandwidth=250_000, latency_s=90.2), 1_000, 200_000,
                                 ContainerShape(memory_mb=1024, vcores=2, am_memory_mb=512, am_vcores=1))
    assert definition.to_json() == {
        "arrival": 1_000, "deadline": 200_000, "reservation-name": "job-7",
        "reservation-requests": {"reservation-request-interpreter": 1, "reservation-request": [
            {"capability": {"memory": 1024, "vCores": 2}, "num-containers": 4, "min-concurrency": 4, "duration": 90_200},
            {"capability": {"memory": 512, "vCores": 1}, "num-containers": 1, "min-concurrency": 1, "duration": 90_200}]}}


@settings(max_examples=200, deadline=None)
@given(vms=st.integers(1, 500), latency_s=st.floats(0.001, 10_000), slack_ms=st.integers(0, 10**7))
def test_the_reservation_fits_between_arrival_and_deadline(vms: int, latency_s: float, slack_ms: int) -> None:
    arrival = 10**12
    duration = -(-int(latency_s * 10**6) // 1000)  # an upper bound of ceil(latency_s * 1000)
    definition = reservation_for("j", Candidate(vms, 1, latency_s), arrival, arrival + duration + slack_ms)
    tasks, am = definition.requests
    assert (tasks.num_containers, am.num_containers) == (vms, 1)
    assert tasks.duration_ms == am.duration_ms >= latency_s * 1000
    assert definition.arrival_ms + tasks.duration_ms <= definition.deadline_ms
    assert definition.interpreter is Interpreter.R_ALL


def test_a_tuple_slower_than_the_deadline_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"L\(<3, 9>\) = 61.0 s does not fit"):
        reservation_for("late", Candidate(3, 9, 61.0), 0, 60_000)


def test_submission_carries_the_reservation_id_only_when_given() -> None:
    plain = Submission(name="a", tags=CorralTags("p", "j", ("/r",)), am=AmContainerSpec(command="true"))
    reserved = Submission(name="a", tags=plain.tags, am=plain.am, queue="root.reservations", reservation_id="reservation_1_0001")
    assert "reservation-id" not in plain.to_json("application_1_0001")
    assert reserved.to_json("application_1_0001")["reservation-id"] == "reservation_1_0001"


def test_submit_sends_the_wrapped_context_with_a_new_id() -> None:
    rm = FakeRm({"/ws/v1/cluster/reservation/new-reservation": {"new-reservation": {"reservation-id": "reservation_1_0002"}}})
    definition = ReservationDefinition("d", 5, 50_000, (ReservationRequest(2, 512, 1, 1000, min_concurrency=1),), Interpreter.R_ANY)
    assert Reservations(rm).submit("reservations", definition) == "reservation_1_0002"  # type: ignore[arg-type]
    method, path, body, _ = rm.rest.sent[-1]
    assert (method, path) == ("POST", "/ws/v1/cluster/reservation/submit")
    context = body["reservation-submission-context"]
    assert context["queue"] == "reservations" and context["reservation-id"] == "reservation_1_0002"
    assert context["reservation-definition"]["reservation-requests"]["reservation-request-interpreter"] == 0
    assert context["reservation-definition"]["reservation-requests"]["reservation-request"][0]["min-concurrency"] == 1


def test_list_reads_the_definition_and_the_allocations() -> None:
    rm = FakeRm({"/ws/v1/cluster/reservation/list": LISTED})
    [r] = Reservations(rm).list("reservations", "reservation_1795275186878_0005")  # type: ignore[arg-type]
    assert (r.reservation_id, r.name, r.user, r.arrival_ms, r.deadline_ms) == (
        "reservation_1795275186878_0005", "t1", "root", 1795275246430, 1795275846430)
    assert r.allocations == (Allocation(1795275246430, 1795275546430, 1536, 3),)
    assert rm.rest.sent[-1][3] == {"queue": "reservations", "include-resource-allocations": "true",
                                   "reservation-id": "reservation_1795275186878_0005"}


def test_an_empty_list_is_no_reservations_and_a_broken_entry_is_malformed() -> None:
    assert Reservations(FakeRm({"/ws/v1/cluster/reservation/list": {}})).list("q") == []  # type: ignore[arg-type]
    broken = {"reservations": [{"reservation-id": "r"}]}
    with pytest.raises(MalformedResponseError, match="reservation entry lacks"):
        Reservations(FakeRm({"/ws/v1/cluster/reservation/list": broken})).list("q")  # type: ignore[arg-type]
