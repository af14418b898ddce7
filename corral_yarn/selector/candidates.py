"""Candidate resource tuples <N, B> that meet a job's deadline, from MRCute's <N, B> model (§3.1.2, §4.2).

Resource malleability (§2.3): many <N, B> finish a job by the same time. For every N where a wave count
changes we find the least B (on a grid of ``quantum`` bytes/s) with ``L(<N, B>) x (1 + slack) <= deadline``; the tuples
where that B drops as N grows form the *frontier* Corral-I and Corral-R choose from (T = T_desired).
Corral-T and Strawman also consider tuples that finish earlier (§4.4.4): every frontier N, and the
largest useful N, with B raised in steps up to the disk bandwidth (beyond it B no longer helps).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from corral_yarn.contracts import ClusterSpec, JobSpec, Rack
from corral_yarn.errors import InputError
from corral_yarn.io import parse
from corral_yarn.model import dag_latency, reservation_latency
from corral_yarn.selector.tree import VirtualCluster

MBPS = 125_000  # bytes/s in one Mbps


@dataclass(frozen=True)
class Candidate:
    """One tuple <N, B> and its predicted completion time L(<N, B>) in seconds."""

    vms: int
    bandwidth: int
    latency_s: float

    @property
    def request(self) -> VirtualCluster:
        return VirtualCluster(self.vms, self.bandwidth)


@dataclass(frozen=True)
class CandidateSpace:
    """A request's options: the deadline frontier, the fixed baseline tuple, and the faster tuples.

    The faster tuples (only Corral-T and Strawman look at them) are generated on first use.
    """

    frontier: tuple[Candidate, ...]
    baseline: Candidate | None
    faster_of: Callable[[], tuple[Candidate, ...]]

    @cached_property
    def faster(self) -> tuple[Candidate, ...]:
        return self.faster_of()

    @classmethod
    def fixed(cls, frontier: tuple[Candidate, ...], faster: tuple[Candidate, ...], baseline: Candidate | None) -> CandidateSpace:
        """A space with given tuples (examples and tests)."""
        return cls(frontier, baseline, lambda: faster)


def vm_profile(disk_bytes_per_s: float, map_slots: int = 1, reduce_slots: int = 1) -> ClusterSpec:
    """The VM shape MRCute's <N, B> model needs: in <N, B> a "machine" is a VM (§3.1.2).

    ``reservation_latency`` reads only slots per machine and the disk bandwidth; the rack, NIC and
    oversubscription below are placeholders the contract requires.
    """
    return parse(ClusterSpec, {
        "name": "vm",
        "racks": [Rack(name="/virtual-cluster", machines=["vm"])],
        "map_slots_per_machine": map_slots,
        "reduce_slots_per_machine": reduce_slots,
        "nic_bandwidth_bytes_per_s": 1.0,
        "disk_bandwidth_bytes_per_s": disk_bytes_per_s,
        "oversubscription": 2.0,
    }, source="VM profile")


def latency(job: JobSpec, profile: ClusterSpec, vms: NDArray[np.int64], bandwidth: NDArray[np.int64]) -> NDArray[np.float64]:
    """L(<N, B>) of a job elementwise: the critical path of its stages, each on <N, B> (§3.1.2-3)."""
    return dag_latency(job, {s.name: reservation_latency(s, profile, vms, bandwidth) for s in job.stages})


def useful_vms(job: JobSpec, profile: ClusterSpec) -> int:
    """Beyond this many VMs every stage runs in one wave and more VMs cannot help."""
    return int(max(_task_slots(job, profile)))


def _task_slots(job: JobSpec, profile: ClusterSpec) -> list[int]:
    """Per stage and phase, the machines one wave of its tasks needs: ceil(tasks / slots per machine)."""
    return [
        -(-tasks // slots)
        for s in job.stages
        for tasks, slots in ((s.map_tasks, profile.map_slots_per_machine), (s.reduce_tasks, profile.reduce_slots_per_machine))
        if tasks
    ]


def wave_breakpoints(job: JobSpec, profile: ClusterSpec, largest: int) -> NDArray[np.int64]:
    """The least N for each combination of wave counts: only there can L(<N, B>) drop (§3.1.2 "Waves").

    A phase needing ``m`` machines per wave runs in w = ceil(m / N) waves, first reached at
    N = ceil(m / w).
    """
    points = [np.ceil(m / np.arange(1, m + 1)).astype(np.int64) for m in _task_slots(job, profile)]
    vms = np.unique(np.concatenate([np.ones(1, np.int64), *points]))
    return vms[vms <= largest]


def least_bandwidth(job: JobSpec, profile: ClusterSpec, vms: NDArray[np.int64], limit_s: float, top: int, quantum: int) -> NDArray[np.int64]:
    """Per N, the least B = k x quantum <= top with L(<N, B>) <= limit_s, or 0 where none does."""
    lo = np.ones_like(vms)
    hi = np.full_like(vms, max(top // quantum, 1))
    feasible = latency(job, profile, vms, hi * quantum) <= limit_s
    while np.any(lo < hi):  # L falls as B grows, so bisect on k for every N at once
        mid = (lo + hi) // 2
        ok = latency(job, profile, vms, mid * quantum) <= limit_s
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid + 1)
    return np.where(feasible, hi * quantum, 0)


def _pick(candidates: list[Candidate], most: int) -> list[Candidate]:
    """At most ``most`` candidates, evenly spread, keeping both ends."""
    if len(candidates) <= most:
        return candidates
    keep = np.unique(np.linspace(0, len(candidates) - 1, most).round().astype(int))
    return [candidates[i] for i in keep]


@dataclass(frozen=True)
class CandidateRules:
    """How candidates are generated: slack (§4.4.2), B grid and cap, the size of the search."""

    slack: float = 0.0
    quantum: int = MBPS
    max_bandwidth: int = 1000 * MBPS
    max_vms: int = 4096
    max_candidates: int = 24
    faster_steps: int = 3

    def __post_init__(self) -> None:
        if not 0 <= self.slack < np.inf or self.quantum < 1 or self.max_bandwidth < self.quantum:  # NaN slack fails too
            raise InputError(f"slack must be finite and >= 0 and max_bandwidth >= quantum >= 1 byte/s (got slack {self.slack})", field="candidate rules")
        if self.max_vms < 1 or self.max_candidates < 2 or self.faster_steps < 0:
            raise InputError("max_vms >= 1, max_candidates >= 2 and faster_steps >= 0 are required", field="candidate rules")


def candidate_space(job: JobSpec, profile: ClusterSpec, deadline_s: float, baseline_vms: int, rules: CandidateRules) -> CandidateSpace:
    """The tuples meeting ``deadline_s`` with slack: L(<N, B>) x (1 + slack) <= deadline (§4.4.2)."""
    limit = deadline_s / (1.0 + rules.slack) * (1.0 + 1e-12)  # a tie lost to rounding still meets it
    top = min(rules.max_bandwidth, int(profile.disk_bandwidth_bytes_per_s))
    largest = min(useful_vms(job, profile), rules.max_vms)
    vms = np.unique(np.append(wave_breakpoints(job, profile, largest), min(baseline_vms, rules.max_vms)))
    least = least_bandwidth(job, profile, vms, limit, top, rules.quantum)
    fine = least > 0
    vms, least = vms[fine], least[fine]
    pareto = np.flatnonzero((vms <= largest) & (least < np.minimum.accumulate(np.append(np.iinfo(np.int64).max, least))[:-1]))
    frontier = _pick(_candidates(job, profile, vms[pareto], least[pareto]), rules.max_candidates)
    at_base = np.flatnonzero(vms == baseline_vms)
    baseline = _candidates(job, profile, vms[at_base], least[at_base])[0] if at_base.size else None
    return CandidateSpace(tuple(frontier), baseline, lambda: tuple(_faster(job, profile, frontier, largest, least, vms, top, rules)))


def _candidates(job: JobSpec, profile: ClusterSpec, vms: NDArray[np.int64], bandwidth: NDArray[np.int64]) -> list[Candidate]:
    times = latency(job, profile, vms, bandwidth)
    return [Candidate(int(n), int(b), float(t)) for n, b, t in zip(vms, bandwidth, times)]


def _faster(job: JobSpec, profile: ClusterSpec, frontier: list[Candidate], largest: int, least: NDArray[np.int64], vms: NDArray[np.int64], top: int, rules: CandidateRules) -> list[Candidate]:
    """The frontier plus, for each frontier N and the largest N, B raised in steps up to ``top``."""
    if not frontier:
        return []
    base_n = np.array([c.vms for c in frontier] + ([largest] if largest in vms else []), np.int64)
    base_b = np.array([c.bandwidth for c in frontier] + ([int(least[vms == largest][0])] if largest in vms else []), np.int64)
    steps = np.linspace(0.0, 1.0, rules.faster_steps + 1)
    b = base_b[:, None] + np.ceil((top - base_b)[:, None] * steps / rules.quantum).astype(np.int64) * rules.quantum
    n = np.broadcast_to(base_n[:, None], b.shape)
    pairs = np.unique(np.stack([n.ravel(), np.minimum(b, top).ravel()], axis=1), axis=0)
    return _pick(_candidates(job, profile, pairs[:, 0], pairs[:, 1]), rules.max_candidates * 2)
