"""An admitted deadline job as a YARN reservation (thesis §4.4: the selector's <N, B> on a real cluster).

The chosen tuple <N, B> with its predicted completion time L(<N, B>) becomes a reservation of N
task containers, all at once (a gang), for L seconds somewhere between the job's arrival and its
deadline, plus one container for the ApplicationMaster over the same time (R_ALL: both). B is not
enforced by YARN; docs/selector.md says how it would be on a real network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from corral_yarn.cluster.reservations import Interpreter, ReservationDefinition, ReservationRequest
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import Candidate


@dataclass(frozen=True)
class ContainerShape:
    """The YARN capability of one VM of the selector's model (a task container) and of the AM."""

    memory_mb: int = 512
    vcores: int = 1
    am_memory_mb: int = 512
    am_vcores: int = 1


def reservation_for(name: str, choice: Candidate, arrival_ms: int, deadline_ms: int,
                    shape: ContainerShape = ContainerShape()) -> ReservationDefinition:
    """N containers for L(<N, B>) before the deadline, and the job's AM alongside them."""
    duration_ms = math.ceil(choice.latency_s * 1000)
    if arrival_ms + duration_ms > deadline_ms:
        raise InputError(f"{name}: L(<{choice.vms}, {choice.bandwidth}>) = {choice.latency_s:.1f} s does not fit "
                         f"between arrival {arrival_ms} and deadline {deadline_ms} (ms)")
    tasks = ReservationRequest(choice.vms, shape.memory_mb, shape.vcores, duration_ms)
    am = ReservationRequest(1, shape.am_memory_mb, shape.am_vcores, duration_ms)
    return ReservationDefinition(name, arrival_ms, deadline_ms, (tasks, am), Interpreter.R_ALL)
