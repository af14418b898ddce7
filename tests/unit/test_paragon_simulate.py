"""Paragon's evaluation on generated ground truth (paper 003 §4-5)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from corral_yarn.paragon import classify as c
from corral_yarn.paragon import groundtruth as g
from corral_yarn.paragon import simulate as sim
from corral_yarn.paragon.schedule import Servers, statistical


def truth(n: int, seed: int = 0) -> g.Truth:
    return g.jobs(g.world(seed), n, np.random.default_rng(seed + 1))


def test_the_cluster_is_the_papers() -> None:
    sc, cores, _ = g.servers()
    assert sc.size == 1000 and np.unique(sc).size == 14 and cores.sum() == 4960


def sc_cores() -> np.ndarray:
    return np.array([c[1] for c in g.SERVER_CONFIGS])


def test_alone_on_the_best_sc_is_full_performance_and_co_location_degrades() -> None:
    t = truth(3)
    best, want = int(t.speed[0].argmax()), int(t.cores[0])
    cores = int(sc_cores()[best])
    assert sim.performance(t, best, cores, [], want, 0) == pytest.approx(1.0)
    worse = int(t.speed[0].argmin())
    assert sim.performance(t, worse, int(sc_cores()[worse]), [], want, 0) < 1.0
    assert sim.performance(t, best, cores, [1, 2], want + int(t.cores[1] + t.cores[2]), 0) < 1.0
    over = max(cores, want) * 2  # the server's cores shared among twice what it can run: half of alone
    assert sim.performance(t, best, cores, [], over, 0) == pytest.approx(min(1.0, want * cores / over / min(cores, want)))


def test_a_job_loses_five_percent_at_exactly_its_tolerated_pressure() -> None:
    t = truth(2)
    t.tolerated[0] = 1.0
    t.tolerated[0, 3] = 0.4
    t.caused[1] = 0.0
    t.caused[1, 3] = 0.4  # one SoI at the job's tolerated score (§2.3: QoS is then just violated)
    best, used = int(t.speed[0].argmax()), int(t.cores[0] + t.cores[1])
    at = sim.performance(t, best, 4, [1], used, 0)  # 4 cores: the reference capacity, pressure = caused score
    fewer = sim.performance(t, best, 4, [], used, 0)  # the same core share, no pressure
    assert at / fewer == pytest.approx(0.95)
    t.caused[1, 3] = 0.2
    assert sim.performance(t, best, 4, [1], used, 0) / fewer == pytest.approx(0.975)


def test_speed_counts_the_cores_of_the_sc_and_jobs_are_the_papers_mix() -> None:
    t = truth(6000)
    assert set(np.unique(t.cores)) == {1, 2, 4, 8}
    assert abs(np.mean(t.cores == 1) - 1 / 3) < 0.03 and abs(np.mean(t.cores == 8) - 1 / 9) < 0.02
    one = sc_cores() == 1
    eight, single = t.cores == 8, t.cores == 1
    # on the 1-core SCs an 8-thread job runs at 1/8 of its per-thread speed: far below its best
    assert np.median(t.speed[eight][:, one].max(axis=1) / t.speed[eight].max(axis=1)) < 0.2
    assert np.median(t.speed[single][:, one].max(axis=1) / t.speed[single].max(axis=1)) > 0.5


def test_network_and_storage_are_not_saturated() -> None:
    t = truth(2000)
    io = [g.SOURCES_OF_INTERFERENCE.index(k) for k in ("network", "storage")]
    rest = [k for k in range(len(g.SOURCES_OF_INTERFERENCE)) if k not in io]
    assert t.tolerated[:, io].mean() > 0.9 > t.tolerated[:, rest].mean()
    assert t.caused[:, io].mean() < 0.1 < t.caused[:, rest].mean()


def test_scenarios_arrive_one_per_second_with_the_oversubscribed_burst() -> None:
    at = sim.arrivals(10, 4)
    assert at.size == 14 and np.sum((at >= 5) & (at < 5.2)) == 5  # the 6th steady arrival and the burst of 4
    d = sim.mean_duration(2500, 1000)
    assert d * (1 - np.exp(-2500 / d)) == pytest.approx(1000, rel=1e-6)


def test_with_exact_classification_paragon_beats_the_baselines_that_ignore_a_dimension() -> None:
    t = truth(2500)
    jobs = sim.exact_jobs(t)
    assert jobs[7].cores == t.cores[7] and np.array_equal(jobs[7].sc_score, np.log(t.speed[7]))
    names = ("paragon", "heterogeneity_oblivious", "interference_oblivious", "random")
    qos = {name: sim.run(t, jobs, "low", name, seed=0).qos_fraction for name in names}
    # measured 0.96 / 0.30 / 0.71 / 0.14 (session 11's interference, Fig. 1's 34 %, the least-headroom server state;
    # with the literal minimum Paragon's is 0.80)
    assert qos["paragon"] > 0.9 and qos["paragon"] > qos["heterogeneity_oblivious"] + 0.3 and qos["paragon"] > qos["random"] + 0.3
    assert qos["paragon"] > qos["interference_oblivious"] + 0.15
    assert sim.run(t, jobs, "low", "paragon", seed=0, tolerated_rule="min").qos_fraction < qos["paragon"]


def test_classified_workloads_come_only_from_profiles_and_bad_input_is_named() -> None:
    w = g.world(0)
    rng = np.random.default_rng(0)
    trained = sim.models(w, 30, rng)
    t = g.jobs(w, 20, rng)
    c = sim.classify_workloads(trained, t, np.random.default_rng(5), batch=7)
    assert len(c.jobs) == 20 and len(c.batch_ms) == 3 and 0 <= c.accuracy["best_sc"] <= 1
    with pytest.raises(ValueError, match="scenario 'low' takes 2500 workloads"):
        sim.run(t, c.jobs, "low", "paragon", seed=0)
    with pytest.raises(ValueError, match="unknown 'fifo'"):
        sim.choose(None, c.jobs[0], "fifo", rng)


def test_the_known_core_cut_is_not_learned_but_added_to_the_prediction() -> None:
    w = g.world(0)
    rng = np.random.default_rng(0)
    trained = sim.models(w, 30, rng)
    t = g.jobs(w, 200, rng)
    seen = g.profile(t, np.random.default_rng(5))
    per_core = np.log(t.speed / g.fit(t.cores))
    np.testing.assert_allclose(seen.sc.values, np.take_along_axis(per_core, seen.sc.cols, axis=1))
    c = sim.classify_workloads(trained, t, np.random.default_rng(5), batch=10)
    narrow = sc_cores() < 8
    for j in np.flatnonzero(t.cores == 8):  # a cut of up to 1/8 on the narrow SCs: never predicted best there
        assert not narrow[int(np.argmax(c.jobs[j].sc_score))]


def test_the_local_cluster_is_table_3_and_expected_speed_is_the_noise_free_part() -> None:
    assert len(g.LOCAL_CLUSTER) == 10 and sum(c[2] for c in g.LOCAL_CLUSTER) == 40
    assert sum(c[1] * c[2] for c in g.LOCAL_CLUSTER) == 178
    w = g.world(0, g.LOCAL_CLUSTER, noise=0.0)
    t = g.jobs(w, 50, np.random.default_rng(1))
    assert t.speed.shape == (50, 10)
    np.testing.assert_allclose(t.speed, t.expected)
    np.testing.assert_allclose(t.fit, g.fit(t.cores, w.sc_cores))


def test_grown_matrices_change_only_the_grown_predictions_and_see_only_profiles() -> None:
    w = g.world(0)
    trained = sim.models(w, 30, np.random.default_rng(0))
    t = g.jobs(w, 40, np.random.default_rng(1))
    static = sim.classify_workloads(trained, t, np.random.default_rng(5), batch=10)
    grown = sim.classify_workloads(trained, t, np.random.default_rng(5), batch=10, grow_every=20, grown=("tolerated", "caused"))
    for a, b in zip(static.jobs, grown.jobs):
        np.testing.assert_array_equal(a.sc_score, b.sc_score)  # the SC matrix not grown
    assert all(np.array_equal(a.caused, b.caused) for a, b in zip(static.jobs[:20], grown.jobs[:20]))  # before the first growth
    assert not all(np.array_equal(a.caused, b.caused) for a, b in zip(static.jobs[20:], grown.jobs[20:]))
    seen = g.profile(t, np.random.default_rng(5), sc_cols=trained.profile_scs, soi_cols=trained.profile_sois)
    hidden = np.ones_like(t.tolerated, dtype=bool)
    np.put_along_axis(hidden, seen.tolerated.cols, False, axis=1)
    changed = dataclasses.replace(t, tolerated=np.where(hidden, 1 - t.tolerated, t.tolerated),
                                  caused=np.where(hidden, 1 - t.caused, t.caused))
    again = sim.classify_workloads(trained, changed, np.random.default_rng(5), batch=10, grow_every=20)
    full = sim.classify_workloads(trained, t, np.random.default_rng(5), batch=10, grow_every=20)
    for a, b in zip(full.jobs, again.jobs):  # the rows added back are the profiled entries, never the truth's others
        np.testing.assert_array_equal(a.tolerated, b.tolerated)
        np.testing.assert_array_equal(a.caused, b.caused)
    with pytest.raises(ValueError, match="grown: unknown matrices \\['speed'\\]"):
        sim.classify_workloads(trained, t, np.random.default_rng(5), batch=10, grow_every=20, grown=("speed",))


def test_accuracy_by_arrival_windows_and_the_tolerated_rule_is_validated() -> None:
    t = truth(2500)
    jobs = sim.exact_jobs(t)
    by = sim.accuracy_by_arrival(jobs, t, 1000)
    assert list(by) == [0, 1000, 2000] and by[2000]["best_sc"] == 1.0 and by[0]["interference_err"] == 0.0
    with pytest.raises(ValueError, match="tolerated_rule: unknown 'max'"):
        sim.run(t, jobs, "low", "paragon", seed=0, tolerated_rule="max")


def test_an_unknown_ground_truth_is_named() -> None:
    with pytest.raises(ValueError, match="truth: unknown 'smooth'"):
        g.world(0, truth="smooth")


def test_table1_as_a_two_profile_ceiling_holds_on_the_frontier_only_with_session_11s_noise() -> None:
    ends = (0, len(g.SERVER_CONFIGS) - 1)  # t1.micro and cc2.8xlarge, the profiling SCs validation chooses on the frontier
    frontier = g.heterogeneity_facts(g.world(0, truth="frontier"), g.SERVER_CONFIGS, 4000, np.random.default_rng(7), ends)
    old = g.heterogeneity_facts(g.world(0, noise=0.03, second_concept=0.1), g.SERVER_CONFIGS, 4000, np.random.default_rng(7), ends)
    classes = g.heterogeneity_facts(g.world(0, truth="classes"), g.SERVER_CONFIGS, 4000, np.random.default_rng(7), (3, 12))
    assert frontier["two_profile_best_sc"] >= 0.86 and frontier["two_profile_within_5pct"] >= 0.91  # Table 1 (measured 0.87 / 1.0)
    assert old["two_profile_best_sc"] < 0.6 and old["ceiling_best_sc"] < 0.86  # sessions 1-10: 0.46 from two profiles
    assert classes["ceiling_best_sc"] >= 0.86 and classes["ceiling_within_5pct"] >= 0.91  # noise-free ceiling only (noise 0.03)
    assert classes["two_profile_best_sc"] < 0.6  # its three characteristics: two profiles cannot tell the class
    # Fig. 1's spread in both: 0.81 and 0.84 (the frontier's 0.82 at noise 0.03: a noisier row is further from its best)
    assert abs(classes["oblivious_performance_mean"] - frontier["oblivious_performance_mean"]) < 0.05


def test_in_the_classes_truth_each_sc_is_best_for_about_its_share_of_the_cores() -> None:
    w = g.world(0, truth="classes")
    t = g.jobs(w, 6000, np.random.default_rng(1))
    best = np.bincount((t.expected / t.fit).argmax(axis=1), minlength=w.share.size) / 6000
    np.testing.assert_allclose(best, w.share, atol=0.03)
    assert g.sweet_spots(14).shape == (14, 3)
    np.testing.assert_allclose(np.linalg.norm(g.sweet_spots(14), axis=1), 1.0)


def test_growth_by_an_unknown_solver_is_named() -> None:
    w = g.world(0)
    rng = np.random.default_rng(1)
    trained = sim.models(w, 20, rng)
    with pytest.raises(ValueError, match="grow_solver: unknown 'als'"):
        sim.classify_workloads(trained, g.jobs(w, 20, rng), rng, 10, grow_every=10, grow_solver="als")


def test_the_statistical_scheduler_spreads_ties_and_the_ring_as_written_stays_selectable() -> None:
    t = truth(40)
    jobs = sim.exact_jobs(t)
    sc, cores, cap = g.servers()
    servers = Servers(sc=sc, cores=cores, capacity=cap, n_soi=t.caused.shape[1])
    for j in range(30):  # some servers loaded, most empty (one hashed score on the ring as written)
        servers.place(j * 31, j, jobs[j].cores, jobs[j].tolerated, jobs[j].caused)
    rng = np.random.default_rng(0)
    for j in range(30, 40):
        assert sim.choose(servers, jobs[j], "paragon_statistical", rng) == (statistical(servers, jobs[j], spread_ties=True), 0)
        assert sim.choose(servers, jobs[j], "paragon_statistical_as_written", rng) == (statistical(servers, jobs[j], spread_ties=False), 0)


def two_job_truth() -> g.Truth:
    """Two jobs, two SCs, one SoI: job 0 tolerates 0.3, job 1 causes 0.5 (the classifier will say 0.1)."""
    speed = np.array([[1.0, 2.0], [1.0, 1.0]])
    return g.Truth(speed=speed, expected=speed, fit=np.ones((2, 2)), tolerated=np.array([[0.3], [1.0]]),
                   caused=np.array([[0.0], [0.5]]), cores=np.array([1, 1]))


def test_the_monitor_flags_measured_speed_under_95_percent_of_the_predicted() -> None:
    t = two_job_truth()
    exact = sim.exact_jobs(t)[0]
    # predicted alone on SC 1: 2.0; measured = rate x 2.0 (its best); QoS promised: >= 1.9
    assert not sim.deviates(t, exact, 0, 1, 4, 2, rate=0.96) and not sim.deviates(t, exact, 0, 1, 4, 2, rate=0.95)
    assert sim.deviates(t, exact, 0, 1, 4, 2, rate=0.94)
    high = dataclasses.replace(exact, sc_score=np.log([1.0, 2.1]))  # a classified speed 5 % too high: 0.96 x 2 < 0.95 x 2.1
    assert sim.deviates(t, high, 0, 1, 4, 2, rate=0.96)
    # oversubscribed: 8 threads on 4 cores get half; the prediction counts the known share (0.5 x 2.0 x 0.95 = 0.95)
    eight = dataclasses.replace(exact, cores=4)
    assert not sim.deviates(t, eight, 0, 1, 4, 8, rate=0.48) and sim.deviates(t, eight, 0, 1, 4, 8, rate=0.47)


def test_a_deviating_job_is_flagged_and_migrated_off_the_server_it_deviated_on() -> None:
    t = two_job_truth()
    jobs = [sim.Job(sc_score=np.log([1.0, 2.0]), tolerated=np.array([0.3]), caused=np.array([0.0]), cores=1),
            sim.Job(sc_score=np.zeros(2), tolerated=np.array([1.0]), caused=np.array([0.1]), cores=1)]  # caused: 0.5 truly
    servers = Servers(sc=np.array([1, 1, 0]), cores=np.array([4, 4, 4]), capacity=np.ones(3), n_soi=1)
    integral, last, rate, where = np.zeros(2), np.zeros(2), np.zeros(2), np.array([0, 0])
    for j in (0, 1):
        servers.place(0, j, 1, jobs[j].tolerated, jobs[j].caused)
    sim.refresh(t, servers, 0, rate)
    # job 0 under pressure 0.5 > 0.3: 1 - 0.05 - 1.0 x 0.2 = 0.75 of alone on its best SC (SC 1); job 1 alone-like (no pressure)
    np.testing.assert_allclose(rate, [0.75, 1.0])
    assert sim.watch(t, jobs, servers, 0, rate) == [0] and servers.deviating.tolist() == [1, 0, 0]
    moved = sim.rehome(t, jobs, servers, 0, frozenset({0}), 10.0, (integral, last, rate, where))
    assert moved == [] and where.tolist() == [1, 0] and servers.deviating.tolist() == [0, 0, 0]
    np.testing.assert_allclose(rate, [1.0, 1.0])
    assert integral[0] == pytest.approx(7.5)  # 10 s at 0.75 before it moved
    assert set(servers.residents[0]) == {1} and set(servers.residents[1]) == {0}


def test_monitoring_and_migration_in_a_run_recover_underestimated_caused_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    # "low"'s load with 300 arrivals instead of 2,500: the migrations cascade (14 k here, 155 k in "low": 59 s of CI),
    # and QoS is 0.54 plain, 0.81 with migration (0.46 and 0.72 in "low"; seeds 1-4: a gap of 0.25 to 0.34)
    monkeypatch.setitem(sim.SCENARIOS, "small", (300, 0, sim.SCENARIOS["low"][2]))
    t = truth(300)
    low = [dataclasses.replace(j, caused=j.caused * 0.5) for j in sim.exact_jobs(t)]  # every caused score half the truth
    plain = sim.run(t, low, "small", "paragon", seed=0)
    watched = sim.run(t, low, "small", "paragon", seed=0, monitor=True)
    moved = sim.run(t, low, "small", "paragon", seed=0, monitor=True, migrate=True)
    assert plain.migrations == watched.migrations == 0 and moved.migrations > 0
    assert moved.qos_fraction > plain.qos_fraction + 0.05
    with pytest.raises(ValueError, match="migrate: needs monitor"):
        sim.run(t, low, "small", "paragon", seed=0, migrate=True)


def test_each_fit_trains_the_same_offline_rows_and_an_unknown_fit_is_named() -> None:
    w = g.world(0)
    fitted = {f: sim.models(w, 30, np.random.default_rng(0), fit=f) for f in sim.FITS}
    for f, t in fitted.items():
        np.testing.assert_array_equal(t.offline[2], fitted["energy"].offline[2])
        assert t.sc.scales is None and (t.caused.scales is not None) == (f == "scaled")
    assert fitted["energy"].caused.rank == 0 and fitted["validated_rank"].caused.rank >= 1
    with pytest.raises(ValueError, match="fit: unknown 'svd'"):
        sim.models(w, 30, np.random.default_rng(0), fit="svd")


def test_a_jobs_band_is_its_columns_sigma_except_on_the_sois_it_was_profiled_on() -> None:
    uniform = c.Band(edges=np.zeros((0, 4)), sigma=np.array([[0.1, 0.2, 0.3, 0.4]]))
    np.testing.assert_allclose(sim.entry_band(uniform, np.full((2, 4), 0.5), np.array([[0, 2], [3, 1]])),
                               [[0.0, 0.2, 0.0, 0.4], [0.1, 0.0, 0.3, 0.0]])
    t = truth(40)
    trained = sim.models(g.world(0), 30, np.random.default_rng(0))
    assert all(b.sigma.shape == (1, t.caused.shape[1]) and np.all(b.sigma >= 0) and np.any(b.sigma > 0) for b in trained.band)
    rng = np.random.default_rng(3)
    seen = g.profile(t, np.random.default_rng(3), sc_cols=trained.profile_scs, soi_cols=trained.profile_sois)  # the same draws as classify_workloads'
    jobs = sim.classify_workloads(trained, t, rng, 10).jobs
    for j, job in enumerate(jobs):
        cols = seen.caused.cols[j]
        guarded = sim.guarded(job, 2.0)
        assert np.all(job.band[0][cols] == 0) and np.all(job.band[1][cols] == 0)
        np.testing.assert_array_equal(guarded.caused[cols], job.caused[cols])  # measured: no band
        np.testing.assert_array_equal(guarded.tolerated[cols], job.tolerated[cols])
        rest = np.setdiff1d(np.arange(t.caused.shape[1]), cols)
        np.testing.assert_allclose(job.band[1][rest], trained.band[1].sigma[0, rest])
        assert np.all(guarded.caused[rest] >= job.caused[rest]) and np.all(guarded.tolerated[rest] <= job.tolerated[rest])


def test_a_heavier_predicted_caused_score_gets_a_wider_band_under_the_level_aware_band() -> None:
    # caused sigma 0.01 / 0.03 / 0.08 below 0.1, in [0.1, 0.2), from 0.2 up: the job predicted heavier gets the wider band
    levelled = c.Band(edges=np.array([[0.1, 0.1], [0.2, 0.2]]), sigma=np.array([[0.01, 0.01], [0.03, 0.03], [0.08, 0.08]]))
    widths = sim.entry_band(levelled, np.array([[0.05, 0.3], [0.15, 0.15], [0.25, 0.0]]), np.array([[0], [1], [1]]))
    np.testing.assert_allclose(widths, [[0.0, 0.08], [0.03, 0.0], [0.08, 0.0]])


def test_the_level_aware_band_is_looked_up_at_each_jobs_predicted_scores() -> None:
    t = truth(40)
    uniform = sim.models(g.world(0), 30, np.random.default_rng(0))
    trained = sim.rebanded(uniform, c.LEVELS)
    assert all(b.sigma.shape == (c.LEVELS, t.caused.shape[1]) and b.edges.shape == (c.LEVELS - 1, t.caused.shape[1])
               for b in trained.band)
    assert trained.tolerated is uniform.tolerated and sim.rebanded(trained, 1).band[1].sigma == pytest.approx(uniform.band[1].sigma)
    seen = g.profile(t, np.random.default_rng(3), sc_cols=trained.profile_scs, soi_cols=trained.profile_sois)
    jobs = sim.classify_workloads(trained, t, np.random.default_rng(3), 10).jobs
    for j, job in enumerate(jobs):
        rest = np.setdiff1d(np.arange(t.caused.shape[1]), seen.caused.cols[j])
        np.testing.assert_allclose(job.band[1][rest], trained.band[1].at(job.caused[None])[0, rest])
        rest = np.setdiff1d(np.arange(t.caused.shape[1]), seen.tolerated.cols[j])
        np.testing.assert_allclose(job.band[0][rest], trained.band[0].at(job.tolerated[None])[0, rest])


@pytest.mark.parametrize("guard", [-1.0, -0.5, math.nan, math.inf, "wide", None, True])
def test_an_unknown_or_negative_guard_is_named(guard) -> None:
    t = truth(2500)
    with pytest.raises(ValueError, match=r"guard: expected a finite number of sigmas >= 0, got"):
        sim.run(t, sim.exact_jobs(t), "low", "paragon", seed=0, guard=guard)


def test_an_unknown_sc_rule_is_named_and_the_rule_reaches_paragons_greedy(monkeypatch) -> None:
    t = truth(2500)
    with pytest.raises(ValueError, match="sc_rule: unknown 'best'"):
        sim.run(t, sim.exact_jobs(t), "low", "paragon", seed=0, sc_rule="best")
    seen = []
    monkeypatch.setattr(sim, "greedy", lambda servers, job, sc_rule: seen.append(sc_rule) or (0, 0))
    sim.choose(None, sim.exact_jobs(t)[0], "paragon", np.random.default_rng(0), "sc_qos")
    assert seen == ["sc_qos"]


def test_only_paragon_plans_with_the_guard_band_the_baselines_are_as_published(monkeypatch) -> None:
    t = truth(2500)
    wide = [dataclasses.replace(j, band=(np.full(j.tolerated.shape, 0.25), np.full(j.caused.shape, 0.25))) for j in sim.exact_jobs(t)]
    seen: dict[str, list[np.ndarray]] = {}

    def recorder(name: str):
        def pick(servers, job, *_, **__):  # records the scores the scheduler plans with; the least loaded server
            seen.setdefault(name, []).append(job.caused)
            return int(np.argmin(servers.used))
        return pick

    monkeypatch.setattr(sim, "heterogeneity_oblivious", recorder("nh"))
    monkeypatch.setattr(sim, "greedy", lambda servers, job, sc_rule: (recorder("paragon")(servers, job), 0))
    sim.run(t, wide, "low", "heterogeneity_oblivious", seed=0, guard=2.0)
    sim.run(t, wide, "low", "paragon", seed=0, guard=2.0)
    np.testing.assert_array_equal(np.array(seen["nh"]), t.caused)
    np.testing.assert_allclose(np.array(seen["paragon"]), np.clip(t.caused + 0.5, 0, 1))


def test_each_arrivals_greedy_relaxations_and_server_sc_are_recorded(monkeypatch) -> None:
    t = truth(2500)
    calls = []

    def greedy(servers, job, sc_rule):  # the least loaded server; every third arrival "relaxed" twice
        calls.append(int(np.argmin(servers.used)))
        return calls[-1], 2 if len(calls) % 3 == 0 else 0

    monkeypatch.setattr(sim, "greedy", greedy)
    o = sim.run(t, sim.exact_jobs(t), "low", "paragon", seed=0)
    sc = g.servers(t.capacity_exponent)[0]
    np.testing.assert_array_equal(o.backtracks, [2 if (i + 1) % 3 == 0 else 0 for i in range(2500)])  # arrivals in job order
    np.testing.assert_array_equal(o.server_sc, sc[calls])
    assert o.relaxed == 833
    assert sim.run(t, sim.exact_jobs(t), "low", "random", seed=0).relaxed == 0
    assert sim.Outcome(performance=np.ones(2), decision_ms=np.zeros(2)).relaxed == 0


def test_every_job_is_profiled_against_the_chosen_pair_and_its_band_is_measured_from_that_pair() -> None:
    w = g.world(0)
    t = truth(40)
    chosen = sim.models(w, 30, np.random.default_rng(0), soi_rule="chosen")
    random = sim.with_soi_rule(chosen, "random")
    pair = list(chosen.profile_sois)
    rest = np.setdiff1d(np.arange(t.caused.shape[1]), pair)
    assert len(pair) == 2 and random.profile_sois is None and random.tolerated is chosen.tolerated
    for b in chosen.band:  # sigma 0 on the pair (never classified), the pair's held-out error elsewhere
        np.testing.assert_array_equal(b.sigma[0, pair], 0.0)
        assert np.all(b.sigma[0, rest] > 0)
    assert all(np.all(b.sigma > 0) for b in random.band)  # every SoI classified for some pair of §2.3's random ones
    np.testing.assert_allclose(sim.models(w, 30, np.random.default_rng(0), soi_rule="random").band[1].sigma, random.band[1].sigma)
    np.testing.assert_allclose(sim.with_soi_rule(random, "chosen").band[1].sigma, chosen.band[1].sigma)
    rng_chosen, rng_random = np.random.default_rng(3), np.random.default_rng(3)
    jobs = sim.classify_workloads(chosen, t, rng_chosen, 10).jobs
    sim.classify_workloads(random, t, rng_random, 10)
    assert rng_chosen.random() == rng_random.random()  # either rule leaves the generator alike: the same later workloads
    for j, job in enumerate(jobs):
        np.testing.assert_array_equal(job.band[1][pair], 0.0)
        np.testing.assert_allclose(job.band[1][rest], chosen.band[1].sigma[0, rest])
    seen = g.profile(t, np.random.default_rng(3), soi_cols=chosen.profile_sois)
    assert np.all(seen.caused.cols == pair) and np.all(seen.tolerated.cols == pair)
    np.testing.assert_array_equal(seen.caused.values, t.caused[:, pair])
    with pytest.raises(ValueError, match="soi_rule: unknown 'best'"):
        sim.models(w, 30, np.random.default_rng(0), soi_rule="best")


def test_the_interference_parameters_validated_on_the_profiled_sois_fit_and_band_both_matrices() -> None:
    w = g.world(0)
    default = sim.models(w, 30, np.random.default_rng(0))
    again = sim.models(w, 30, np.random.default_rng(0), validation="profiled_sois")
    assert again.profile_sois == default.profile_sois and again.sc is not None
    np.testing.assert_array_equal(again.sc.p, default.sc.p)  # the SC matrix as validated before
    for model, dense in zip((again.tolerated, again.caused), again.offline[1:]):
        eta, lam, rank = c.choose_sgd_on_profiled(dense, np.array([again.profile_sois]), ranks=c.validated_ranks(dense, standardise=True),
                                                  standardise=True)
        assert (model.eta, model.lam, model.rank) == (eta, lam, rank) and model.scales is not None
    rebuilt = sim.bands([again.tolerated, again.caused], again.offline[1:], sim.BAND_LEVELS, again.profile_sois)
    for b, r in zip(again.band, rebuilt):
        np.testing.assert_allclose(b.sigma, r.sigma)
    with pytest.raises(ValueError, match="validation: unknown 'best'"):
        sim.models(w, 30, np.random.default_rng(0), validation="best")
