import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from corral_yarn.errors import InputError
from corral_yarn.nomora.latency import LatencyMatrix
from corral_yarn.nomora.perf import PUBLISHED, arc_cost
from corral_yarn.nomora.policy import Application, CostModel, Machine, RunningTask, place_roots, schedule_round

MEMCACHED = PUBLISHED["memcached"]


def matrix(names, latency_of):
    """Symmetric matrix with latency_of(a, b) off the diagonal."""
    values = np.array([[0.0 if a == b else latency_of(a, b) for b in names] for a in names])
    return LatencyMatrix(tuple(names), values)


def brute_force(apps, machines, roots, latency, model):
    """Optimum over every task -> machine-or-unscheduled assignment under the paper's cost model
    (running tasks too when the model preempts: kept at d − β·ran, moved at d, preempted at γ)."""
    free = {m.name: m.free - sum(1 for a in apps if a.root_machine is None and roots.get(a.name) == m.name)
            + (sum(1 for a in apps for t in a.running if t.machine == m.name) if model.preempt else 0)
            for m in machines}
    options = []
    for app in apps:
        if app.name not in roots:
            continue
        cost = {m.name: arc_cost(app.perf(latency.latency(roots[app.name], m.name))) for m in machines}
        worst = {m.rack: max(cost[n.name] for n in machines if n.rack == m.rack) for m in machines}
        tasks = [(wait, None) for wait in app.wait_s] + [(0, t) for t in (app.running if model.preempt else ())]
        for wait, running in tasks:
            choices = [(None, model.unscheduled(wait))]
            for m in machines:
                routes = [cost[m.name]] if cost[m.name] <= model.p_machine else []
                routes += [worst[m.rack]] if worst[m.rack] <= model.p_rack else []
                if running is not None and running.machine == m.name:
                    routes.append(max(0, cost[m.name] - round(model.beta * running.ran_s)))
                if routes:
                    choices.append((m.name, min(routes)))
            options.append(choices)
    best = None
    for assignment in itertools.product(*options):
        used = {}
        for machine, _ in assignment:
            if machine is not None:
                used[machine] = used.get(machine, 0) + 1
        if all(count <= free[name] for name, count in used.items()):
            total = sum(cost for _, cost in assignment)
            best = total if best is None else min(best, total)
    return 0 if best is None else best


@st.composite
def instances(draw):
    names = [f"m{i}" for i in range(draw(st.integers(1, 4)))]
    pairs = {frozenset(p): draw(st.integers(0, 400)) for p in itertools.combinations(names, 2)}
    latency = matrix(names, lambda a, b: pairs[frozenset((a, b))])
    apps = []
    for i in range(draw(st.integers(1, 2))):
        root = draw(st.none() | st.sampled_from(names))
        waits = tuple(draw(st.lists(st.integers(0, 50), max_size=3)))
        running = () if root is None else tuple(
            RunningTask(draw(st.sampled_from(names)), draw(st.integers(0, 100))) for _ in range(draw(st.integers(0, 2))))
        apps.append(Application(f"app{i}", PUBLISHED[draw(st.sampled_from(sorted(PUBLISHED)))], waits, root, running))
    held = {n: sum(1 for a in apps for t in a.running if t.machine == n) for n in names}
    machines = []
    for n in names:
        slots = max(held[n], draw(st.integers(1, 2)))
        machines.append(Machine(n, f"r{draw(st.integers(0, 1))}", slots, draw(st.integers(held[n], slots))))
    model = CostModel(*draw(st.sampled_from([(105, 110), (150, 200), (300, 400)])), omega=draw(st.sampled_from([0, 1, 7])),
                      preempt=draw(st.booleans()), beta=draw(st.sampled_from([0, 0.5, 3])))
    return apps, machines, latency, model


@settings(max_examples=100, deadline=None)
@given(instances())
def test_min_cost_flow_matches_brute_force_optimum(instance):
    apps, machines, latency, model = instance
    result = schedule_round(apps, machines, latency, model)
    assert result.cost == brute_force(apps, machines, result.roots, latency, model)
    # The placements follow the flow: capacities respected and every pending task accounted for.
    placed = [machine for machine in result.placements.values() if machine is not None]
    if model.preempt:
        placed += [after for _, after in result.moves.values() if after is not None]
        assert set(result.moves) == {(a.name, k) for a in apps for k in range(len(a.running))}
    else:
        assert result.moves == {}
    _, after_roots = place_roots(apps, machines)
    for m in after_roots:
        released = sum(1 for a in apps for t in a.running if t.machine == m.name) if model.preempt else 0
        assert placed.count(m.name) <= m.free + released
    assert set(result.placements) == {(a.name, j) for a in apps for j in range(len(a.wait_s))}


def two_racks():
    """Rack 'near' (the root's full machine and 3 more, 10 µs apart), rack 'far' (4 machines) 300 µs away."""
    names = ["root", "near0", "near1", "near2", "far0", "far1", "far2", "far3"]
    rack = {n: ("far" if n.startswith("far") else "near") for n in names}
    latency = matrix(names, lambda a, b: 10.0 if rack[a] == rack[b] else 300.0)
    machines = [Machine(n, rack[n], slots=1, running=1 if n == "root" else 0) for n in names]  # root runs there
    return machines, latency


def test_latency_sensitive_tasks_go_to_the_low_latency_machines():
    machines, latency = two_racks()
    app = Application("kv", MEMCACHED, wait_s=(0, 0, 0), root_machine="root")
    result = schedule_round([app], machines, latency)
    assert sorted(result.placements.values()) == ["near0", "near1", "near2"]
    assert result.cost == 3 * 100


