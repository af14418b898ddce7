"""Online simulation of the resource selector (thesis §4.4.1): requests arrive, get a tuple or are
rejected, run in their virtual cluster, and release it when they finish.

Metrics per strategy (§4.4.2, §4.4.4): rejected requests, goodput (input bytes of the accepted
requests), late jobs (actual completion past the goal), completion times, the time the selector
took per request, and the occupancy reached. All are over the measured requests: after the history
(workload.py) and the warm-up fraction. Occupancy is measured over the window from the first
measured arrival to the last arrival: *offered* -- every request on its Baseline tuple for its goal,
none rejected, which is what the target occupancy lambda N T / M sets (§4.4.1) -- and, per strategy,
*carried* -- the VMs its accepted jobs actually held (their tuples, their real run times).
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from corral_yarn.contracts import ClusterSpec
from corral_yarn.errors import InputError
from corral_yarn.selector.candidates import CandidateRules, CandidateSpace, candidate_space, vm_profile
from corral_yarn.selector.strategies import STRATEGIES, Strategy, select
from corral_yarn.selector.tree import Allocation, Datacenter, TreeTopology
from corral_yarn.selector.workload import Request, WorkloadConfig, generate_requests, run_seconds

log = logging.getLogger(__name__)
SIMULATION_SCHEMA = "corral-yarn/select-sim/v1"


class StrategyResult(BaseModel):
    """What one strategy achieved on one request stream."""

    strategy: str
    requests: int
    accepted: int
    rejected_fraction: float
    goodput_bytes: float
    goodput_vs_baseline: float | None = None
    late_fraction: float
    completion_s_median: float | None
    completion_vs_goal_median: float | None
    completion_vs_goal_p20: float | None
    mean_vms: float | None
    mean_bandwidth_bytes_per_s: float | None
    select_ms_median: float
    select_ms_p99: float
    occupancy: float | None


class SimulationResult(BaseModel):
    """A run: the datacenter, the workload, and one result per strategy (JSON: select-sim/v1)."""

    schema_version: str = SIMULATION_SCHEMA
    fanout: list[int]
    vm_slots: int
    nic_bytes_per_s: int
    oversubscription: list[float]
    workload: dict[str, float | int]
    rules: dict[str, float | int]
    history_requests: int
    measured_window_s: float
    offered_occupancy: float | None
    results: list[StrategyResult]

    def result(self, strategy: str) -> StrategyResult:
        return next(r for r in self.results if r.strategy == strategy)


@dataclass
class _Tally:
    accepted: list[tuple[Request, int, int, float]]
    select_ms: list[float]


def _run(strategy: Strategy, topology: TreeTopology, requests: Sequence[Request], space_of: Callable[[Request], CandidateSpace], config: WorkloadConfig, profile: ClusterSpec, tick: Callable[[], None]) -> _Tally:
    """One strategy on the request stream; ``space_of`` runs inside the timed part of each request."""
    dc = Datacenter(topology)
    rng = np.random.default_rng((config.seed, STRATEGIES.index(strategy)))
    running: list[tuple[float, int, Allocation]] = []
    tally = _Tally([], [])
    for request in requests:
        while running and running[0][0] <= request.arrival_s:
            dc.release(heapq.heappop(running)[2])  # release at completion
        start = time.perf_counter()
        choice = select(strategy, dc, space_of(request), rng)
        if choice is not None:
            dc.commit(choice.allocation)
        tally.select_ms.append((time.perf_counter() - start) * 1e3)
        if not request.history:
            tick()
        if choice is None:
            continue
        seconds = run_seconds(request, choice.candidate.vms, choice.candidate.bandwidth, profile, config)
        heapq.heappush(running, (request.arrival_s + seconds, request.index, choice.allocation))
        tally.accepted.append((request, choice.candidate.vms, choice.candidate.bandwidth, seconds))
    return tally


def _busy_fraction(jobs: Iterable[tuple[float, float, int]], window: tuple[float, float], total_vms: int) -> float | None:
    """Time-averaged busy VMs / all VMs over ``window``, from (start, end, VMs) of each job."""
    t0, t1 = window
    if t1 <= t0:
        return None
    vm_seconds = sum(n * max(0.0, min(end, t1) - max(begin, t0)) for begin, end, n in jobs)
    return vm_seconds / (total_vms * (t1 - t0))


def _summary(strategy: str, tally: _Tally, requests: Sequence[Request], first: int, window: tuple[float, float], total_vms: int) -> StrategyResult:
    """The metrics over requests ``first`` onwards (the history and the warm-up come before)."""
    done = [a for a in tally.accepted if a[0].index >= first]
    carried = _busy_fraction(((r.arrival_s, r.arrival_s + s, n) for r, n, _, s in tally.accepted), window, total_vms)
    requests = requests[first:]
    seconds = np.array([s for *_, s in done])
    goals = np.array([r.deadline_s for r, *_ in done])

    def pick(values: np.ndarray, q: float) -> float | None:
        return float(np.percentile(values, q)) if values.size else None

    return StrategyResult(
        strategy=strategy,
        requests=len(requests),
        accepted=len(done),
        rejected_fraction=1.0 - len(done) / max(len(requests), 1),
        goodput_bytes=float(sum(r.input_bytes for r, *_ in done)),
        late_fraction=float(np.mean(seconds > goals * (1 + 1e-9))) if done else 0.0,
        completion_s_median=pick(seconds, 50),
        completion_vs_goal_p20=pick(seconds / goals, 20) if done else None,
        completion_vs_goal_median=pick(seconds / goals, 50) if done else None,
        mean_vms=float(np.mean([n for _, n, _, _ in done])) if done else None,
        mean_bandwidth_bytes_per_s=float(np.mean([b for _, _, b, _ in done])) if done else None,
        select_ms_median=float(np.median(tally.select_ms[first:])),
        select_ms_p99=float(np.percentile(tally.select_ms[first:], 99)),
        occupancy=carried,
    )


def simulate(
    topology: TreeTopology,
    config: WorkloadConfig,
    rules: CandidateRules,
    strategies: Sequence[Strategy] = STRATEGIES,
    disk_bytes_per_s: float = 125e6,
    warmup_fraction: float = 0.0,
    time_candidates: bool = False,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Run every strategy on the same seeded request stream; goodput is also given relative to Baseline.

    Metrics skip the history and the first ``warmup_fraction`` of the stream. With ``time_candidates`` each
    request's candidate tuples are generated inside its timed selection (as the thesis measures,
    §4.4.3); otherwise they are generated once and shared by the strategies.
    """
    if not 0 <= warmup_fraction < 1:
        raise InputError("must be in [0, 1)", field="warmup_fraction")
    profile = vm_profile(disk_bytes_per_s)
    requests = generate_requests(config, profile, topology.vms)

    def space(r: Request) -> CandidateSpace:
        return candidate_space(r.job, profile, r.deadline_s, r.baseline_vms, rules)

    shared = [] if time_candidates else [space(r) for r in requests]
    space_of = space if time_candidates else (lambda r: shared[r.index])
    tick = (lambda: progress(1)) if progress else (lambda: None)
    history = sum(r.history for r in requests)
    first = history + int(warmup_fraction * config.requests)
    window = (requests[first].arrival_s, requests[-1].arrival_s)  # first measured arrival to the last
    results = []
    for strategy in strategies:
        tally = _run(strategy, topology, requests, space_of, config, profile, tick)
        results.append(_summary(strategy, tally, requests, first, window, topology.vms))
        log.info("%s: %.1f %% rejected", strategy, 100 * results[-1].rejected_fraction)
    base = next((r for r in results if r.strategy == "baseline"), None)
    if base is not None and base.goodput_bytes > 0:
        results = [r.model_copy(update={"goodput_vs_baseline": r.goodput_bytes / base.goodput_bytes - 1.0}) for r in results]
    return SimulationResult(
        fanout=list(topology.fanout),
        vm_slots=topology.vm_slots,
        nic_bytes_per_s=topology.nic_bytes_per_s,
        oversubscription=list(topology.oversubscription),
        workload={**vars(config), "warmup_fraction": warmup_fraction},
        rules=dict(vars(rules)),
        history_requests=history,
        measured_window_s=window[1] - window[0],
        offered_occupancy=_busy_fraction(((r.arrival_s, r.arrival_s + r.deadline_s, r.baseline_vms) for r in requests), window, topology.vms),
        results=results,
    )
