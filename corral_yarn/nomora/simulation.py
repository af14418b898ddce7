"""Cluster-scale simulation of NoMora against Firmament's random and load-spreading policies (NoMora §6).

Discrete scheduling rounds every ``round_s`` seconds over a fat tree (48 machines per rack, 16 racks per
pod, as in the paper). Each round: arrivals become pending, the policy places tasks (solving its
min-cost flow with OR-Tools), every running task's application performance is taken from its job's
function at the current latency to its root's machine, running tasks progress, latencies move on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import min_cost_flow

from corral_yarn.errors import InputError, PlanningError
from corral_yarn.nomora.latency import SHAPES, LatencyShape
from corral_yarn.nomora.perf import PUBLISHED
from corral_yarn.nomora.policy import Cluster, CostModel, Job, solve_round
from corral_yarn.nomora.workload import TraceJob

log = logging.getLogger(__name__)

POLICIES = ("random", "load_spreading", "nomora", "nomora_preempt", "nomora_preempt_beta")
SAME_HOST_US = 2.0  # "a small constant" between cores of one server (NoMora §"Network Latency Measurements")
_PENDING, _RUNNING, _DONE = 1, 2, 3


@dataclass(frozen=True)
class Topology:
    """``machines`` numbered rack by rack: ``hosts_per_rack`` per rack, ``racks_per_pod`` per pod (last ones partial)."""

    machines: int
    hosts_per_rack: int = 48
    racks_per_pod: int = 16
    slots: int = 8  # task slots (cores C) per machine: an assumption, the trace normalises machine sizes

    def __post_init__(self) -> None:
        for option in ("machines", "hosts_per_rack", "racks_per_pod", "slots"):
            if getattr(self, option) < 1:
                raise InputError(f"must be >= 1, got {getattr(self, option)}", field=option)

    @property
    def rack(self) -> np.ndarray:
        return np.arange(self.machines) // self.hosts_per_rack

    @property
    def racks(self) -> int:
        return -(-self.machines // self.hosts_per_rack)


class FatTreeLatency:
    """Rack-pair latencies that move over time: machines of a rack share a latency to any other machine.

    l(a, b) = L[rack a, rack b](t) for a != b, SAME_HOST_US for a == b. ln L = ln(median of the pair's
    class) + sigma·Z with Z a stationary AR(1) per rack pair (correlation exp(-step / correlation_s)),
    standing in for the paper's per-second cloud latency traces assigned by fat-tree distance.
    """

    def __init__(self, topology: Topology, seed: int, shapes: dict[str, LatencyShape] = SHAPES,
                 correlation_s: float = 300.0) -> None:
        self.rack = topology.rack
        racks = topology.racks
        pod = np.arange(racks) // topology.racks_per_pod
        same_rack = np.eye(racks, dtype=bool)
        same_pod = pod[:, None] == pod[None, :]
        classes = [shapes["same_rack"], shapes["same_pod"], shapes["cross_pod"]]
        which = np.where(same_rack, 0, np.where(same_pod, 1, 2))
        self.log_median = np.log(np.array([c.median_us for c in classes]))[which]
        self.sigma = np.array([c.sigma for c in classes])[which]
        self.correlation_s = correlation_s
        self.rng = np.random.default_rng(seed)
        self.z = self._symmetric_normal()
        self._update()

    def _symmetric_normal(self) -> np.ndarray:
        draw = self.rng.standard_normal(self.log_median.shape)
        upper = np.triu(draw, 1)
        return upper + upper.T + np.diag(np.diag(draw))

    def _update(self) -> None:
        self.rack_latency = np.exp(self.log_median + self.sigma * self.z)

    def step(self, seconds: float) -> None:
        """Advance the latencies by ``seconds``."""
        rho = float(np.exp(-seconds / self.correlation_s))
        self.z = rho * self.z + np.sqrt(1 - rho * rho) * self._symmetric_normal()
        self._update()

    def row(self, machine: int) -> tuple[np.ndarray, np.ndarray]:
        """Latency from ``machine`` to every machine, as (one value per rack + the machine itself, index)."""
        index = self.rack.copy()
        index[machine] = len(self.rack_latency)
        return np.append(self.rack_latency[self.rack[machine]], SAME_HOST_US), index

    def pairs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Latency between machines a[i] and b[i]."""
        return np.where(a == b, SAME_HOST_US, self.rack_latency[self.rack[a], self.rack[b]])


