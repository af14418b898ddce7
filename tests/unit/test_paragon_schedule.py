"""Paragon's greedy QoS-aware scheduler (paper 003 §3.2), its statistical variant and the baselines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from corral_yarn.paragon import schedule as s


NO_TIMEOUT = math.inf  # the search's logic, not its wall-clock timeout: a 50 ms pause of the process under load
# fired the timeout mid-search and failed these tests (reproduced with a clock that steps 30 ms per read)


def cluster(sc: list[int], cores: list[int] | None = None, n_soi: int = 3, rule: str | None = None) -> s.Servers:
    cores = cores or [4] * len(sc)
    extra = {} if rule is None else {"tolerated_rule": rule}
    return s.Servers(sc=np.array(sc), cores=np.array(cores), capacity=np.ones(len(sc)), n_soi=n_soi, **extra)


def job(best: int, tolerated: list[float], caused: list[float], n_sc: int = 2, cores: int = 1) -> s.Job:
    score = np.zeros(n_sc)
    score[best] = 1.0
    return s.Job(sc_score=score, tolerated=np.array(tolerated), caused=np.array(caused), cores=cores)


def test_server_sensitivity_as_written_is_min_tolerated_and_sum_caused() -> None:
    servers = cluster([0], rule="min")
    servers.place(0, 1, 1, np.array([0.5, 0.9, 0.7]), np.array([0.1, 0.2, 0.0]))
    servers.place(0, 2, 1, np.array([0.8, 0.4, 0.7]), np.array([0.1, 0.1, 0.3]))
    np.testing.assert_allclose(servers.tolerated[0], [0.5, 0.4, 0.7])
    np.testing.assert_allclose(servers.caused[0], [0.2, 0.3, 0.3])
    servers.remove(0, 2, 1, np.array([0.1, 0.1, 0.3]))
    np.testing.assert_allclose(servers.tolerated[0], [0.5, 0.9, 0.7])
    np.testing.assert_allclose(servers.caused[0], [0.1, 0.2, 0.0])


def test_the_default_headroom_subtracts_what_the_other_residents_cause() -> None:
    servers = cluster([0])
    assert servers.tolerated_rule == "headroom"
    servers.place(0, 1, 1, np.array([0.5, 0.9, 0.7]), np.array([0.1, 0.2, 0.0]))
    np.testing.assert_allclose(servers.tolerated[0], [0.5, 0.9, 0.7])  # alone: nothing else presses on it
    servers.place(0, 2, 1, np.array([0.8, 0.4, 0.7]), np.array([0.1, 0.1, 0.3]))
    # job 1: t - c_2 = (0.4, 0.8, 0.4); job 2: t - c_1 = (0.7, 0.2, 0.7); the least per SoI
    np.testing.assert_allclose(servers.tolerated[0], [0.4, 0.2, 0.4])
    servers.remove(0, 1, 1, np.array([0.1, 0.2, 0.0]))
    np.testing.assert_allclose(servers.tolerated[0], [0.8, 0.4, 0.7])
    with pytest.raises(ValueError, match="tolerated_rule: unknown 'max'"):
        cluster([0], rule="max")


def test_greedy_avoids_a_server_whose_load_cannot_tolerate_the_job_then_prefers_the_best_sc() -> None:
    servers = cluster([1, 1, 0])
    servers.place(0, 10, 1, np.array([0.1, 1.0, 1.0]), np.zeros(3))  # tolerates little on SoI 0
    new = job(best=1, tolerated=[1.0, 1.0, 1.0], caused=[0.5, 0.0, 0.0])
    chosen, backtracks = s.greedy(servers, new, timeout_s=NO_TIMEOUT)
    assert chosen == 1 and backtracks == 0
    assert s.heterogeneity_oblivious(servers, new, timeout_s=NO_TIMEOUT) in (1, 2)


def test_min_deviation_among_the_best_sc_packs_the_server_that_fits_tightly() -> None:
    servers = cluster([0, 0])
    servers.place(0, 10, 1, np.array([0.6, 0.6, 0.6]), np.array([0.5, 0.5, 0.5]))
    new = job(best=0, tolerated=[0.6, 0.6, 0.6], caused=[0.5, 0.5, 0.5])
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 0  # D1 = 0.1, D2 = 0.1 beats the empty server's 0.5 and 0.6


def test_backtracking_relaxes_qos_when_no_server_satisfies_every_soi() -> None:
    servers = cluster([0, 0])
    servers.place(0, 10, 1, np.array([0.2, 1.0, 1.0]), np.zeros(3))
    servers.place(1, 11, 1, np.array([1.0, 0.1, 1.0]), np.zeros(3))
    new = job(best=0, tolerated=[1.0, 1.0, 1.0], caused=[0.3, 0.3, 0.0])
    chosen, backtracks = s.greedy(servers, new, timeout_s=NO_TIMEOUT)
    assert backtracks > 0 and chosen == 0  # server 0 violates SoI 0 by 0.1, server 1 violates SoI 1 by 0.2


def test_the_sc_qos_rule_relaxes_interference_on_the_best_sc_rather_than_leave_for_a_slower_one() -> None:
    servers = cluster([1, 0])
    servers.place(0, 10, 1, np.array([0.2, 1.0, 1.0]), np.zeros(3))  # the best SC's only server: D1 = -0.1 on SoI 0
    new = job(best=1, tolerated=[1.0, 1.0, 1.0], caused=[0.3, 0.0, 0.0])  # SC 0 predicted at exp(-1) of SC 1: a QoS miss
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT) == (1, 0)  # §3.2 as written: the best SC among the survivors
    chosen, backtracks = s.greedy(servers, new, timeout_s=NO_TIMEOUT, sc_rule="sc_qos")
    assert chosen == 0 and backtracks > 0
    near = s.Job(sc_score=np.array([np.log(0.96), 0.0]), tolerated=new.tolerated, caused=new.caused, cores=1)
    assert s.greedy(servers, near, timeout_s=NO_TIMEOUT, sc_rule="sc_qos") == (1, 0)  # SC 0 within 5 %: as the default
    servers.place(0, 11, 3, np.ones(3), np.zeros(3))  # the best SC's server full: the base is as the default's
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT, sc_rule="sc_qos") == (1, 0)
    with pytest.raises(ValueError, match="sc_rule: unknown 'best'"):
        s.greedy(servers, new, sc_rule="best")


def test_timeout_selects_among_the_servers_examined() -> None:
    servers = cluster([0, 1])
    new = job(best=1, tolerated=[1.0, 1.0, 1.0], caused=[0.1, 0.1, 0.1])
    assert s.greedy(servers, new, timeout_s=-1.0)[0] == 1  # no SoI examined: best SC of all candidates


def test_full_servers_are_not_candidates_until_all_are_full() -> None:
    servers = cluster([1, 0], cores=[1, 1])
    servers.place(0, 10, 1, np.ones(3), np.zeros(3))
    new = job(best=1, tolerated=[1.0] * 3, caused=[0.0] * 3)
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 1 and s.interference_oblivious(servers, new, np.random.default_rng(0)) == 1


def test_the_d1_chain_follows_caused_and_the_d2_chain_tolerated_scores() -> None:
    servers = cluster([0, 0], n_soi=2)
    servers.place(0, 10, 1, np.array([0.4, 1.0]), np.zeros(2))  # D1 on SoI 0 is -0.1 for the new job
    servers.place(1, 11, 1, np.ones(2), np.array([0.0, 0.5]))  # D2 on SoI 1 is -0.1
    new = job(best=0, tolerated=[1.0, 0.4], caused=[0.5, 0.1])
    # D1 chain first (SoI 0, the new job's highest caused score), then the D2 chain (SoI 1, its lowest
    # tolerated score): the D2 step empties the set and backtracking relaxes the D1 chain, so server 0.
    # One chain on min(D1, D2) by max(c, 1 - t) examined SoI 1 first and relaxed it: server 1.
    chosen, backtracks = s.greedy(servers, new, timeout_s=NO_TIMEOUT)
    assert chosen == 0 and backtracks > 0


def test_interference_oblivious_picks_any_server_of_the_best_sc_not_the_emptiest() -> None:
    servers = cluster([0, 0, 0, 1], cores=[4, 4, 4, 4])
    servers.place(0, 10, 3, np.ones(3), np.zeros(3))
    new = job(best=0, tolerated=[1.0] * 3, caused=[0.0] * 3)
    rng = np.random.default_rng(0)
    picks = {s.interference_oblivious(servers, new, rng) for _ in range(60)}
    assert picks == {0, 1, 2}  # the loaded server 0 too: no interference information; never SC 1


def test_random_assigns_to_any_server_full_or_not() -> None:
    servers = cluster([1, 0], cores=[1, 1])
    servers.place(0, 10, 1, np.ones(3), np.zeros(3))
    new = job(best=1, tolerated=[1.0] * 3, caused=[0.0] * 3)
    rng = np.random.default_rng(0)
    assert {s.random_server(servers, new, rng) for _ in range(40)} == {0, 1}


def test_quality_orders_candidates_and_is_normalised() -> None:
    t = np.array([[0.5, 0.5], [1.0, 1.0], [0.1, 0.1]])
    q = s.quality(t, np.array([0.4, 0.4]))
    assert q.argmax() == 0 and q.argmin() == 2 and q.min() == 0.0 and q.max() == 1.0


def test_hash_sampling_is_deterministic_and_spread() -> None:
    servers = cluster(list(range(10)) * 100)
    new = job(best=0, tolerated=[1.0] * 3, caused=[0.2, 0.5, 0.7])
    a, b = s.sample(servers, new, 64), s.sample(servers, new, 64)
    np.testing.assert_array_equal(a, b)
    assert 50 <= a.size <= 64 and np.unique(a).size == a.size and a.max() > 500 and a.min() < 500
    other = job(best=0, tolerated=[1.0] * 3, caused=[0.3, 0.5, 0.7])
    assert set(s.sample(servers, other, 64)) != set(a)


def test_a_server_tolerating_exactly_the_jobs_caused_score_is_sampled_first() -> None:
    servers = cluster(list(range(10)) * 100)
    new = job(best=0, tolerated=[1.0] * 3, caused=[0.3, 0.5, 0.7])
    servers.place(417, 1, 1, np.array([0.3, 0.9, 0.9]), np.zeros(3))  # D1 = 0 on SoI 0: §3.2's optimal candidate
    assert s.sample(servers, new, 64)[0] == 417
    assert servers.hashed[417, 0] == s.h(0, int(s.quantise(np.array([0.3]))[0]))  # hashed again when its load changed
    servers.remove(417, 1, 1, np.zeros(3))
    np.testing.assert_array_equal(servers.hashed[417], servers.hashed[416])
    assert s.sample(servers, new, 64)[0] != 417


def test_spread_ties_give_each_server_of_one_hashed_score_its_own_point() -> None:
    hashed = np.array([100, 7, 100, 100, 100])
    np.testing.assert_array_equal(s.ring_points(hashed, spread_ties=False), hashed)
    points = s.ring_points(hashed, spread_ties=True)
    assert points[1] == 7 and points[0] == 100  # a lone score, and the first of the group, at their hash
    np.testing.assert_array_equal(np.sort(points[[0, 2, 3, 4]]), np.sort((100 + np.arange(4) * 4096) % 16384))
    servers = cluster(list(range(10)) * 100)
    for u in range(0, 1000, 2):  # half the servers loaded (each its own score), half empty (one score)
        servers.place(u, u, 1, np.full(3, 0.2 + u / 2000), np.zeros(3))
    new = job(best=0, tolerated=[1.0] * 3, caused=[0.2, 0.5, 0.7])
    empty = servers.used == 0
    assert empty[s.sample(servers, new, 64, spread_ties=False)].mean() < 0.1  # §3.2's ring: the empty servers are one point
    assert 0.3 < empty[s.sample(servers, new, 64, spread_ties=True)].mean() < 0.7


def test_the_statistical_sampler_spreads_ties_by_default() -> None:
    servers = cluster(list(range(10)) * 100)
    for u in range(0, 1000, 2):
        servers.place(u, u, 1, np.full(3, 0.2 + u / 2000), np.zeros(3))
    new = job(best=0, tolerated=[1.0] * 3, caused=[0.2, 0.5, 0.7])
    np.testing.assert_array_equal(s.sample(servers, new, 64), s.sample(servers, new, 64, spread_ties=True))
    assert set(s.sample(servers, new, 64)) != set(s.sample(servers, new, 64, spread_ties=False))
    ten = job(best=0, tolerated=[1.0] * 3, caused=[0.2, 0.5, 0.7], n_sc=10)
    assert s.statistical(servers, ten) in set(s.sample(servers, ten, 64, spread_ties=True))


def test_a_server_holding_a_deviating_job_takes_no_new_job_while_another_has_room() -> None:
    servers = cluster([1, 1])
    servers.place(0, 10, 1, np.array([0.5, 1.0, 1.0]), np.array([0.3, 0.0, 0.0]))
    new = job(best=1, tolerated=[1.0, 1.0, 1.0], caused=[0.2, 0.0, 0.0])
    # server 0: D1 = (0.3, 1, 1), D2 = (0.7, 1, 1), L1 4.0; the empty server 1: D1 = (0.8, 1, 1), D2 = 1, L1 5.8
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 0
    servers.flag(0, 10)  # §3.4: job 10's measured performance deviated from its prediction
    servers.flag(0, 10)  # counted once
    assert servers.deviating.tolist() == [1, 0] and servers.flagged == {10}
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 1
    servers.place(1, 11, 4, np.ones(3), np.zeros(3))  # server 1 full: the deviating server is the only one with room
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 0
    servers.remove(1, 11, 4, np.zeros(3))
    servers.remove(0, 10, 1, np.array([0.3, 0.0, 0.0]))  # the deviating job left: its server is trusted again
    assert servers.deviating.tolist() == [0, 0] and servers.flagged == set()
    servers.place(0, 10, 1, np.array([0.5, 1.0, 1.0]), np.array([0.3, 0.0, 0.0]))
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT)[0] == 0
    assert s.greedy(servers, new, timeout_s=NO_TIMEOUT, avoid=frozenset({0}))[0] == 1  # a migrating job avoids its old server


def test_the_guard_band_refuses_a_server_that_d_ge_0_accepts_without_it() -> None:
    resident = s.Job(sc_score=np.zeros(2), tolerated=np.array([0.75]), caused=np.array([0.25]), cores=1,
                     band=(np.array([0.125]), np.array([0.125])))
    new = s.Job(sc_score=np.array([1.0, 0.0]), tolerated=np.array([0.5]), caused=np.array([0.25]), cores=1,
                band=(np.array([0.25]), np.array([0.25])))

    def chosen(k: float) -> int:
        servers = cluster([0, 1], n_soi=1)  # server 0 of the new job's best SC holds the resident, server 1 is empty
        r = s.guarded(resident, k)
        servers.place(0, 1, 1, r.tolerated, r.caused)
        return s.greedy(servers, s.guarded(new, k), timeout_s=NO_TIMEOUT)

    # k = 0: D1 = 0.75 - 0.25 = 0.5, D2 = 0.5 - 0.25 = 0.25 on server 0, its best SC: taken
    assert chosen(0.0) == (0, 0)
    # k = 1: the resident causes 0.375, the new job tolerates 0.25: D2 = -0.125 on server 0; server 1 (D2 = 0.25) instead
    assert chosen(1.0) == (1, 0)
    np.testing.assert_array_equal(s.guarded(new, 1.0).caused, [0.5])


def test_the_guard_band_stays_in_0_1_and_leaves_exact_rows_as_they_are() -> None:
    exact = job(0, [0.1, 0.9], [0.05, 0.95])
    assert s.guarded(exact, 2.0) is exact
    banded = s.Job(sc_score=np.zeros(2), tolerated=np.array([0.1, 0.9]), caused=np.array([0.05, 0.95]), cores=1,
                   band=(np.array([0.2, 0.0]), np.array([0.0, 0.2])))
    g = s.guarded(banded, 1.0)
    np.testing.assert_allclose(g.tolerated, [0.0, 0.9])
    np.testing.assert_allclose(g.caused, [0.05, 1.0])
    assert s.guarded(banded, 0.0) is banded
