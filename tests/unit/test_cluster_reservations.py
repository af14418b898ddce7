"""The RM reservation client's error paths a real cluster cannot be made to produce (a submit whose
answer is lost, a refusal of a reservation the RM does not have) and the RM's replies read back,
against a local HTTP server (bodies recorded from the embedded Hadoop 3.5 ResourceManager). The
success path, a retried submit returning the one reservation, runs on the embedded cluster
(tests/integration/test_selector_reservation.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cluster_rest import NO_WAIT, FakeService, ok, service  # noqa: F401  (service: the fixture)

from corral_yarn.cluster.errors import MalformedResponseError, RemoteError
from corral_yarn.cluster.reservations import (
    Allocation,
    Interpreter,
    ReservationDefinition,
    ReservationRequest,
    Reservations,
    reservation_name,
)
from corral_yarn.cluster.rm import ResourceManager
from corral_yarn.cluster.tags import CorralTags

LIST = "/ws/v1/cluster/reservation/list"
NEW = "/ws/v1/cluster/reservation/new-reservation"
SUBMIT = "/ws/v1/cluster/reservation/submit"
DEFINITION = ReservationDefinition("corral-plan:p;corral-job:j", 5, 50_000,
                                   (ReservationRequest(2, 512, 1, 1000, min_concurrency=1),), Interpreter.R_ANY)


def listed(reservation_id: str, name: str) -> dict[str, Any]:
    """One reservation as the RM lists it (with include-resource-allocations=true)."""
    return {"acceptance-time": 1795275246477, "user": "root", "reservation-id": reservation_id,
            "resource-allocations": [{"resource": {"memory": 1536, "vCores": 3}, "startTime": 1795275246430, "endTime": 1795275546430}],
            "reservation-definition": {
                "arrival": 1795275246430, "deadline": 1795275846430, "reservation-name": name, "priority": 0,
                "reservation-requests": {"reservation-request-interpreter": 0, "reservation-request": [
                    {"capability": {"memory": 512, "vCores": 1}, "min-concurrency": 3, "num-containers": 3, "duration": 300000}]}}}


def reservations_of(fake: FakeService) -> Reservations:
    return Reservations(ResourceManager(fake.url, retry=NO_WAIT))


def sent(fake: FakeService, method: str, path: str) -> list[Any]:
    return [body for m, p, body in fake.requests if (m, p) == (method, path)]


def test_a_submit_whose_answer_is_lost_keeps_the_one_reservation_the_rm_has(service: FakeService) -> None:
    service.on("GET", LIST, ok({}), ok({"reservations": [listed("reservation_1_0002", DEFINITION.name)]}))
    service.on("POST", NEW, ok({"new-reservation": {"reservation-id": "reservation_1_0002"}}))
    service.on("POST", SUBMIT, None)  # the RM took it, the answer never came
    assert reservations_of(service).submit("reservations", DEFINITION) == "reservation_1_0002"
    assert len(sent(service, "POST", NEW)) == 1
    contexts = [body["reservation-submission-context"] for body in sent(service, "POST", SUBMIT)]
    assert {c["reservation-id"] for c in contexts} == {"reservation_1_0002"}  # every re-sent POST carries the one id
    assert contexts[0]["queue"] == "reservations" and contexts[0]["reservation-definition"] == DEFINITION.to_json()


def test_a_refused_submit_of_a_reservation_the_rm_does_not_have_raises_the_refusal(service: FakeService) -> None:
    refusal = {"RemoteException": {"exception": "WebApplicationException", "message": "plan is busy"}}
    service.on("GET", LIST, ok({}))
    service.on("POST", NEW, ok({"new-reservation": {"reservation-id": "reservation_1_0003"}}))
    service.on("POST", SUBMIT, (500, json.dumps(refusal)))
    with pytest.raises(RemoteError, match="plan is busy"):
        reservations_of(service).submit("reservations", DEFINITION)
    assert len(sent(service, "GET", LIST)) == 2  # looked for the name, then for the id after the refusal


def test_list_reads_the_definition_and_the_allocations(service: FakeService) -> None:
    service.on("GET", LIST, ok({"reservations": [listed("reservation_1795275186878_0005", "t1")]}))
    [r] = reservations_of(service).list("reservations", "reservation_1795275186878_0005")
    assert (r.reservation_id, r.name, r.user, r.arrival_ms, r.deadline_ms) == (
        "reservation_1795275186878_0005", "t1", "root", 1795275246430, 1795275846430)
    assert r.allocations == (Allocation(1795275246430, 1795275546430, 1536, 3),)


def test_find_returns_the_first_made_of_several_reservations_with_the_name(service: FakeService) -> None:
    named = [listed(i, "n") for i in ("reservation_7_10000", "reservation_7_9999")] + [listed("reservation_7_0001", "other")]
    service.on("GET", LIST, ok({"reservations": named}))
    found = reservations_of(service).find("reservations", "n")
    assert found is not None and found.reservation_id == "reservation_7_9999"
    assert reservations_of(service).find("reservations", "absent") is None


def test_an_empty_list_is_no_reservations_and_a_broken_entry_is_malformed(service: FakeService) -> None:
    service.on("GET", LIST, ok({}), ok({"reservations": [{"reservation-id": "r"}]}), ok([]))
    assert reservations_of(service).list("q") == []
    with pytest.raises(MalformedResponseError, match="reservation entry lacks"):
        reservations_of(service).list("q")
    with pytest.raises(MalformedResponseError, match="not an object"):
        reservations_of(service).list("q")


VALUE = st.text(st.sampled_from("abcXYZ-_.:/09"), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(a=st.tuples(VALUE, VALUE), b=st.tuples(VALUE, VALUE))
def test_reservation_names_are_equal_exactly_for_the_same_plan_and_job(a: tuple[str, str], b: tuple[str, str]) -> None:
    name_a, name_b = (reservation_name(CorralTags(plan, job, ("/r",))) for plan, job in (a, b))
    assert (name_a == name_b) == (CorralTags(*a, ()).matches(CorralTags(*b, ())))
    assert name_a == f"corral-plan:{a[0].lower()};corral-job:{a[1].lower()}"
