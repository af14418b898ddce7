"""The NoMora policy as a flow network, one scheduling round (NoMora §"Latency-driven policy", Table 1).

Each pending task sends one unit of flow to the sink S through a machine M_m (placed there), a rack
aggregator R_r then one of the rack's machines, or its application's unscheduled aggregator U_i (waits).
Arc costs come from the application's performance-latency function at the latency from the machine of
the application's root task (eq. 1-2); the round is solved by OR-Tools' SimpleMinCostFlow.

The network is built with arrays: a job's tasks share one equivalence-class aggregator E_i (as
Firmament's equivalence classes), which carries the job's preference arcs to machines and racks once,
so a round has O(tasks + jobs x preferences) arcs instead of O(tasks x preferences); every path
T_ij -> E_i -> M_m or R_r costs what the paper's direct arc T_ij -> M_m or R_r costs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import min_cost_flow

from corral_yarn.errors import InputError, PlanningError
from corral_yarn.nomora.latency import LatencyMatrix
from corral_yarn.nomora.perf import PerfLatencyFunction, arc_costs

# Preference thresholds on arc costs (paper §"Cost Model Parameters"): p_m for machines, p_r for racks.
P_MACHINE = 105
P_RACK = 110
# Constant added to the unscheduled arc, above every arc cost (paper §"Cluster Workloads": γ = 1001).
GAMMA = 1001


@dataclass(frozen=True)
class Machine:
    """A machine (host) in the latency matrix: its rack, task slots (CPU cores C) and slots in use."""

    name: str
    rack: str
    slots: int
    running: int = 0

    @property
    def free(self) -> int:
        return self.slots - self.running


@dataclass(frozen=True)
class RunningTask:
    """A non-root task already running on ``machine`` for ``ran_s`` seconds (counted in its Machine.running)."""

    machine: str
    ran_s: float


@dataclass(frozen=True)
class Application:
    """A job J_i: its performance-latency function, its root task's machine once placed, pending tasks.

    ``wait_s[j]`` is how long pending task j has waited (the α_ij of a_ij = ω·α_ij + γ); ``running``
    are its non-root tasks already placed, which only a preempting round may move.
    """

    name: str
    perf: PerfLatencyFunction
    wait_s: tuple[float, ...]
    root_machine: str | None = None
    running: tuple[RunningTask, ...] = ()


@dataclass(frozen=True)
class CostModel:
    """NoMora's cost-model parameters: preference thresholds, wait-time factor ω, unscheduled constant γ."""

    p_machine: int = P_MACHINE
    p_rack: int = P_RACK
    omega: float = 1.0
    gamma: int = GAMMA
    preempt: bool = False
    beta: float = 0.0  # discount per second a running task has run, on the arc to its machine

    def running_arc(self, cost: int, ran_s: float) -> int:
        """d_ij,m − β_ij for a running task's own machine (paper §"Preemption"), at least 0."""
        return int(self.running_arcs(np.array([cost]), np.array([ran_s]))[0])

    def running_arcs(self, costs: np.ndarray, ran_s: np.ndarray) -> np.ndarray:
        return np.maximum(0, costs - np.round(self.beta * ran_s).astype(np.int64))

    def unscheduled(self, wait_s: float) -> int:
        """a_ij = ω·α_ij + γ, rounded to an integer cost."""
        return int(self.unscheduled_arcs(np.array([wait_s]))[0])

    def unscheduled_arcs(self, wait_s: np.ndarray) -> np.ndarray:
        return np.round(self.omega * np.asarray(wait_s, dtype=float)).astype(np.int64) + self.gamma


@dataclass(frozen=True)
class Round:
    """One round's outcome: root placements, each pending task's machine (None = unscheduled), flow cost.

    ``moves`` (preempting rounds only) gives each running task (app, k) its (machine before, machine
    after): the same (kept), another (migrated) or None after (preempted to wait).
    """

    roots: dict[str, str]
    placements: dict[tuple[str, int], str | None]
    cost: int
    moves: dict[tuple[str, int], tuple[str, str | None]]

    @property
    def migrated(self) -> int:
        """Running tasks this round moved off their machine (to another one or to waiting)."""
        return sum(1 for before, after in self.moves.values() if after != before)



