"""YARN reservations through the ResourceManager REST API (thesis §4.4: an admitted deadline job).

A reservation asks the RM's reservation system for resources over a window [arrival, deadline]: a
``ReservationDefinition`` of ``ReservationRequest`` s (k containers of one capability for a duration,
at least ``min_concurrency`` at a time) read together by an interpreter (R_ALL: every request,
R_ANY: one of them). Once accepted and active, the RM runs it as a leaf queue named after the
reservation id inside the reservable queue; an application submitted with that ``reservation-id``
runs there (:class:`~corral_yarn.cluster.rm.Submission`). The RM refuses bad definitions with a
``BadRequestException``, which surfaces as a :class:`~corral_yarn.cluster.errors.RemoteError`.

Submission is idempotent, as application submission is (:mod:`corral_yarn.cluster.rm`): a job's
reservation is named after its plan and job (:func:`reservation_name`), and a submit finding a
reservation of that name in the queue returns it instead of asking for a new reservation id; the id
fixed by ``new-reservation`` makes a re-sent POST a repeat the RM accepts once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from corral_yarn.cluster.errors import ClusterError, MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.rest import expect
from corral_yarn.cluster.rm import API, SERVICE, ResourceManager
from corral_yarn.cluster.tags import CorralTags

log = logging.getLogger(__name__)

RESERVATION_API = API + "/reservation"


class Interpreter(IntEnum):
    """YARN's ReservationRequestInterpreter, by its ordinal as the REST API sends it."""

    R_ANY = 0
    R_ALL = 1
    R_ORDER = 2
    R_ORDER_NO_GAP = 3


@dataclass(frozen=True)
class ReservationRequest:
    """``num_containers`` containers of one capability, each for ``duration_ms``, at least
    ``min_concurrency`` of them at a time (all of them, a gang, by default)."""

    num_containers: int
    memory_mb: int
    vcores: int
    duration_ms: int
    min_concurrency: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"capability": {"memory": self.memory_mb, "vCores": self.vcores}, "num-containers": self.num_containers,
                "min-concurrency": self.min_concurrency or self.num_containers, "duration": self.duration_ms}


@dataclass(frozen=True)
class ReservationDefinition:
    """What to reserve and when: requests to fit between ``arrival_ms`` and ``deadline_ms`` (epoch ms)."""

    name: str
    arrival_ms: int
    deadline_ms: int
    requests: tuple[ReservationRequest, ...]
    interpreter: Interpreter = Interpreter.R_ALL

    def to_json(self) -> dict[str, Any]:
        return {"arrival": self.arrival_ms, "deadline": self.deadline_ms, "reservation-name": self.name,
                "reservation-requests": {"reservation-request-interpreter": int(self.interpreter),
                                         "reservation-request": [r.to_json() for r in self.requests]}}


@dataclass(frozen=True)
class Allocation:
    """Resources the plan set aside for a reservation over [start_ms, end_ms)."""

    start_ms: int
    end_ms: int
    memory_mb: int
    vcores: int


@dataclass(frozen=True)
class Reservation:
    """An accepted reservation as the RM lists it."""

    reservation_id: str
    name: str
    user: str
    arrival_ms: int
    deadline_ms: int
    allocations: tuple[Allocation, ...]


class Reservations:
    """The RM's reservation system: create, list and delete reservations in a reservable queue."""

    def __init__(self, rm: ResourceManager) -> None:
        self.rm = rm

    def new_id(self) -> str:
        doc = self.rm.rest.request("POST", RESERVATION_API + "/new-reservation")
        return str(expect(_unwrap(doc, "new-reservation"), "reservation-id", service=SERVICE))

    def submit(self, queue: str, definition: ReservationDefinition) -> str:
        """Reserve ``definition`` in the reservable ``queue`` unless the queue holds a reservation of its
        name already (a retried submission); returns the reservation id."""
        if existing := self.find(queue, definition.name):
            log.info("%s already reserved in %s as %s; not reserving again", definition.name, queue, existing.reservation_id)
            return existing.reservation_id
        reservation_id = self.new_id()
        context = {"queue": queue, "reservation-id": reservation_id, "reservation-definition": definition.to_json()}
        try:
            self.rm.rest.request("POST", RESERVATION_API + "/submit", body={"reservation-submission-context": context},
                                 accept_empty=True)
        except (UnreachableError, RemoteError) as exc:
            if not self.list(queue, reservation_id, allocations=False):
                raise
            log.info("reserving %s reported %s, but the RM has it; continuing", reservation_id, exc)
        log.info("reserved %s in %s as %s", definition.name, queue, reservation_id)
        return reservation_id

    def find(self, queue: str, name: str) -> Reservation | None:
        """The reservation of ``queue`` named ``name`` (the first made, should there be several), or None."""
        named = [r for r in self.list(queue, allocations=False) if r.name == name]
        return min(named, key=lambda r: (len(r.reservation_id), r.reservation_id), default=None)

    def list(self, queue: str, reservation_id: str | None = None, allocations: bool = True) -> list[Reservation]:
        """Reservations of ``queue`` (only ``reservation_id`` if given), with their allocations if asked."""
        params = {"queue": queue, "include-resource-allocations": str(allocations).lower(),
                  **({"reservation-id": reservation_id} if reservation_id else {})}
        doc = self.rm.rest.get(RESERVATION_API + "/list", params=params)
        if not isinstance(doc, dict):
            raise MalformedResponseError(f"{SERVICE} reservation list is not an object: {doc!r}")
        items = doc.get("reservations") or []
        return [_reservation(r) for r in (items if isinstance(items, list) else [items])]

    def delete(self, reservation_id: str) -> None:
        self.rm.rest.request("POST", RESERVATION_API + "/delete",
                             body={"reservation-delete-context": {"reservation-id": reservation_id}}, accept_empty=True)
        log.info("deleted reservation %s", reservation_id)

    def wait_active(self, reservation_id: str, timeout_s: float = 60.0, poll_s: float = 0.5) -> None:
        """Wait until the RM's plan follower has made the reservation's queue (from its arrival on)."""
        deadline = time.monotonic() + timeout_s
        while reservation_id not in self.rm.queues():
            if time.monotonic() > deadline:
                raise ClusterError(f"reservation {reservation_id} has no queue after {timeout_s:.0f} s")
            time.sleep(poll_s)


def reservation_name(tags: CorralTags) -> str:
    """The reservation-name of a job's reservation: its plan and job tags, so a retry finds it."""
    plan, job = CorralTags(tags.plan_id, tags.job, ()).encode()
    return f"{plan};{job}"


def _unwrap(doc: Any, root: str) -> Any:
    """Hadoop 3.5 wraps some REST responses in their XML root element's name."""
    return doc[root] if isinstance(doc, dict) and root in doc else doc


def _reservation(r: Any) -> Reservation:
    try:
        definition = r["reservation-definition"]
        allocations = r.get("resource-allocations") or []
        return Reservation(
            reservation_id=str(r["reservation-id"]), name=str(definition.get("reservation-name", "")),
            user=str(r.get("user", "")), arrival_ms=int(definition["arrival"]), deadline_ms=int(definition["deadline"]),
            allocations=tuple(Allocation(int(a["startTime"]), int(a["endTime"]), int(a["resource"]["memory"]),
                                         int(a["resource"]["vCores"]))
                              for a in (allocations if isinstance(allocations, list) else [allocations])))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MalformedResponseError(f"{SERVICE} reservation entry lacks a valid {exc}: {r}") from None
