"""The prioritization orders against the brute-force optimum of tiny online instances (issue 13, item 3).

Reports, per order, the mean and worst ratio of the heuristic's mean completion time to the optimum
over every rack count and every order of list scheduling (``test_planner_bounds.optimum``)."""

from __future__ import annotations

import numpy as np
import pytest
from test_planner_bounds import optimum

from corral_yarn.planner import fast
from corral_yarn.planner.schedule import ORDERS, Order

INSTANCES = 150


def tiny_instances(seed: int = 13) -> list[tuple[np.ndarray, np.ndarray]]:
    """Up to 4 jobs on up to 3 racks: non-increasing real latencies or small integers (ties), arrivals
    all at 0 or drawn from a few values (jobs arriving together) or spread."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(INSTANCES):
        n_jobs, n_racks = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        if rng.integers(2):
            latency = -np.sort(-rng.uniform(1.0, 100.0, (n_jobs, n_racks)), axis=1)
        else:
            latency = rng.integers(1, 6, (n_jobs, n_racks)).astype(np.float64)
        arrival = [np.zeros(n_jobs), rng.choice([0.0, 0.0, 5.0, 30.0], n_jobs), rng.uniform(0.0, 100.0, n_jobs)][int(rng.integers(3))]
        out.append((latency, arrival))
    return out


@pytest.fixture(scope="module")
def ratios() -> dict[Order, np.ndarray]:
    cases = tiny_instances()
    best = [optimum("online", latency, arrival) for latency, arrival in cases]
    return {order: np.array([fast.plan("online", latency, arrival, order).objective / opt for (latency, arrival), opt in zip(cases, best)])
            for order in ORDERS}


def test_report_the_ratio_of_each_order_to_the_optimum(ratios: dict[Order, np.ndarray], record_property: pytest.RecordProperty) -> None:
    for order, r in ratios.items():
        record_property(f"{order}_mean_ratio", float(r.mean()))
        record_property(f"{order}_worst_ratio", float(r.max()))
        print(f"{order}: mean ratio to the optimum {r.mean():.3f}, worst {r.max():.3f} over {r.size} instances")
        assert r.min() >= 1.0 - 1e-12  # no heuristic beats the brute-force optimum
    # the default online order is the better one on average, and in the worst case no worse
    assert ratios["shortest-work"].mean() < ratios["thesis"].mean()
    assert ratios["shortest-work"].max() <= ratios["thesis"].max()


def test_shortest_work_runs_the_short_job_first_when_jobs_arrive_together() -> None:
    # one rack, both at 0: the thesis runs the longer job first (completions 5, 6); shortest-work 1, 6
    latency, arrival = np.array([[5.0], [1.0]]), np.zeros(2)
    assert fast.plan("online", latency, arrival, "thesis").objective == 5.5
    assert fast.plan("online", latency, arrival, "shortest-work").objective == 3.5 == optimum("online", latency, arrival)