@dataclass(frozen=True)
class Cluster:
    """The round's machines as arrays in one order: rack index (0..racks-1), slots C, slots in use."""

    rack: np.ndarray
    slots: np.ndarray
    running: np.ndarray

    def __post_init__(self) -> None:
        order = np.argsort(self.rack, kind="stable")  # machines grouped by rack, for the per-rack maxima
        object.__setattr__(self, "by_rack", order)
        object.__setattr__(self, "grouped", bool(np.all(order == np.arange(len(order)))))
        object.__setattr__(self, "rack_starts", np.searchsorted(self.rack[order], np.arange(self.racks)))

    @property
    def racks(self) -> int:
        return int(self.rack.max()) + 1 if len(self.rack) else 0

    def rack_worst(self, costs: np.ndarray) -> np.ndarray:
        """c_ij,r: the worst machine cost in each rack (eq. 2)."""
        return np.maximum.reduceat(costs if self.grouped else costs[self.by_rack], self.rack_starts)


@dataclass(frozen=True)
class Job:
    """Array form of an Application: root machine index (-1: not placed), pending waits, running tasks."""

    perf: PerfLatencyFunction
    root: int
    wait_s: np.ndarray
    running_machine: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    running_s: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class RoundArrays:
    """A round's outcome per job: root machine (-1: waits), each pending task's machine (-1: unscheduled),
    each running task's machine after the round (its own when kept; only in preempting rounds, else
    empty), the optimal flow cost and the seconds spent in the solver (the paper's algorithm runtime),
    wall clock and CPU time of this thread (the solver is single-threaded; CPU time is robust to a loaded machine)."""

    roots: np.ndarray
    pending: list[np.ndarray]
    running: list[np.ndarray]
    cost: int
    solver_s: float
    solver_cpu_s: float = 0.0


# Machine index -> latency (µs) from it to every machine, as (values, index): machine m's latency is
# values[index[m]], or values[m] when index is None. A rack-level source (all machines of a rack share a
# latency to the root) gives one value per rack and the machine -> value index, so costs are computed per rack.
LatencyRow = Callable[[int], tuple[np.ndarray, np.ndarray | None]]


def place_root_indices(jobs: Sequence[Job], cluster: Cluster) -> tuple[np.ndarray, np.ndarray]:
    """Root tasks first: each unplaced root to the least loaded machine with a free slot (lowest
    running/slots, ties by index). Returns each job's root machine (-1: none free) and the new running counts."""
    running = cluster.running.astype(np.int64).copy()
    load = np.where(running < cluster.slots, running / cluster.slots, np.inf)
    roots = np.array([job.root for job in jobs], dtype=np.int64)
    for index in np.flatnonzero(roots < 0):
        chosen = int(np.argmin(load))
        if load[chosen] == np.inf:
            break
        roots[index] = chosen
        running[chosen] += 1
        load[chosen] = running[chosen] / cluster.slots[chosen] if running[chosen] < cluster.slots[chosen] else np.inf
    return roots, running


def solve_round(jobs: Sequence[Job], cluster: Cluster, latency_row: LatencyRow,
                model: CostModel = CostModel()) -> RoundArrays:
    """One NoMora round on arrays (no validation: schedule_round validates named input)."""
    roots, running = place_root_indices(jobs, cluster)
    if model.preempt:
        for job in jobs:
            np.subtract.at(running, job.running_machine, 1)
    network = _FlowNetwork(cluster, cluster.slots - running)
    for index, job in enumerate(jobs):
        if roots[index] >= 0:
            network.add_job(index, job, int(roots[index]), latency_row, model)
    return network.solve(jobs, roots, model.preempt, model)


def schedule_round(apps: Sequence[Application], machines: Sequence[Machine], latency: LatencyMatrix,
                   model: CostModel = CostModel()) -> Round:
    """Place roots, then solve the round's flow network for every pending task of a placed root
    (and, when ``model.preempt``, every running non-root task, whose slot the round may give away)."""
    _validate(apps, machines, latency)
    machines = sorted(machines, key=lambda m: m.name)  # root ties go to the first name
    names = [m.name for m in machines]
    position = {name: i for i, name in enumerate(names)}
    racks = {rack: i for i, rack in enumerate(sorted({m.rack for m in machines}))}
    cluster = Cluster(np.array([racks[m.rack] for m in machines], dtype=np.int64),
                      np.array([m.slots for m in machines], dtype=np.int64),
                      np.array([m.running for m in machines], dtype=np.int64))
    columns = np.array([latency.index(name) for name in names], dtype=np.int64)
    jobs = [_job(app, position) for app in apps]
    result = solve_round(jobs, cluster, lambda m: (latency.latency_us[columns[m], columns], None), model)
    name = lambda index: None if index < 0 else names[index]  # noqa: E731
    roots = {app.name: names[r] for app, r in zip(apps, result.roots) if r >= 0}
    placements = {(app.name, j): name(m) for app, machines_of in zip(apps, result.pending)
                  for j, m in enumerate(machines_of)}
    moves = {(app.name, k): (task.machine, name(m)) for app, after in zip(apps, result.running)
             for k, (task, m) in enumerate(zip(app.running, after))}
    return Round(roots, placements, result.cost, moves)


