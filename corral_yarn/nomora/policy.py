"""The NoMora policy as a flow network, one scheduling round (NoMora §"Latency-driven policy", Table 1).

Each pending task sends one unit of flow to the sink S through a machine M_m (placed there), a rack
aggregator R_r then one of the rack's machines, or its application's unscheduled aggregator U_i (waits).
Arc costs come from the application's performance-latency function at the latency from the machine of
the application's root task (eq. 1-2); the round is solved by OR-Tools' SimpleMinCostFlow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ortools.graph.python import min_cost_flow

from corral_yarn.errors import InputError, PlanningError
from corral_yarn.nomora.latency import LatencyMatrix
from corral_yarn.nomora.perf import PerfLatencyFunction, arc_cost

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
        return max(0, cost - int(round(self.beta * ran_s)))

    def unscheduled(self, wait_s: float) -> int:
        """a_ij = ω·α_ij + γ, rounded to an integer cost."""
        return int(round(self.omega * wait_s)) + self.gamma


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


def machine_costs(app_perf: PerfLatencyFunction, root: str, machines: Sequence[Machine],
                  latency: LatencyMatrix) -> dict[str, int]:
    """d_ij,m = cost(T_ij, M_m): the arc cost of 1/p(latency(M_root, M_m)) (eq. 1)."""
    return {m.name: arc_cost(app_perf(latency.latency(root, m.name))) for m in machines}


def rack_costs(costs: dict[str, int], machines: Sequence[Machine]) -> dict[str, int]:
    """c_ij,r: the worst machine cost in each rack (eq. 2)."""
    worst: dict[str, int] = {}
    for m in machines:
        worst[m.rack] = max(worst.get(m.rack, 0), costs[m.name])
    return worst


def place_roots(apps: Sequence[Application], machines: Sequence[Machine]) -> tuple[dict[str, str], list[Machine]]:
    """Root tasks first: each unplaced root goes to the least loaded machine with a free slot.

    The paper gives a root a 0-cost arc to the cluster aggregator ("scheduled immediately on any
    available machine"); the least loaded machine (lowest running/slots, then name) is that choice here.
    Returns the roots' machines and the machines with the new roots counted as running.
    """
    running = {m.name: m.running for m in machines}
    roots = {}
    for app in apps:
        if app.root_machine is not None:
            roots[app.name] = app.root_machine
            continue
        free = [m for m in machines if running[m.name] < m.slots]
        if free:
            chosen = min(free, key=lambda m: (running[m.name] / m.slots, m.name))
            running[chosen.name] += 1
            roots[app.name] = chosen.name
    return roots, [Machine(m.name, m.rack, m.slots, running[m.name]) for m in machines]


def schedule_round(apps: Sequence[Application], machines: Sequence[Machine], latency: LatencyMatrix,
                   model: CostModel = CostModel()) -> Round:
    """Place roots, then solve the round's flow network for every pending task of a placed root
    (and, when ``model.preempt``, every running non-root task, whose slot the round may give away)."""
    _validate(apps, machines, latency)
    roots, machines = place_roots(apps, machines)
    if model.preempt:
        machines = _release_running(apps, machines)
    network = _FlowNetwork(machines)
    for app in apps:
        if app.name in roots:
            network.add_application(app, roots[app.name], latency, model)
    flows, cost = network.solve()
    placements = {(app, j): machine for (kind, app, j), machine in flows.items() if kind == "pending"}
    for app in apps:
        if app.name not in roots:
            placements.update({(app.name, j): None for j in range(len(app.wait_s))})
    running = {(app.name, k): task.machine for app in apps for k, task in enumerate(app.running)}
    moves = {(app, k): (running[(app, k)], machine) for (kind, app, k), machine in flows.items() if kind == "running"}
    return Round(roots, placements, cost, moves)


def _release_running(apps: Sequence[Application], machines: Sequence[Machine]) -> list[Machine]:
    """Preempting round: running non-root tasks give their slots back to the network (they are re-placed)."""
    held = Counter(task.machine for app in apps for task in app.running)
    return [Machine(m.name, m.rack, m.slots, m.running - held[m.name]) for m in machines]


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
    """Vertices: sink S, machines M_m, rack aggregators R_r, then per application U_i and its tasks (Table 1)."""

    def __init__(self, machines: Sequence[Machine]) -> None:
        self.machines = list(machines)
        self.node = {("M", m.name): 1 + i for i, m in enumerate(machines)}
        racks = sorted({m.rack for m in machines})
        self.node.update({("R", r): 1 + len(machines) + i for i, r in enumerate(racks)})
        self.nodes = 1 + len(machines) + len(racks)  # node 0 is the sink
        self.arcs: list[tuple[int, int, int, int]] = []  # tail, head, capacity, cost
        self.labels: list[tuple] = []  # per arc: ("task", task id, (kind, name)) or ("rack", rack, machine)
        self.tasks: list[int] = []
        for m in machines:
            self._arc(self.node[("M", m.name)], 0, m.free, 0, ("sink",))  # M_m -> S, capacity C
            self._arc(self.node[("R", m.rack)], self.node[("M", m.name)], m.free, 0, ("rack", m.rack, m.name))

    def _arc(self, tail: int, head: int, capacity: int, cost: int, label: tuple) -> None:
        self.arcs.append((tail, head, capacity, cost))
        self.labels.append(label)

    def add_application(self, app: Application, root: str, latency: LatencyMatrix, model: CostModel) -> None:
        costs = machine_costs(app.perf, root, self.machines, latency)
        racks = rack_costs(costs, self.machines)
        movable = app.running if model.preempt else ()
        unscheduled, self.nodes = self.nodes, self.nodes + 1
        # U_i -> S: the paper sets capacity 1, infeasible once two of a job's tasks cannot run; one per task.
        self._arc(unscheduled, 0, len(app.wait_s) + len(movable), 0, ("unscheduled",))
        for j, wait in enumerate(app.wait_s):
            self._add_task(("pending", app.name, j), unscheduled, model.unscheduled(wait), costs, racks, model)
        for k, running in enumerate(movable):
            own = (running.machine, model.running_arc(costs[running.machine], running.ran_s))
            self._add_task(("running", app.name, k), unscheduled, model.unscheduled(0), costs, racks, model, own)

    def _add_task(self, task_id: tuple, unscheduled: int, unscheduled_cost: int, costs: dict[str, int],
                  racks: dict[str, int], model: CostModel, own: tuple[str, int] | None = None) -> None:
        """A task's arcs: U_i, its own machine if running (discounted), preferred machines and racks."""
        task, self.nodes = self.nodes, self.nodes + 1
        self.tasks.append(task)
        self._arc(task, unscheduled, 1, unscheduled_cost, ("task", task_id, ("U", None)))
        if own is not None:
            self._arc(task, self.node[("M", own[0])], 1, own[1], ("task", task_id, ("M", own[0])))
        for name in (n for n, cost in costs.items() if cost <= model.p_machine and (own is None or n != own[0])):
            self._arc(task, self.node[("M", name)], 1, costs[name], ("task", task_id, ("M", name)))
        for rack in (rack for rack, cost in racks.items() if cost <= model.p_rack):
            self._arc(task, self.node[("R", rack)], 1, racks[rack], ("task", task_id, ("R", rack)))

    def solve(self) -> tuple[dict[tuple, str | None], int]:
        if not self.tasks:
            return {}, 0
        solver = min_cost_flow.SimpleMinCostFlow()
        tails, heads, capacities, costs = (np.array(column, dtype=np.int64) for column in zip(*self.arcs))
        solver.add_arcs_with_capacity_and_unit_cost(tails, heads, capacities, costs)
        supplies = np.zeros(self.nodes, dtype=np.int64)
        supplies[self.tasks] = 1
        supplies[0] = -len(self.tasks)
        solver.set_nodes_supplies(np.arange(self.nodes, dtype=np.int64), supplies)
        status = solver.solve()
        if status != solver.OPTIMAL:
            raise PlanningError(f"NoMora min-cost flow not solved: status {status}")
        return self._placements(solver.flows(np.arange(len(self.arcs), dtype=np.int64))), int(solver.optimal_cost())

    def _placements(self, flows: np.ndarray) -> dict[tuple, str | None]:
        """Follow each task's unit of flow: to M_m, to U_i (None), or to R_r and on to one of the rack's M_m."""
        rack_machines: dict[str, list[str]] = {}
        for label, flow in zip(self.labels, flows):
            if label[0] == "rack":
                rack_machines.setdefault(label[1], []).extend([label[2]] * int(flow))
        placements: dict[tuple, str | None] = {}
        for label, flow in zip(self.labels, flows):
            if label[0] == "task" and flow:
                _, task, (kind, name) = label
                placements[task] = rack_machines[name].pop() if kind == "R" else name  # name is None for U_i
        return placements