def test_capacity_is_respected_and_the_rest_waits_unscheduled():
    machines, latency = two_racks()
    app = Application("kv", MEMCACHED, wait_s=(5, 5, 5, 5, 5), root_machine="root")
    result = schedule_round([app], machines, latency)
    placed = [m for m in result.placements.values() if m is not None]
    assert sorted(placed) == ["near0", "near1", "near2"]  # the far rack is above p_m and p_r
    assert result.cost == 3 * 100 + 2 * (5 + 1001)


def test_every_arc_too_expensive_leaves_tasks_unscheduled():
    names = ["a", "b", "c"]
    latency = matrix(names, lambda a, b: 500.0)
    machines = [Machine("a", "r", slots=1, running=1)] + [Machine(n, "r", slots=4) for n in names[1:]]
    app = Application("kv", MEMCACHED, wait_s=(0, 12), root_machine="a")  # a is full; b, c are 500 µs away
    result = schedule_round([app], machines, latency, CostModel(omega=2))
    assert set(result.placements.values()) == {None}
    assert result.cost == (0 + 1001) + (24 + 1001)


def test_latency_insensitive_spark_takes_the_far_rack():
    machines, latency = two_racks()
    app = Application("etl", PUBLISHED["spark"], wait_s=(0,) * 7, root_machine="root")
    result = schedule_round([app], machines, latency)
    assert None not in result.placements.values() and result.cost == 7 * 100


def test_longest_waiting_task_gets_the_last_good_slot():
    machines, latency = two_racks()
    busy = [Machine(m.name, m.rack, m.slots, running=1 if m.name in ("root", "near1", "near2") else 0) for m in machines]
    fresh = Application("fresh", MEMCACHED, wait_s=(1,), root_machine="root")
    old = Application("old", MEMCACHED, wait_s=(30,), root_machine="root")
    result = schedule_round([fresh, old], busy, latency)
    assert result.placements == {("old", 0): "near0", ("fresh", 0): None}


def test_roots_are_placed_first_on_the_least_loaded_machine():
    machines, latency = two_racks()
    loaded = [Machine(m.name, m.rack, 2, running=0 if m.name == "far2" else 1) for m in machines]
    app = Application("kv", MEMCACHED, wait_s=(0, 0), root_machine=None)
    result = schedule_round([app], loaded, latency)
    assert result.roots == {"kv": "far2"}
    # Its tasks then prefer the root's rack: far2's own second slot and far0/1/3's second slots.
    assert all(m.startswith("far") for m in result.placements.values())


def test_an_application_whose_root_cannot_start_waits_entirely():
    names = ["a"]
    latency = matrix(names, lambda a, b: 0.0)
    app = Application("kv", MEMCACHED, wait_s=(0, 0), root_machine=None)
    result = schedule_round([app], [Machine("a", "r", 1, running=1)], latency)
    assert result.roots == {} and result.placements == {("kv", 0): None, ("kv", 1): None} and result.cost == 0


@pytest.mark.parametrize("machines,app,field", [
    ([Machine("zz", "r", 1)], Application("x", MEMCACHED, (0,)), "names"),
    ([Machine("a", "r", 0)], Application("x", MEMCACHED, (0,)), "machines[0]"),
    ([Machine("a", "r", 1, running=2)], Application("x", MEMCACHED, (0,)), "machines[0]"),
    ([Machine("a", "r", 1)], Application("x", MEMCACHED, (0,), root_machine="b"), "applications[0].root_machine"),
    ([Machine("a", "r", 1)], Application("x", MEMCACHED, (-1,)), "applications[0].wait_s"),
])
def test_bad_input_names_the_field(machines, app, field):
    latency = matrix(["a", "b"], lambda a, b: 1.0)
    with pytest.raises(InputError) as error:
        schedule_round([app], machines, latency)
    assert error.value.field == field


def stranded():
    """A Memcached task left running on the far rack while a near machine has come free."""
    machines, latency = two_racks()
    machines = [Machine(m.name, m.rack, m.slots, running=1 if m.name in ("root", "far0") else 0) for m in machines]
    return machines, latency, Application("kv", MEMCACHED, wait_s=(), root_machine="root",
                                          running=(RunningTask("far0", ran_s=600),))


def test_preemption_with_beta_zero_migrates_to_the_low_latency_rack():
    machines, latency, app = stranded()
    result = schedule_round([app], machines, latency, CostModel(preempt=True, beta=0))
    assert result.moves[("kv", 0)][0] == "far0" and result.moves[("kv", 0)][1].startswith("near")
    assert result.migrated == 1 and result.cost == 100


def test_executed_time_discount_keeps_a_long_running_task_in_place():
    machines, latency, app = stranded()
    far_cost = arc_cost(MEMCACHED(300.0))
    assert far_cost > 100
    result = schedule_round([app], machines, latency, CostModel(preempt=True, beta=1))
    assert result.moves == {("kv", 0): ("far0", "far0")} and result.migrated == 0 and result.cost == 0
    assert schedule_round([app], machines, latency, CostModel(preempt=False)).moves == {}


def test_running_tasks_must_match_the_machines_running_count():
    machines, latency, app = stranded()
    idle = [Machine(m.name, m.rack, m.slots) for m in machines]
    with pytest.raises(InputError) as error:
        schedule_round([app], idle, latency)
    assert error.value.field == "machines[4].running"
