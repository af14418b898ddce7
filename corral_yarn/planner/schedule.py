"""The numeric core shared by the planner implementations: a Schedule and the objective."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from corral_yarn.contracts import Order, Sharing

Scenario = Literal["batch", "online"]
SCENARIOS: tuple[Scenario, ...] = ("batch", "online")
# the prioritization order: the thesis's (§4.3.4), or least rack-time first within equal arrivals
ORDERS: tuple[Order, ...] = ("thesis", "shortest-work")
SHARING: tuple[Sharing, ...] = ("whole-rack", "slots")  # whole racks per job (thesis §4.3) or slot-aware sharing
DEFAULT_ORDER: dict[Scenario, Order] = {"batch": "thesis", "online": "shortest-work"}
# (A_j, then two tie-breakers, then j): sorting these gives the prioritization order
Key = tuple[float, float, float, int]


@dataclass(frozen=True)
class SlotDemand:
    """Slot-aware sharing (docs/planner.md): d_j(r) slots a job needs on each of its r racks, and the
    slots of one rack; ``demand[j, r - 1]`` lies in 1..capacity."""

    demand: NDArray[np.int64]  # J x R
    capacity: int
    apart: frozenset[tuple[int, int]] = frozenset()  # job pairs (j < k) that slowed each other in history (docs/paragon.md)
    core: NDArray[np.bool_] | None = None  # per job: whether it sends data across the core when split over racks (None: every job)

    def uplink(self, j: int, width: int) -> bool:
        """Whether job j on ``width`` racks holds their uplinks for its interval: split across racks, its
        traffic crosses the oversubscribed core, which L_j(r) (MRCute, §3.1.2) gives it to itself."""
        return width > 1 and (self.core is None or bool(self.core[j]))

    def partners(self, j: int) -> set[int]:
        """The jobs that should not share a rack with job j at the same time."""
        return {b if a == j else a for a, b in self.apart if j in (a, b)}

    def subset(self, jobs: list[int]) -> SlotDemand:
        """The demand of ``jobs`` only, renumbered 0.. in that order."""
        local = {j: k for k, j in enumerate(jobs)}
        apart = frozenset((local[a], local[b]) for a, b in self.apart if a in local and b in local)
        return SlotDemand(self.demand[jobs], self.capacity, apart, None if self.core is None else self.core[jobs])


@dataclass(frozen=True)
class Schedule:
    """A planner's answer for J jobs on R racks (job indices follow the input order)."""

    rack_counts: NDArray[np.int64]  # r_j
    rack_sets: tuple[tuple[int, ...], ...]  # R_j as sorted rack indices
    start: NDArray[np.float64]  # T_j
    order: tuple[int, ...]  # the prioritization order (job indices), first = highest priority
    objective: float

    def same_as(self, other: Schedule) -> bool:
        return (
            np.array_equal(self.rack_counts, other.rack_counts)
            and self.rack_sets == other.rack_sets
            and np.array_equal(self.start, other.start)
            and self.order == other.order
            and self.objective == other.objective
        )


def objective(scenario: Scenario, finish: NDArray[np.float64], arrival: NDArray[np.float64]) -> float:
    """Makespan for batch; mean completion time (finish - arrival) for online (thesis §4.3.1).

    ``math.fsum`` rounds exactly, so every implementation gets the same float whatever its order.
    """
    if scenario == "batch":
        return float(finish.max())
    return math.fsum((finish - arrival).tolist()) / finish.size


def effective_arrival(scenario: Scenario, arrival: NDArray[np.float64]) -> NDArray[np.float64]:
    """A_j as the prioritization phase sees it: 0 for every job in the batch scenario (Fig. 4.2)."""
    return np.zeros_like(arrival) if scenario == "batch" else arrival


def replay(order: tuple[int, ...], rack_sets: tuple[tuple[int, ...], ...], took: NDArray[np.float64], due: NDArray[np.float64], racks: int) -> NDArray[np.float64]:
    """T_j of jobs started in prioritization order, each holding R_j for ``took[j]``: T_j = max{max F_i, A_j} (Fig. 4.2)."""
    free_at, start = np.zeros(racks), np.zeros(took.size)
    for j in order:
        held = list(rack_sets[j])
        start[j] = max(free_at[held].max(), due[j])
        free_at[held] = start[j] + took[j]
    return start


def sort_key(order: Order, arrival: float, count: int, duration: float, job: int) -> Key:
    """Job j's place in the prioritization order, given A_j (0 in batch), r_j and L_j(r_j).

    thesis: earliest arrival, then widest, then longest (§4.3.4); shortest-work: earliest arrival,
    then least rack-time r_j L_j(r_j) (shortest predicted work first, as SPT for mean completion
    time), then widest. Ties go to the lowest index."""
    if order == "thesis":
        return (arrival, -count, -duration, job)
    return (arrival, count * duration, -count, job)


def key_parts(order: Order, count: NDArray[np.int64], duration: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two tie-breakers of ``sort_key`` for arrays of r_j and L_j(r_j), with the same float values."""
    if order == "thesis":
        return -count.astype(np.float64), -duration
    return count * duration, -count.astype(np.float64)
