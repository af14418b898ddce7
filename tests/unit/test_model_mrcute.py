"""MRCute (thesis §3.1.2, §3.1.3, §4.3.4) against values computed by hand; the arithmetic is in comments.

The cluster: 3 racks of m = 4 machines, M_c = 2 map slots and R_c = 1 reduce slot per machine,
B_M = 100 B/s NICs, O = 4 (so B_M/O = 25 B/s to the core and B_M - B_M/O = 75 B/s inside a rack),
B_D = 50 B/s disks; rack-to-core bandwidth = m B_M / O = 4 x 100 / 4 = 100 B/s.

The stage: |D_i| = 4800 B in M = 24 map tasks, D^S = 2400 B of shuffle (S_map = 2) into R = 6 reduce
tasks, 1200 B of output (S_reduce = 2); B_map^P = 40 B/s, so B_map = min(50, 40) = 40 (CPU-bound);
B_reduce^P = 100 B/s, so B_reduce = min(50, 100) = 50 (disk-bound).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, Rack, StageSpec
from corral_yarn.model import (
    dag_latency,
    default_alpha,
    job_rack_latency,
    latency_table,
    packed_latency,
    rack_latency,
    reservation_latency,
    shuffle_bandwidth,
)


def cluster(racks: int = 3, machines: int = 4, oversubscription: float = 4.0) -> ClusterSpec:
    return ClusterSpec(
        racks=[Rack(name=f"/r{i}", machines=[f"h{i}-{k}" for k in range(machines)]) for i in range(racks)],
        map_slots_per_machine=2,
        reduce_slots_per_machine=1,
        nic_bandwidth_bytes_per_s=100.0,
        disk_bandwidth_bytes_per_s=50.0,
        oversubscription=oversubscription,
    )


def stage(name: str = "main", after: list[str] | None = None, **overrides: float) -> StageSpec:
    fields = dict(input_bytes=4800.0, shuffle_bytes=2400.0, output_bytes=1200.0, map_tasks=24, reduce_tasks=6,
                  map_rate_bytes_per_s=40.0, reduce_rate_bytes_per_s=100.0)
    return StageSpec(name=name, after=after or [], **{**fields, **overrides})


def test_rack_latency_on_one_two_three_racks() -> None:
    # r = 1: N = r m = 4 machines.
    #   T_map = ceil(24 / (4 x 2)) x (4800 / 24) / 40 = 3 x 200 / 40 = 15
    #   w_reduce = ceil(6 / (4 x 1)) = 2
    #   D_core = 0 (one rack), T_core = 0
    #   D_local = 2400 x 1/(1 x 4) x 1/1 = 600; T_local = 600 x 3/4 / 75 = 6
    #   T_shuffle = 2 x max(0, 6) = 12
    #   T_reduce = 2 x (1200 / 6) / 50 = 8
    #   L(1) = 15 + 12 + 8 = 35
    # r = 2: N = 8.
    #   T_map = ceil(24 / 16) x 5 = 2 x 5 = 10; w_reduce = ceil(6 / 8) = 1
    #   D_core = 2400 x 1/8 x 1/2 = 150; T_core = 150 / 25 = 6
    #   D_local = 2400 x 1/8 x 1/2 = 150; T_local = 150 x 3/4 / 75 = 1.5
    #   T_shuffle = 1 x max(6, 1.5) = 6; T_reduce = 1 x 200 / 50 = 4
    #   L(2) = 10 + 6 + 4 = 20
    # r = 3: N = 12.
    #   T_map = ceil(24 / 24) x 5 = 5; w_reduce = ceil(6 / 12) = 1
    #   D_core = 2400 x 1/12 x 2/3 = 400/3; T_core = (400/3) / 25 = 16/3
    #   D_local = 2400 x 1/12 x 1/3 = 200/3; T_local = (200/3) x 3/4 / 75 = 2/3
    #   T_shuffle = max(16/3, 2/3) = 16/3; T_reduce = 4
    #   L(3) = 5 + 16/3 + 4 = 43/3
    got = rack_latency(stage(), cluster(), [1, 2, 3])
    np.testing.assert_allclose(got, [35.0, 20.0, 43.0 / 3.0], rtol=1e-12)


def test_map_only_stage_is_t_map() -> None:
    # no reduce tasks, no shuffle: L(r) = T_map = w_map x 200 / 40 with w_map = 3, 2, 1 for r = 1, 2, 3
    only_map = stage(shuffle_bytes=0.0, output_bytes=0.0, reduce_tasks=0)
    np.testing.assert_allclose(rack_latency(only_map, cluster(), [1, 2, 3]), [15.0, 10.0, 5.0])


def test_local_transfer_dominates_when_the_core_is_barely_oversubscribed() -> None:
    # O = 1.25: B_M/O = 80 to the core, B_M - B_M/O = 20 inside the rack. r = 2, m = 4, N = 8:
    #   D_core = 2400 x 1/8 x 1/2 = 150; T_core = 150 / 80 = 1.875
    #   D_local = 150; T_local = 150 x 3/4 / 20 = 5.625  (> T_core)
    #   L(2) = T_map 10 + 1 x 5.625 + T_reduce 4 = 19.625
    got = rack_latency(stage(), cluster(oversubscription=1.25), [2])
    np.testing.assert_allclose(got, [19.625])


def test_reduce_term_divides_each_tasks_output_by_b_reduce() -> None:
    # halving the output halves T_reduce only: r = 2, T_reduce = 1 x (600 / 6) / 50 = 2, L = 10 + 6 + 2 = 18
    np.testing.assert_allclose(rack_latency(stage(output_bytes=600.0), cluster(), [2]), [18.0])


def test_m_is_the_smallest_racks_machine_count() -> None:
    # racks of 4, 5 and 6 machines model like three racks of 4: the same L(r) as the uniform cluster
    racks = [Rack(name=f"/r{i}", machines=[f"h{i}-{k}" for k in range(4 + i)]) for i in range(3)]
    uneven = cluster().model_copy(update={"racks": racks})
    assert uneven.machines_per_rack == 4
    np.testing.assert_allclose(rack_latency(stage(), uneven, [1, 2, 3]), [35.0, 20.0, 43.0 / 3.0])


def test_shuffle_bandwidth_formula() -> None:
    # B_shuffle = (1 / min(B_D, B) + 1 / B_D)^-1 with B_D = 50:
    #   B = 30:  (1/30 + 1/50)^-1 = (8/150)^-1 = 18.75
    #   B = 100: (1/50 + 1/50)^-1 = 25 (the disk caps the network)
    np.testing.assert_allclose(shuffle_bandwidth(50.0, [30.0, 100.0]), [18.75, 25.0])


def test_reservation_latency_n_b() -> None:
    # <N = 8, B = 30>: T_map = ceil(24 / 16) x 5 = 10; w_reduce = ceil(6 / 8) = 1
    #   T_shuffle = 1 x (2400 / 6) / 18.75 = 64/3; T_reduce = 1 x 200 / 50 = 4
    #   L = 10 + 64/3 + 4 = 106/3
    # <N = 4, B = 100>: T_map = 3 x 5 = 15; w_reduce = ceil(6 / 4) = 2
    #   T_shuffle = 2 x 400 / 25 = 32; T_reduce = 2 x 200 / 50 = 8; L = 55
    got = reservation_latency(stage(), cluster(), [8, 4], [30.0, 100.0])
    np.testing.assert_allclose(got, [106.0 / 3.0, 55.0])


def test_reservation_latency_broadcasts_machines_against_bandwidths() -> None:
    got = reservation_latency(stage(), cluster(), np.array([[8], [4]]), np.array([30.0, 100.0]))
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got[0, 0], 106.0 / 3.0)
    np.testing.assert_allclose(got[1, 1], 55.0)


def test_dag_critical_path_of_a_diamond() -> None:
    # a -> {b, c} -> d. At r = 1: a-b-d = 1 + 5 + 2 = 8, a-c-d = 1 + 3 + 2 = 6 -> 8 (through b);
    # at r = 2: a-b-d = 2 + 1 + 2 = 5, a-c-d = 2 + 4 + 2 = 8 -> 8 (through c). Not the sum of all stages.
    job = JobSpec(name="diamond", stages=[stage("a"), stage("b", ["a"]), stage("c", ["a"]), stage("d", ["b", "c"])])
    per_stage = {"a": np.array([1.0, 2.0]), "b": np.array([5.0, 1.0]), "c": np.array([3.0, 4.0]), "d": np.array([2.0, 2.0])}
    np.testing.assert_allclose(dag_latency(job, per_stage), [8.0, 8.0])


def test_dag_job_latency_uses_the_rack_model_per_stage() -> None:
    # every stage is the hand-computed one, so the critical path a-b-d is 3 x L(r) = 105, 60, 43
    job = JobSpec(name="diamond", stages=[stage("a"), stage("b", ["a"]), stage("c", ["a"]), stage("d", ["b", "c"])])
    np.testing.assert_allclose(job_rack_latency(job, cluster(), [1, 2, 3]), [105.0, 60.0, 43.0])
    assert job.input_bytes == 4800.0  # D_j^I: only the source stage a reads HDFS input


def test_default_alpha_is_one_over_rack_to_core_bandwidth() -> None:
    # rack uplink = m B_M / O = 4 x 100 / 4 = 100 B/s -> alpha = 0.01 s/B
    assert default_alpha(cluster()) == pytest.approx(0.01)


def test_data_balance_penalty() -> None:
    # L'(r) = L(r) + alpha D^I / r with alpha = 0.01, D^I = 4800: penalties 48, 24, 16
    #   L' = 35 + 48 = 83, 20 + 24 = 44, 43/3 + 16 = 91/3
    job = JobSpec(name="j", stages=[stage()])
    latency, penalized = latency_table([job], cluster(), alpha=0.01)
    np.testing.assert_allclose(latency, [[35.0, 20.0, 43.0 / 3.0]])
    np.testing.assert_allclose(penalized, [[83.0, 44.0, 91.0 / 3.0]])


def test_latency_table_has_one_row_per_job_and_one_column_per_rack_count() -> None:
    jobs = [JobSpec(name="j1", stages=[stage()]), JobSpec(name="j2", stages=[stage(output_bytes=600.0)])]
    latency, penalized = latency_table(jobs, cluster(), alpha=0.0)
    assert latency.shape == (2, 3)
    np.testing.assert_array_equal(latency, penalized)  # alpha = 0: no penalty


@settings(max_examples=200, deadline=None)
@given(
    input_bytes=st.floats(1.0, 1e12),
    map_tasks=st.integers(1, 5000),
    reduce_tasks=st.integers(1, 2000),
    map_selectivity=st.floats(0.25, 4.0),
    racks=st.integers(1, 12),
)
def test_more_racks_never_add_map_or_reduce_waves(input_bytes: float, map_tasks: int, reduce_tasks: int, map_selectivity: float, racks: int) -> None:
    # Over r, T_map and T_reduce never grow (waves only shrink); L(r) stays finite and positive.
    s = stage(input_bytes=input_bytes, shuffle_bytes=None, output_bytes=None, map_selectivity=map_selectivity,
              reduce_selectivity=1.0, map_tasks=map_tasks, reduce_tasks=reduce_tasks)
    c = cluster(racks=racks)
    latency = rack_latency(s, c, np.arange(1, racks + 1))
    assert np.all(np.isfinite(latency)) and np.all(latency > 0)
    only_map = stage(input_bytes=input_bytes, shuffle_bytes=0.0, output_bytes=0.0, map_tasks=map_tasks, reduce_tasks=0)
    assert np.all(np.diff(rack_latency(only_map, c, np.arange(1, racks + 1))) <= 1e-9 * input_bytes)


def test_packed_latency_back_fills_partial_waves_and_shuffles_once() -> None:
    # P, the work-conserving run-time's hold of R_j (docs/paragon.md, Session 14): fractional waves, shuffle once.
    # r = 1: 8 map slots: w = 24/8 = 3, T_map = 3 x 5 = 15; 4 reduce slots: w = 1.5, T_reduce = 1.5 x 200/50 = 6;
    #   the shuffle once: max(0, 6) = 6 (L charges it per reduce wave: 12); P(1) = 15 + 6 + 6 = 27 (L(1) = 35)
    # r = 2: w_map = 24/16 = 1.5, T_map = 7.5; w_reduce = 6/8 = 0.75, T_reduce = 3; shuffle max(6, 1.5) = 6: P(2) = 16.5
    # F, the job's own least time, has whole waves (Session 17) and the shuffle once:
    #   F(1) = 15 + 6 + ceil(1.5) x 4 = 29; F(2) = ceil(1.5) x 5 + 6 + 1 x 4 = 20 (= L(2), one reduce wave)
    job = JobSpec(name="j", stages=[stage()])
    held, floor = packed_latency(job, cluster(), np.array([1, 2]))
    assert held == pytest.approx([27.0, 16.5]) and floor == pytest.approx([29.0, 20.0])
    assert (floor <= job_rack_latency(job, cluster(), np.array([1, 2]))).all()


def test_a_jobs_own_least_time_has_its_partial_last_wave_whole() -> None:
    # 15 reduce tasks on one rack of 10 machines x 1 reduce slot: the job needs two reduce waves whatever the
    # others do (thesis §3.1.2 "Waves", ceil); its hold P counts 1.5 (the idle slots back-filled).
    # 20 map slots: T_map = 1 x (4800/20)/40 = 6; shuffle once: D_local = 2400/10 = 240, T_local = 240 x 9/10 / 75 = 2.88;
    # a reduce task: (1200/15)/50 = 1.6 s: F = 6 + 2.88 + 2 x 1.6 = 12.08, P = 6 + 2.88 + 1.5 x 1.6 = 11.28.
    # MRCute+'s per-task start-up (2 s, no write: one replica) is paid per whole wave in F: + 2 x (1 + 2), in P: + 2 x (1 + 1.5)
    job = JobSpec(name="j", stages=[stage(map_tasks=20, reduce_tasks=15)])
    held, floor = packed_latency(job, cluster(racks=1, machines=10), np.array([1]))
    assert held == pytest.approx([11.28]) and floor == pytest.approx([12.08])
    plus = cluster(racks=1, machines=10).model_copy(update={"model": MRCutePlus(replication=1, task_startup_s=2.0)})
    held, floor = packed_latency(job, plus, np.array([1]))
    assert held == pytest.approx([16.28]) and floor == pytest.approx([18.08])


def test_a_jobs_startup_is_in_its_own_least_time_not_in_its_hold_of_the_racks() -> None:
    # MRCute+'s job constant (AM launch, set-up, commit) holds one container, not R_j's task slots: the
    # run-time back-fills R_j with other jobs' tasks meanwhile, so it adds to F only (docs/paragon.md, Session 16)
    job, r = JobSpec(name="j", stages=[stage()]), np.array([1, 2])
    def with_startup(seconds: float) -> ClusterSpec:
        return cluster().model_copy(update={"model": MRCutePlus(job_startup_s=seconds)})
    held, floor = packed_latency(job, with_startup(30.0), r)
    bare_held, bare_floor = packed_latency(job, with_startup(0.0), r)
    assert held == pytest.approx(bare_held) and floor == pytest.approx(bare_floor + 30.0)


def test_packed_latency_adds_a_dags_stages_and_its_floor_is_the_critical_path() -> None:
    # two stages side by side: their work adds on the racks (2 x 27), but the job itself waits for one path (29)
    job = JobSpec(name="j", stages=[stage("a"), stage("b")])
    held, floor = packed_latency(job, cluster(), np.array([1]))
    assert held == pytest.approx([54.0]) and floor == pytest.approx([29.0])
