"""The reference planner (thesis §4.3.4, Fig. 4.2) on cases worked out by hand."""

from __future__ import annotations

import numpy as np

from corral_yarn.planner.reference import plan, prioritize


def test_one_job_takes_every_rack_when_that_is_fastest() -> None:
    s = plan("batch", np.array([[6.0, 3.0, 2.0]]), np.zeros(1))
    assert s.rack_counts.tolist() == [3]
    assert s.rack_sets == ((0, 1, 2),)
    assert s.objective == 2.0


def test_keeps_the_first_of_equally_good_candidates() -> None:
    # candidates: (1,1) -> makespan 4; (2,1) -> 6; (2,2) -> jobs one after the other, 4 again
    s = plan("batch", np.array([[4.0, 2.0], [4.0, 2.0]]), np.zeros(2))
    assert s.rack_counts.tolist() == [1, 1]
    assert s.rack_sets == ((0,), (1,))
    assert s.start.tolist() == [0.0, 0.0]
    assert s.order == (0, 1)  # equal width and length: lower index first
    assert s.objective == 4.0


def test_batch_widens_the_longest_job_and_stops_at_the_best_makespan() -> None:
    # (1,1) -> 9; (2,1) -> job 0 on racks 0-1 for 5, job 1 on rack 2 for 3 -> 5; wider -> 7
    s = plan("batch", np.array([[9.0, 5.0, 4.0], [3.0, 3.0, 3.0]]), np.array([7.0, 0.0]))
    assert s.rack_counts.tolist() == [2, 1]
    assert s.rack_sets == ((0, 1), (2,))
    assert s.start.tolist() == [0.0, 0.0]  # batch ignores arrival times
    assert s.objective == 5.0


def test_batch_order_is_widest_first() -> None:
    s = prioritize("batch", np.array([[9.0, 5.0, 4.0], [3.0, 3.0, 3.0]]), np.zeros(2), np.array([1, 2]))
    assert s.order == (1, 0)
    assert s.rack_sets == ((2,), (0, 1))
    assert s.objective == 9.0


def test_online_orders_by_arrival_then_longest_and_takes_racks_by_free_time_then_index() -> None:
    latency = np.array([[1.0, 1.0], [3.0, 10.0], [2.0, 10.0]])
    s = plan("online", latency, np.array([5.0, 0.0, 0.0]))
    assert s.rack_counts.tolist() == [1, 1, 1]
    assert s.order == (1, 2, 0)  # arrivals 0, 0, 5; among the first two the longer goes first
    assert s.rack_sets == ((1,), (0,), (1,))  # job 0 takes rack 1, free at 2 (rack 0 at 3)
    assert s.start.tolist() == [5.0, 0.0, 0.0]  # job 0 waits for its arrival
    assert s.objective == (1.0 + 3.0 + 2.0) / 3