@dataclass(frozen=True)
class SimConfig:
    hours: float = 1.0
    round_s: float = 10.0
    model: CostModel = field(default_factory=CostModel)
    beta: float = 1.0  # discount per second run for "nomora_preempt_beta" (β > 0)
    seed: int = 0


@dataclass
class SimResult:
    """Per-policy figures: each job's average application performance, per-round solver (wall and CPU) and round times,
    each task's placement latency, and the share of running tasks migrated in each preempting round."""

    policy: str
    job_perf: np.ndarray
    solver_ms: list[float]
    solver_cpu_ms: list[float]
    round_ms: list[float]
    round_cpu_ms: list[float]
    placement_latency_s: np.ndarray
    migrated_share: list[float]
    max_running_over_slots: float

    @property
    def avg_app_perf(self) -> float:
        """Mean over jobs of their time-averaged performance (the area over the paper's CDF, Fig. 3a)."""
        return float(self.job_perf.mean()) if len(self.job_perf) else float("nan")

    def summary(self) -> dict:
        """The published metrics: average application performance, algorithm runtime per round (ms),
        whole round (ms), task placement latency (s), share of running tasks migrated per round."""
        return {"avg_app_perf": round(self.avg_app_perf, 4), "jobs_measured": int(len(self.job_perf)),
                "algorithm_runtime_ms": {**_percentiles(self.solver_ms, (50, 99, 100), 3), "rounds": len(self.solver_ms)},
                "algorithm_cpu_ms": _percentiles(self.solver_cpu_ms, (50, 99, 100), 3),
                "round_ms": _percentiles(self.round_ms, (50, 99), 3),
                "round_cpu_ms": _percentiles(self.round_cpu_ms, (50, 99), 3),
                "placement_latency_s": _percentiles(self.placement_latency_s, (50, 90, 99), 3),
                "migrated_per_round_pct": {"mean": round(100 * float(np.mean(self.migrated_share)), 4)
                                           if self.migrated_share else 0.0,
                                           **_percentiles(100 * np.asarray(self.migrated_share), (99,), 4)},
                "max_running_over_slots": round(self.max_running_over_slots, 4)}


def _percentiles(values, qs: tuple[int, ...], digits: int) -> dict[str, float | None]:
    names = {50: "median", 100: "max"}
    return {names.get(q, f"p{q}"): round(float(np.percentile(values, q)), digits) if len(values) else None for q in qs}


class _Tasks:
    """All tasks of the workload as flat arrays (task 0 of each job is its root)."""

    def __init__(self, jobs: list[TraceJob]) -> None:
        counts = np.array([len(j.durations_s) for j in jobs], dtype=np.int64)
        self.first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.job = np.repeat(np.arange(len(jobs)), counts)
        self.is_root = np.zeros(len(self.job), dtype=bool)
        self.is_root[self.first] = True
        self.duration = np.concatenate([j.durations_s for j in jobs])
        self.submit = np.repeat([j.arrival_s for j in jobs], counts)
        self.state = np.zeros(len(self.job), dtype=np.int8)
        self.machine = np.full(len(self.job), -1, dtype=np.int64)
        self.remaining = self.duration.copy()
        self.since = self.submit.copy()  # waiting since (pending) or running since (running)
        self.placed_at = np.full(len(self.job), np.nan)