def place_roots(apps: Sequence[Application], machines: Sequence[Machine]) -> tuple[dict[str, str], list[Machine]]:
    """schedule_round's root placement alone: the roots' machines and the machines with them counted."""
    machines = sorted(machines, key=lambda m: m.name)
    position = {m.name: i for i, m in enumerate(machines)}
    cluster = Cluster(np.zeros(len(machines), dtype=np.int64), np.array([m.slots for m in machines]),
                      np.array([m.running for m in machines]))
    roots, running = place_root_indices([_job(app, position) for app in apps], cluster)
    return ({app.name: machines[r].name for app, r in zip(apps, roots) if r >= 0},
            [Machine(m.name, m.rack, m.slots, int(n)) for m, n in zip(machines, running)])


def _job(app: Application, position: dict[str, int]) -> Job:
    return Job(app.perf, -1 if app.root_machine is None else position[app.root_machine],
               np.array(app.wait_s, dtype=float),
               np.array([position[t.machine] for t in app.running], dtype=np.int64),
               np.array([t.ran_s for t in app.running], dtype=float))


def _validate(apps: Sequence[Application], machines: Sequence[Machine], latency: LatencyMatrix) -> None:
    for index, m in enumerate(machines):
        latency.index(m.name)
        if m.slots < 1 or not 0 <= m.running <= m.slots:
            raise InputError(f"need slots >= 1 and 0 <= running <= slots, got {m.slots}, {m.running}",
                             field=f"machines[{index}]")
    names = {m.name for m in machines}
    if len(names) != len(machines):
        raise InputError("machine names must be unique", field="machines")
    for index, app in enumerate(apps):
        if app.root_machine is not None and app.root_machine not in names:
            raise InputError(f"unknown machine {app.root_machine!r}", field=f"applications[{index}].root_machine")
        if any(w < 0 for w in app.wait_s):
            raise InputError("wait times must be >= 0", field=f"applications[{index}].wait_s")
        for k, task in enumerate(app.running):
            if app.root_machine is None or task.machine not in names or task.ran_s < 0:
                raise InputError("needs a placed root, a known machine and ran_s >= 0",
                                 field=f"applications[{index}].running[{k}]")
    held = Counter(task.machine for app in apps for task in app.running)
    for index, m in enumerate(machines):
        if held[m.name] > m.running:
            raise InputError(f"{held[m.name]} running tasks listed but running = {m.running}",
                             field=f"machines[{index}].running")
    if len({app.name for app in apps}) != len(apps):
        raise InputError("application names must be unique", field="applications")


