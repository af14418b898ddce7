"""The numeric core shared by the planner implementations: a Schedule and the objective."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Scenario = Literal["batch", "online"]
SCENARIOS: tuple[Scenario, ...] = ("batch", "online")


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