def simulate(jobs: list[TraceJob], topology: Topology, policy: str, config: SimConfig = SimConfig()) -> SimResult:
    """Run ``policy`` (one of POLICIES) over ``jobs`` on ``topology`` for ``config.hours``."""
    if policy not in POLICIES:
        raise InputError(f"must be one of {', '.join(POLICIES)}, got {policy!r}", field="policy")
    if not config.round_s > 0 or not config.hours > 0:
        raise InputError("round_s and hours must be > 0", field="config")
    return _Simulation(jobs, topology, policy, config).run()


class _Simulation:
    def __init__(self, jobs: list[TraceJob], topology: Topology, policy: str, config: SimConfig) -> None:
        unknown = sorted({j.perf for j in jobs} - set(PUBLISHED))
        if unknown:
            raise InputError(f"unknown performance-latency function {unknown[0]!r}", field="jobs.perf")
        self.jobs, self.topology, self.policy, self.config = jobs, topology, policy, config
        self.functions = [PUBLISHED[j.perf] for j in jobs]
        self.tasks = _Tasks(jobs)
        self.latency = FatTreeLatency(topology, config.seed)
        self.running = np.zeros(topology.machines, dtype=np.int64)
        self.slots = np.full(topology.machines, topology.slots, dtype=np.int64)
        self.rng = np.random.default_rng(config.seed + 1)
        self.perf_time = np.zeros(len(jobs))
        self.run_time = np.zeros(len(jobs))
        self.result = SimResult(policy, np.zeros(0), [], [], [], [], np.zeros(0), [], 0.0)
        model = config.model
        if policy == "nomora_preempt":
            model = CostModel(model.p_machine, model.p_rack, model.omega, model.gamma, preempt=True, beta=0.0)
        elif policy == "nomora_preempt_beta":
            model = CostModel(model.p_machine, model.p_rack, model.omega, model.gamma, preempt=True, beta=config.beta)
        self.model = model

    def run(self) -> SimResult:
        now, horizon = 0.0, self.config.hours * 3600.0
        while now < horizon:
            self._arrive(now)
            self._round(now)
            self._account(self.config.round_s)
            self._progress(now, self.config.round_s)
            self.latency.step(self.config.round_s)
            now += self.config.round_s
        result = self.result
        ran = self.run_time > 0
        result.job_perf = self.perf_time[ran] / self.run_time[ran]
        placed = ~np.isnan(self.tasks.placed_at) & (self.tasks.submit > 0)  # t = 0: running before the trace
        result.placement_latency_s = self.tasks.placed_at[placed] - self.tasks.submit[placed]
        return result

    def _arrive(self, now: float) -> None:
        t = self.tasks
        t.state[(t.state == 0) & (t.submit <= now)] = _PENDING

    def _round(self, now: float) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        if self.policy in ("random", "load_spreading"):
            solver_times, migrated = self._baseline_round(now), None
        else:
            solver_times, migrated = self._nomora_round(now)
        round_s, round_cpu_s = time.perf_counter() - started, time.thread_time() - cpu
        if solver_times is None:
            return
        self.result.solver_ms.append(solver_times[0] * 1000)
        self.result.solver_cpu_ms.append(solver_times[1] * 1000)
        self.result.round_ms.append(round_s * 1000)
        self.result.round_cpu_ms.append(round_cpu_s * 1000)
        if migrated is not None:
            self.result.migrated_share.append(migrated)
        # A task placed in this round waited until the round's end: the round's computation counts (§6.3).
        t = self.tasks
        fresh = (t.placed_at == -1.0)
        t.placed_at[fresh] = now + round_s
        self.result.max_running_over_slots = max(self.result.max_running_over_slots,
                                                 float((self.running / self.slots).max()))

    def _place(self, tasks: np.ndarray, machines: np.ndarray, now: float) -> None:
        """Start ``tasks`` on ``machines`` (-1: stay pending)."""
        t = self.tasks
        go = machines >= 0
        tasks, machines = tasks[go], machines[go]
        t.state[tasks] = _RUNNING
        t.machine[tasks] = machines
        t.since[tasks] = now
        first = np.isnan(t.placed_at[tasks])
        t.placed_at[tasks[first]] = -1.0  # set to the round's end in _round
        np.add.at(self.running, machines, 1)

    def _baseline_round(self, now: float) -> tuple[float, float] | None:
        """Firmament's random / load-spreading policies as a flow network: T -> X (0) or U_i (ω·α + γ);
        X -> M_m one arc per free slot, at a random cost (random: any idle slot) or at the machine's
        task count after taking it (load spreading: convex, so a round spreads tasks over machines)."""
        t = self.tasks
        pending = np.flatnonzero(t.state == _PENDING)
        if not len(pending):
            return None
        free = self.slots - self.running
        slot_machine = np.repeat(np.arange(len(free)), free)
        if self.policy == "random":
            slot_cost = self.rng.integers(0, 100, len(slot_machine))
        else:
            offsets = np.arange(len(slot_machine)) - np.repeat(np.cumsum(free) - free, free)
            slot_cost = self.running[slot_machine] + offsets
        used, times = _baseline_flow(t.job[pending], now - t.since[pending], slot_machine, slot_cost, len(free),
                                        self.model)
        machines = slot_machine[used]
        self.rng.shuffle(machines)  # which chosen slot a task gets is not latency-aware either
        order = np.argsort(now - t.since[pending], kind="stable")[::-1]  # longest waiting first, as the flow does
        placed = np.full(len(pending), -1, dtype=np.int64)
        placed[order[:len(machines)]] = machines
        self._place(pending, placed, now)
        return times

    def _nomora_round(self, now: float) -> tuple[tuple[float, float] | None, float | None]:
        t = self.tasks
        jobs_with_work = np.unique(t.job[(t.state == _PENDING) | ((t.state == _RUNNING) & ~t.is_root & self.model.preempt)])
        if not len(jobs_with_work):
            return None, None
        cluster = Cluster(self.topology.rack, self.slots, self.running)
        requests, pending_of, running_of = [], [], []
        for job in jobs_with_work:
            first, last = t.first[job], t.first[job] + len(self.jobs[job].durations_s)
            members = np.arange(first + 1, last)
            root = int(t.machine[first]) if t.state[first] == _RUNNING else -1
            if root < 0 and t.state[first] != _PENDING:
                continue  # the root finished: nothing left to place
            pending = members[t.state[members] == _PENDING]
            running = members[t.state[members] == _RUNNING] if self.model.preempt and root >= 0 else members[:0]
            requests.append(Job(self.functions[job], root, now - t.since[pending], t.machine[running], now - t.since[running]))
            pending_of.append((first, pending))
            running_of.append(running)
        result = solve_round(requests, cluster, self.latency.row, self.model)
        before = int((t.state == _RUNNING).sum())
        moved = 0
        for (root_task, pending), running, root, placed, after in zip(pending_of, running_of, result.roots,
                                                                      result.pending, result.running):
            if t.state[root_task] == _PENDING and root >= 0:
                self._place(np.array([root_task]), np.array([root]), now)
            if len(running):
                moved += self._move(running, after, now)
            self._place(pending, placed, now)
        return (result.solver_s, result.solver_cpu_s), (moved / before if before else 0.0)

    def _move(self, running: np.ndarray, after: np.ndarray, now: float) -> int:
        """Preemption: a running task moved to another machine restarts there (the work done is lost,
        paper §"Preemption"); one sent to U_i waits again from now."""
        t = self.tasks
        leaves = after != t.machine[running]
        moved, target = running[leaves], after[leaves]
        np.subtract.at(self.running, t.machine[moved], 1)
        t.remaining[moved] = t.duration[moved]
        t.state[moved], t.since[moved], t.machine[moved] = _PENDING, now, -1
        self._place(moved, target, now)
        return len(moved)

    def _account(self, seconds: float) -> None:
        """Each running non-root task's performance at the latency to its root; per job, the tasks' mean."""
        t = self.tasks
        running = np.flatnonzero((t.state == _RUNNING) & ~t.is_root)
        roots = t.first[t.job[running]]
        running = running[t.state[roots] == _RUNNING]
        if not len(running):
            return
        latency = self.latency.pairs(t.machine[t.first[t.job[running]]], t.machine[running])
        perf = np.empty(len(running))
        jobs = t.job[running]
        names = np.array([self.jobs[j].perf for j in jobs])
        for name in np.unique(names):
            chosen = names == name
            perf[chosen] = PUBLISHED[str(name)].values(latency[chosen])
        sums = np.bincount(jobs, weights=perf, minlength=len(self.jobs))
        counts = np.bincount(jobs, minlength=len(self.jobs))
        active = counts > 0
        self.perf_time[active] += sums[active] / counts[active] * seconds
        self.run_time[active] += seconds

    def _progress(self, now: float, seconds: float) -> None:
        """Running tasks progress; finished ones free their slot; a root finishes with its job's last task."""
        t = self.tasks
        running = np.flatnonzero((t.state == _RUNNING) & ~t.is_root)
        t.remaining[running] -= seconds
        done = running[t.remaining[running] <= 0]
        self._finish(done)
        roots = np.flatnonzero((t.state == _RUNNING) & t.is_root)
        left = np.bincount(t.job[(t.state != _DONE) & ~t.is_root], minlength=len(self.jobs))
        self._finish(roots[left[t.job[roots]] == 0])

    def _finish(self, tasks: np.ndarray) -> None:
        t = self.tasks
        np.subtract.at(self.running, t.machine[tasks], 1)
        t.state[tasks] = _DONE