class _FlowNetwork:
    """Vertices: sink S (0), machines M_m, rack aggregators R_r, then per job U_i, E_i and its tasks (Table 1).

    Arcs are gathered per job (E_i's preference arcs) and built for all tasks at once when solving.
    """

    def __init__(self, cluster: Cluster, free: np.ndarray) -> None:
        self.cluster = cluster
        self.free = free
        self.jobs: list[int] = []  # indices of the jobs with tasks in the network
        self.preferences: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # machines, costs, racks, costs
        self.waits: list[np.ndarray] = []  # α of each task (pending, then movable running at 0)
        self.kept: list[tuple[np.ndarray, np.ndarray]] = []  # movable running tasks' own machines and arc costs

    def add_job(self, index: int, job: Job, root: int, latency_row: LatencyRow, model: CostModel) -> None:
        """E_i's preference arcs (d <= p_m machines, c <= p_r racks) and the job's tasks."""
        movable = len(job.running_machine) if model.preempt else 0
        if not len(job.wait_s) + movable:
            return
        values, of_machine = latency_row(root)
        costs = arc_costs(job.perf.values(values))  # d_ij,m (eq. 1)
        costs = costs if of_machine is None else costs[of_machine]
        worst = self.cluster.rack_worst(costs)  # c_ij,r (eq. 2)
        racks = np.flatnonzero(worst <= model.p_rack)
        # A machine arc no cheaper than its rack's arc is left out: E_i -> R_r -> M_m costs the same.
        machines = np.flatnonzero(costs <= model.p_machine)
        rack_arc = worst[self.cluster.rack[machines]]
        machines = machines[~((costs[machines] == rack_arc) & (rack_arc <= model.p_rack))]
        own = job.running_machine[:movable]
        self.jobs.append(index)
        self.preferences.append((machines, costs[machines], racks, worst[racks]))
        self.waits.append(np.concatenate([job.wait_s, np.zeros(movable)]))  # a preempted task waits from 0 (α = 0)
        self.kept.append((own, model.running_arcs(costs[own], job.running_s[:movable])))

    def solve(self, jobs: Sequence[Job], roots: np.ndarray, preempt: bool, model: CostModel) -> RoundArrays:
        pending = [np.full(len(job.wait_s), -1, dtype=np.int64) for job in jobs]
        running = [job.running_machine.copy() if preempt else np.zeros(0, dtype=np.int64) for job in jobs]
        if not self.jobs:
            return RoundArrays(roots, pending, running, 0, 0.0)
        arcs = self._arcs(model)
        solver = min_cost_flow.SimpleMinCostFlow()
        solver.add_arcs_with_capacity_and_unit_cost(*arcs.columns)
        solver.set_nodes_supplies(np.arange(arcs.nodes, dtype=np.int64), arcs.supplies)
        started, cpu = time.perf_counter(), time.thread_time()
        status = solver.solve()
        solver_s, solver_cpu_s = time.perf_counter() - started, time.thread_time() - cpu
        if status != solver.OPTIMAL:
            raise PlanningError(f"NoMora min-cost flow not solved: status {status}")
        flows = solver.flows(np.arange(len(arcs.columns[0]), dtype=np.int64))
        machines = len(self.free)
        pools = _RackPools(self.cluster, flows[machines:2 * machines])
        for slot, index in enumerate(self.jobs):
            pending[index], after = self._job_machines(slot, jobs[index], arcs, flows, pools)
            if preempt:
                running[index] = after
        return RoundArrays(roots, pending, running, int(solver.optimal_cost()) // arcs.scale, solver_s, solver_cpu_s)

    def _arcs(self, model: CostModel) -> _Arcs:
        machines, racks, count = len(self.free), self.cluster.racks, len(self.jobs)
        tasks = np.array([len(w) for w in self.waits], dtype=np.int64)
        unscheduled = 1 + machines + racks + np.arange(count, dtype=np.int64)  # U_i
        aggregator = unscheduled + count  # E_i
        first_task = 1 + machines + racks + 2 * count
        nodes = first_task + int(tasks.sum())
        owner = np.repeat(np.arange(count), tasks)  # job slot of every task
        task_nodes = np.arange(first_task, nodes, dtype=np.int64)
        to_machines = [len(p[0]) for p in self.preferences]
        to_racks = [len(p[2]) for p in self.preferences]
        kept_owner = np.repeat(np.arange(count), [len(k[0]) for k in self.kept])
        movable_nodes = task_nodes[np.concatenate([np.arange(t - len(k[0]), t) + f for t, k, f in
                                                   zip(tasks, self.kept, np.cumsum(tasks) - tasks)])].astype(np.int64)
        index = np.arange(machines, dtype=np.int64)
        groups = [  # (tails, heads, capacities, costs)
            (1 + index, np.zeros(machines), self.free, np.zeros(machines)),  # M_m -> S, capacity C minus kept tasks
            (1 + machines + self.cluster.rack, 1 + index, self.free, np.zeros(machines)),  # R_r -> M_m
            # U_i -> S: the paper sets capacity 1, infeasible once two of a job's tasks cannot run; one per task.
            (unscheduled, np.zeros(count), tasks, np.zeros(count)),
            (np.repeat(aggregator, to_machines), 1 + np.concatenate([p[0] for p in self.preferences]),
             np.repeat(tasks, to_machines), np.concatenate([p[1] for p in self.preferences])),  # E_i -> M_m, d
            (np.repeat(aggregator, to_racks), 1 + machines + np.concatenate([p[2] for p in self.preferences]),
             np.repeat(tasks, to_racks), np.concatenate([p[3] for p in self.preferences])),  # E_i -> R_r, c
            (task_nodes, unscheduled[owner], np.ones(len(owner)),
             model.unscheduled_arcs(np.concatenate(self.waits))),  # T_ij -> U_i, a = ω·α + γ
            (task_nodes, aggregator[owner], np.ones(len(owner)), np.zeros(len(owner))),  # T_ij -> E_i
            (movable_nodes, 1 + np.concatenate([k[0] for k in self.kept]), np.ones(len(kept_owner)),
             np.concatenate([k[1] for k in self.kept])),  # running T_ij -> own M_m, d − β
        ]
        columns = tuple(np.concatenate([np.asarray(g[c], dtype=np.int64) for g in groups]) for c in range(4))
        starts = np.cumsum([0] + [len(g[0]) for g in groups])
        scale = len(kept_owner) + 1
        if scale > 1:
            # Among equally cheap flows prefer the one moving fewest running tasks, as Firmament's incremental
            # solver keeps its previous flow: costs x scale, +1 on a running task's arcs leaving its machine.
            columns[3][:] *= scale
            leaving = np.zeros(len(owner), dtype=np.int64)
            leaving[movable_nodes - first_task] = 1
            columns[3][starts[5]:starts[7]] += np.tile(leaving, 2)
        supplies = np.zeros(nodes, dtype=np.int64)
        supplies[0], supplies[first_task:] = -len(owner), 1
        return _Arcs(columns, nodes, supplies, starts, scale, np.cumsum([0] + to_machines), np.cumsum([0] + to_racks),
                     np.cumsum(np.concatenate([[0], tasks])), np.cumsum([0] + [len(k[0]) for k in self.kept]))

    def _job_machines(self, slot: int, job: Job, arcs: _Arcs, flows: np.ndarray,
                      pools: _RackPools) -> tuple[np.ndarray, np.ndarray]:
        """Each task's machine after the round: through E_i (a preferred machine, or a rack's machine), kept, or -1."""
        machines, _, racks, _ = self.preferences[slot]
        m0, m1 = arcs.starts[3] + arcs.machine_arcs[slot], arcs.starts[3] + arcs.machine_arcs[slot + 1]
        r0, r1 = arcs.starts[4] + arcs.rack_arcs[slot], arcs.starts[4] + arcs.rack_arcs[slot + 1]
        via_aggregator = np.concatenate([np.repeat(machines, flows[m0:m1]),
                                         *(pools.take(r, int(f)) for r, f in zip(racks, flows[r0:r1]) if f)])
        t0, t1 = arcs.task_arcs[slot], arcs.task_arcs[slot + 1]
        result = np.full(t1 - t0, -1, dtype=np.int64)
        result[flows[arcs.starts[6] + t0:arcs.starts[6] + t1].astype(bool)] = via_aggregator
        pending = len(job.wait_s)
        k0, k1 = arcs.kept_arcs[slot], arcs.kept_arcs[slot + 1]
        stays = flows[arcs.starts[7] + k0:arcs.starts[7] + k1].astype(bool)
        result[pending:][stays] = job.running_machine[:k1 - k0][stays]
        return result[:pending], result[pending:]


@dataclass(frozen=True)
class _Arcs:
    """The round's arc columns (tails, heads, capacities, costs), supplies, and where each group starts."""

    columns: tuple[np.ndarray, ...]
    nodes: int
    supplies: np.ndarray
    starts: np.ndarray  # first arc of each group in _FlowNetwork._arcs
    scale: int  # costs were multiplied by it (tie-break towards keeping running tasks); the +1s sum below it
    machine_arcs: np.ndarray  # per job slot, offsets of its E_i -> M_m arcs within their group
    rack_arcs: np.ndarray
    task_arcs: np.ndarray
    kept_arcs: np.ndarray


class _RackPools:
    """The machines each rack aggregator's flow reached (R_r -> M_m), handed out to the jobs that sent it flow."""

    def __init__(self, cluster: Cluster, rack_flows: np.ndarray) -> None:
        order = cluster.by_rack
        self.machines = np.repeat(order, rack_flows[order])
        counts = np.bincount(cluster.rack[order], weights=rack_flows[order], minlength=cluster.racks).astype(np.int64)
        self.next = np.concatenate([[0], np.cumsum(counts)[:-1]])

    def take(self, rack: int, count: int) -> np.ndarray:
        start = self.next[rack]
        self.next[rack] += count
        return self.machines[start:start + count]
