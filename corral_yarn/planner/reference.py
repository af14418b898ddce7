"""The thesis's planning heuristic written literally (§4.3.4, Fig. 4.2): the oracle for the fast one.

It is O(J^2 R^2 log R); use it on small instances and in tests, and ``corral_yarn.planner.fast``
everywhere else.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import PlanningError
from corral_yarn.planner.network import RackChoice
from corral_yarn.planner.schedule import Order, Scenario, Schedule, SlotDemand, effective_arrival, objective, sort_key


def prioritization_order(order: Order, counts: NDArray[np.int64], duration: NDArray[np.float64], arrival: NDArray[np.float64]) -> list[int]:
    """The jobs sorted by ``sort_key``; the thesis's (§4.3.4) is widest, then longest, first in batch
    (where every A_j is 0) and earliest arrival first online."""
    keys = [sort_key(order, a, c, d, j) for j, (a, c, d) in enumerate(zip(arrival.tolist(), counts.tolist(), duration.tolist()))]
    return [key[-1] for key in sorted(keys)]


def prioritize(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order_by: Order = "thesis",
               slots: SlotDemand | None = None, network: RackChoice | None = None) -> Schedule:
    """Prioritization phase, Fig. 4.2: each job in order takes the r_j racks that free up first
    (whole racks), or with ``slots`` the r_j racks with room for its slots soonest (``prioritize_slots``).
    With ``network`` (``latency`` is then its floor table) a latency-sensitive job takes the rack set
    that finishes it first, running L_j(r_j) / p_j(d(R_j)) there (``RackChoice.racks``)."""
    if slots is not None:
        return prioritize_slots(scenario, latency, arrival, counts, order_by, slots)
    n_jobs, n_racks = latency.shape
    duration = latency[np.arange(n_jobs), counts - 1]
    arrival = effective_arrival(scenario, arrival)
    order = prioritization_order(order_by, counts, duration, arrival)
    free_at = np.zeros(n_racks)  # F_i
    start, finish = np.zeros(n_jobs), np.zeros(n_jobs)
    rack_sets: list[tuple[int, ...]] = [()] * n_jobs
    for j in order:
        if network is None:
            chosen, took = np.argsort(free_at, kind="stable")[: counts[j]], duration[j]  # the r_j smallest (F_i, i)
        else:
            chosen, took = network.racks(j, int(counts[j]), free_at, float(arrival[j]))
        start[j] = max(free_at[chosen].max(), arrival[j])  # T_j = max{max F_i, A_j}
        free_at[chosen] = finish[j] = start[j] + took  # F_i := T_j + L_j(r_j)
        rack_sets[j] = tuple(sorted(chosen.tolist()))
    return Schedule(counts.copy(), tuple(rack_sets), start, tuple(order), objective(scenario, finish, arrival))


def prioritize_slots(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], counts: NDArray[np.int64], order_by: Order,
                     slots: SlotDemand) -> Schedule:
    """Slot-aware prioritization (docs/planner.md "Slot-aware sharing"): each job in order starts at the
    earliest T >= A_j at which r_j racks each have d_j(r_j) free slots over all of [T, T + L_j(r_j));
    among the racks that admit it then, it takes the r_j smallest (F_i, i), F_i the last end of a
    reservation on rack i. A job never starts on a rack before the last job placed there (no
    backfilling). A job split across racks that sends data over the core (``SlotDemand.uplink``) also
    needs each rack's uplink free over that interval: two such jobs never share a rack at once, as
    L_j(r) gives each its racks' uplinks (§3.1.2). With d_j = slots per rack for every job this is the
    whole-rack phase."""
    n_jobs, n_racks = latency.shape
    duration = latency[np.arange(n_jobs), counts - 1]
    arrival = effective_arrival(scenario, arrival)
    order = prioritization_order(order_by, counts, duration, arrival)
    booked: list[list[Booking]] = [[] for _ in range(n_racks)]  # per rack: (start, end, slots, job)
    start = np.zeros(n_jobs)
    rack_sets: list[tuple[int, ...]] = [()] * n_jobs
    for j in order:
        need, uplink = int(slots.demand[j, counts[j] - 1]), slots.uplink(j, int(counts[j]))
        times = sorted({float(arrival[j])} | {x for rack in booked for b in rack for x in b[:2] if x > arrival[j]})
        for k, t in enumerate(times):  # admission changes only at a start or an end, so the earliest is A_j or one of them
            fits = [i for i in range(n_racks) if _admits(booked[i], t, need, slots.capacity, uplink)]
            if len(fits) >= counts[j]:
                break
        if partners := slots.partners(j):
            t, fits = _apart(booked, times[k:], fits, partners, need, int(counts[j]), float(duration[j]), slots.capacity, uplink)
        chosen = sorted(fits, key=lambda i: (max((b[1] for b in booked[i]), default=0.0), i))[: counts[j]]
        for i in chosen:
            booked[i].append((t, t + duration[j], need, j, uplink))
        start[j], rack_sets[j] = t, tuple(sorted(chosen))
    return Schedule(counts.copy(), tuple(rack_sets), start, tuple(order), objective(scenario, start + duration, arrival))


Booking = tuple[float, float, int, int, bool]  # start, end, slots, job, whether it holds the rack's uplink
SIMILAR_COST = 0.1  # an interference-free start at most this share of L_j(r_j) later is of similar cost


def _apart(booked: list[list[Booking]], times: list[float], fits: list[int], partners: set[int], need: int, count: int,
           duration: float, capacity: int, uplink: bool) -> tuple[float, list[int]]:
    """The interference rule (docs/paragon.md): from the earliest start times[0], the first start no later
    than SIMILAR_COST x L_j(r_j) after it at which r_j admitting racks hold no job that slowed j in
    history over [T, T + L_j(r_j)); none: the earliest start and its racks (co-location accepted)."""
    for t in times:
        if t > times[0] + SIMILAR_COST * duration:
            break
        clean = [i for i in range(len(booked)) if _admits(booked[i], t, need, capacity, uplink)
                 and not any(b[3] in partners and b[0] < t + duration and b[1] > t for b in booked[i])]
        if len(clean) >= count:
            return t, clean
    return times[0], fits


def _admits(booked: list[Booking], begin: float, need: int, capacity: int, uplink: bool) -> bool:
    """Whether a rack can take ``need`` more slots from ``begin`` on (and its uplink, if ``uplink``),
    starting no earlier than the last job placed on it (no overtaking: on each rack, priorities run in
    order). Every job on the rack then started by ``begin``, so its usage only falls after it: the
    slots held at ``begin`` bound it, and the uplink is free if no job holding it runs past ``begin``."""
    if booked and begin < booked[-1][0]:
        return False
    if uplink and any(b[4] and b[1] > begin for b in booked):
        return False
    return capacity - sum(b[2] for b in booked if b[1] > begin) >= need


def plan(scenario: Scenario, latency: NDArray[np.float64], arrival: NDArray[np.float64], order: Order = "thesis",
         slots: SlotDemand | None = None, network: RackChoice | None = None) -> Schedule:
    """Provisioning phase (§4.3.4): from r_j = 1, widen the longest job one rack at a time until every
    job has R racks; prioritize every candidate allocation and keep the first with the best objective.
    ``slots`` switches prioritization to slot-aware sharing (``prioritize_slots``); with ``network``
    the phase runs on its floor table L_j(r) / p_j(d_low(r)) and latency-sensitive jobs choose their
    racks by latency too (docs/planner.md "Network latency")."""
    if network is not None:
        if slots is not None:
            raise PlanningError("slot-aware sharing does not take a network latency matrix")
        latency = network.floor
    n_jobs, n_racks = latency.shape
    counts = np.ones(n_jobs, dtype=np.int64)
    best = prioritize(scenario, latency, arrival, counts, order, slots, network)
    while True:
        growable = [j for j in range(n_jobs) if counts[j] < n_racks]
        if not growable:
            return best
        longest = max(growable, key=lambda j: (latency[j, counts[j] - 1], -j))
        counts[longest] += 1
        candidate = prioritize(scenario, latency, arrival, counts, order, slots, network)
        if candidate.objective < best.objective:
            best = candidate