def _baseline_flow(owner: np.ndarray, waits: np.ndarray, slot_machine: np.ndarray, slot_cost: np.ndarray,
                   machines: int, model: CostModel) -> tuple[np.ndarray, tuple[float, float]]:
    """Solve a baseline round: which free slots (indices into slot_machine) take a task, and the solver's
    wall-clock and CPU seconds."""
    jobs, job_of = np.unique(owner, return_inverse=True)
    slots, tasks = len(slot_machine), len(owner)
    cluster_node, first_u = machines + 1, machines + 2
    first_task = first_u + len(jobs)
    task_nodes = np.arange(first_task, first_task + tasks, dtype=np.int64)
    index = np.arange(machines, dtype=np.int64)
    groups = [
        (np.full(slots, cluster_node), 1 + slot_machine, np.ones(slots), slot_cost),  # X -> M_m, one arc per free slot
        (1 + index, np.zeros(machines), np.bincount(slot_machine, minlength=machines), np.zeros(machines)),  # M_m -> S
        (first_u + np.arange(len(jobs)), np.zeros(len(jobs)), np.bincount(job_of), np.zeros(len(jobs))),  # U_i -> S
        (task_nodes, np.full(tasks, cluster_node), np.ones(tasks), np.zeros(tasks)),  # T -> X
        (task_nodes, first_u + job_of, np.ones(tasks), model.unscheduled_arcs(waits)),  # T -> U_i
    ]
    columns = [np.concatenate([np.asarray(g[c], dtype=np.int64) for g in groups]) for c in range(4)]
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(*columns)
    supplies = np.zeros(first_task + tasks, dtype=np.int64)
    supplies[0], supplies[first_task:] = -tasks, 1
    solver.set_nodes_supplies(np.arange(len(supplies), dtype=np.int64), supplies)
    started, cpu = time.perf_counter(), time.thread_time()
    status = solver.solve()
    times = (time.perf_counter() - started, time.thread_time() - cpu)
    if status != solver.OPTIMAL:
        raise PlanningError(f"baseline min-cost flow not solved: status {status}")
    return np.flatnonzero(solver.flows(np.arange(slots, dtype=np.int64))), times
