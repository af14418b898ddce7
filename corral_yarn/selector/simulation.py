"""Online simulation of the resource selector (thesis §4.4.1): requests arrive, get a tuple or are
rejected, run in their virtual cluster, and release it when they finish.

Metrics per strategy (§4.4.2, §4.4.4): rejected requests, goodput (input bytes of the accepted
requests), late jobs (actual completion past the goal), completion times, and the time the selector
took per request.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from corral_yarn.contracts import ClusterSpec
from corral_yarn.selector.candidates import CandidateRules, CandidateSpace, candidate_space, vm_profile
from corral_yarn.selector.strategies import STRATEGIES, Strategy, select
from corral_yarn.selector.tree import Allocation, Datacenter, Topology
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
    completion_s_p20: float | None
    completion_vs_goal_median: float | None
    vm_utilisation: float
    mean_vms: float | None
    mean_bandwidth_bytes_per_s: float | None
    select_ms_median: float
    select_ms_p99: float


class SimulationResult(BaseModel):
    """A run: the datacenter, the workload, and one result per strategy (JSON: select-sim/v1)."""

    schema_version: str = SIMULATION_SCHEMA
    fanout: list[int]
    vm_slots: int
    nic_bytes_per_s: int
    oversubscription: list[float]
    workload: dict[str, float | int]
    rules: dict[str, float | int]
    results: list[StrategyResult]

    def result(self, strategy: str) -> StrategyResult:
        return next(r for r in self.results if r.strategy == strategy)


@dataclass
class _Tally:
    accepted: list[tuple[Request, int, int, float]]
    select_ms: list[float]


def _run(strategy: Strategy, topology: Topology, requests: Sequence[Request], spaces: Sequence[CandidateSpace], profile: ClusterSpec, config: WorkloadConfig, tick: Callable[[], None]) -> _Tally:
    dc = Datacenter(topology)
    rng = np.random.default_rng((config.seed, STRATEGIES.index(strategy)))
    running: list[tuple[float, int, Allocation]] = []
    tally = _Tally([], [])
    for request, space in zip(requests, spaces):
        while running and running[0][0] <= request.arrival_s:
            dc.release(heapq.heappop(running)[2])  # release at completion
        start = time.perf_counter()
        choice = select(strategy, dc, space, rng)
        if choice is not None:
            dc.commit(choice.allocation)
        tally.select_ms.append((time.perf_counter() - start) * 1e3)
        tick()
        if choice is None:
            continue
        seconds = run_seconds(request, choice.candidate.vms, choice.candidate.bandwidth, profile, config)
        heapq.heappush(running, (request.arrival_s + seconds, request.index, choice.allocation))
        tally.accepted.append((request, choice.candidate.vms, choice.candidate.bandwidth, seconds))
    return tally


def _summary(strategy: str, tally: _Tally, requests: Sequence[Request], total_vms: int) -> StrategyResult:
    done = tally.accepted
    seconds = np.array([s for *_, s in done])
    goals = np.array([r.deadline_s for r, *_ in done])
    horizon = requests[-1].arrival_s if requests else 0.0
    vm_seconds = sum(n * s for _, n, _, s in done)

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
        completion_s_p20=pick(seconds, 20),
        completion_vs_goal_median=pick(seconds / goals, 50) if done else None,
        vm_utilisation=vm_seconds / (total_vms * horizon) if horizon > 0 else 0.0,
        mean_vms=float(np.mean([n for _, n, _, _ in done])) if done else None,
        mean_bandwidth_bytes_per_s=float(np.mean([b for _, _, b, _ in done])) if done else None,
        select_ms_median=float(np.median(tally.select_ms)),
        select_ms_p99=float(np.percentile(tally.select_ms, 99)),
    )


def simulate(topology: Topology, config: WorkloadConfig, rules: CandidateRules, strategies: Sequence[Strategy] = STRATEGIES, disk_bytes_per_s: float = 125e6, progress: Callable[[int], None] | None = None) -> SimulationResult:
    """Run every strategy on the same seeded request stream; goodput is also given relative to Baseline."""
    profile = vm_profile(disk_bytes_per_s)
    requests = generate_requests(config, profile, topology.vms)
    spaces = [candidate_space(r.job, profile, r.deadline_s, r.baseline_vms, rules) for r in requests]
    log.info("%d requests, %.1f candidate tuples on the frontier per request", len(requests), np.mean([len(s.frontier) for s in spaces]))
    results = []
    for strategy in strategies:
        tally = _run(strategy, topology, requests, spaces, profile, config, (lambda: progress(1)) if progress else (lambda: None))
        results.append(_summary(strategy, tally, requests, topology.vms))
        log.info("%s: %.1f %% rejected", strategy, 100 * results[-1].rejected_fraction)
    base = next((r for r in results if r.strategy == "baseline"), None)
    if base is not None and base.goodput_bytes > 0:
        results = [r.model_copy(update={"goodput_vs_baseline": r.goodput_bytes / base.goodput_bytes - 1.0}) for r in results]
    return SimulationResult(
        fanout=list(topology.fanout),
        vm_slots=topology.vm_slots,
        nic_bytes_per_s=topology.nic_bytes_per_s,
        oversubscription=list(topology.oversubscription),
        workload={k: v for k, v in vars(config).items()},
        rules={k: v for k, v in vars(rules).items()},
        results=results,
    )
