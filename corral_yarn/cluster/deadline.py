"""An admitted deadline job as a YARN reservation (thesis §4.4: the selector's <N, B> on a real cluster).

The chain on a cluster: its :class:`~corral_yarn.contracts.ClusterSpec` as the selector's tree
(:func:`~corral_yarn.selector.tree.topology_of`), candidate tuples and a strategy's choice allocated on it (Oktopus admission,
:mod:`~corral_yarn.selector.strategies`), then :func:`reserve`: the chosen tuple <N, B> with its
predicted completion time L(<N, B>) becomes a reservation of N task containers, all at once (a gang),
for L seconds somewhere between the job's arrival and its deadline, plus one container for the
ApplicationMaster over the same time (R_ALL: both). The job is then submitted into it with the
returned reservation id and queue. B is not enforced by YARN; docs/selector.md says how it would be
on a real network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from corral_yarn.cluster.reservations import Interpreter, ReservationDefinition, ReservationRequest, Reservations, reservation_name
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import Candidate

RESERVABLE_QUEUE = "root.reservations"  # the embedded cluster's reservable queue, by its full path (docs/deploy.md)


@dataclass(frozen=True)
class ContainerShape:
    """The YARN capability of one VM of the selector's model (a task container) and of the AM."""

    memory_mb: int = 512
    vcores: int = 1
    am_memory_mb: int = 512
    am_vcores: int = 1


@dataclass(frozen=True)
class ReservedJob:
    """What submitting an admitted job into its reservation needs (``MapReduceSubmitter.submit``)."""

    reservation_id: str
    queue: str


def reservation_for(tags: CorralTags, choice: Candidate, arrival_ms: int, deadline_ms: int,
                    shape: ContainerShape = ContainerShape()) -> ReservationDefinition:
    """N containers for L(<N, B>) before the deadline, and the job's AM alongside them, named after the job."""
    name = reservation_name(tags)
    duration_ms = math.ceil(choice.latency_s * 1000)
    if arrival_ms + duration_ms > deadline_ms:
        raise InputError(f"{name}: L(<{choice.vms}, {choice.bandwidth}>) = {choice.latency_s:.1f} s does not fit "
                         f"between arrival {arrival_ms} and deadline {deadline_ms} (ms)")
    tasks = ReservationRequest(choice.vms, shape.memory_mb, shape.vcores, duration_ms)
    am = ReservationRequest(1, shape.am_memory_mb, shape.am_vcores, duration_ms)
    return ReservationDefinition(name, arrival_ms, deadline_ms, (tasks, am), Interpreter.R_ALL)


def reserve(reservations: Reservations, tags: CorralTags, choice: Candidate, arrival_ms: int, deadline_ms: int,
            queue: str = RESERVABLE_QUEUE, shape: ContainerShape = ContainerShape()) -> ReservedJob:
    """The reservation of an admitted job's chosen tuple in the reservable ``queue``, made once: a
    retry returns the reservation already made for this plan and job. Submit the job with the result
    once the reservation is active (``Reservations.wait_active``)."""
    definition = reservation_for(tags, choice, arrival_ms, deadline_ms, shape)
    return ReservedJob(reservations.submit(queue, definition), queue)
