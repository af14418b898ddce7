"""MRCute+ (docs/model.md) against values computed by hand, on the cluster and stage of test_model_mrcute:
3 racks of m = 4 machines, M_c = 2, R_c = 1, B_M = 100 B/s, O = 4 (B_M/O = 25 B/s, B_M - B_M/O = 75 B/s);
the stage reads 4800 B in 24 maps, shuffles 2400 B into 6 reduces and writes 1200 B; L(1) = 35, L(2) = 20.
"""

from __future__ import annotations

import numpy as np
import pytest

from corral_yarn.contracts import ClusterSpec, JobSpec, MRCutePlus, Workload
from corral_yarn.errors import InputError
from corral_yarn.io import parse
from corral_yarn.model import job_rack_latency, latency_table, rack_waves, write_latency
from corral_yarn.planner.build import build_plan
from test_model_mrcute import cluster, stage


def test_write_term_when_the_other_replicas_leave_the_racks() -> None:
    # HDFS's pipeline: the writer sends one copy out of R_j (replica 2), replica 2 forwards to replica 3 outside R_j;
    # the copy goes over min(writers x B_M, r m B_M / O)
    # r = 1: writers = min(4 machines, 6 reduces) = 4: min(400, 100) = 100 B/s; 1200 / 100 = 12
    # r = 2: writers = min(8, 6) = 6: min(600, 200) = 200 B/s; 1200 / 200 = 6
    t = write_latency(stage(), cluster(), np.array([1, 2]), MRCutePlus())
    assert t == pytest.approx([12.0, 6.0])
    assert write_latency(stage(), cluster(), np.array([1, 2]), MRCutePlus(replication=2)) == pytest.approx([12.0, 6.0])
    # one reducer: its NIC is the limit, min(1 x 100, 100) on one rack, min(100, 200) on two: 1200 / 100 = 12
    assert write_latency(stage(reduce_tasks=1), cluster(), np.array([1, 2]), MRCutePlus()) == pytest.approx([12.0, 12.0])


def test_write_term_when_the_replicas_stay_in_the_racks() -> None:
    # both hops inside R_j: 1200 x (3 - 1) = 2400 B. r = 1: all in the rack, 2400 x 3/4 / min(400, 4 x 75) = 6 (no core)
    # r = 2: core 2400 x 1/2 / min(600, 200) = 6, rack 2400 x 1/2 x 3/4 / min(600, 600) = 1.5; max = 6
    t = write_latency(stage(), cluster(), np.array([1, 2]), MRCutePlus(output_replicas_leave_racks=False))
    assert t == pytest.approx([6.0, 6.0])


def test_a_write_faster_than_the_reduce_adds_nothing() -> None:
    # slow reducers (B_reduce = 5 B/s): T_reduce(1) = 2 x 200 / 5 = 80 > T_write = 12, so L+ = L = 35 - 8 + 80
    slow = stage(reduce_rate_bytes_per_s=5.0)
    plus = cluster().model_copy(update={"model": MRCutePlus()})
    job = JobSpec(name="j", stages=[slow])
    assert job_rack_latency(job, plus, 1) == pytest.approx(job_rack_latency(job, cluster(), 1)) == pytest.approx(107.0)


def test_replication_one_writes_nothing_over_the_network() -> None:
    assert write_latency(stage(), cluster(), np.array([1, 3]), MRCutePlus(replication=1)) == pytest.approx([0.0, 0.0])


def test_waves() -> None:
    # r = 1: ceil(24 / 8) + ceil(6 / 4) = 3 + 2; r = 2: ceil(24 / 16) + ceil(6 / 8) = 2 + 1; map-only: maps only
    assert rack_waves(stage(), cluster(), np.array([1, 2])) == pytest.approx([5.0, 3.0])
    assert rack_waves(stage(shuffle_bytes=0.0, reduce_tasks=0), cluster(), np.array([1])) == pytest.approx([3.0])


def test_mrcute_plus_job_latency() -> None:
    # reducers write while they reduce: max(T_reduce, T_write) replaces T_reduce.
    # r = 1: T_reduce = 8, T_write = 12: L = 35 - 8 + 12 = 39; 10 + 2 x 39 + 1 x 5 = 93
    # r = 2: T_reduce = 1 x (1200 / 6) / 50 = 4, T_write = 6: L = 20 - 4 + 6 = 22; 10 + 2 x 22 + 1 x 3 = 57
    plus = cluster().model_copy(update={"model": MRCutePlus(scale=2.0, job_startup_s=10.0, task_startup_s=1.0)})
    job = JobSpec(name="j", stages=[stage()])
    assert job_rack_latency(job, plus, np.array([1, 2])) == pytest.approx([93.0, 57.0])
    assert job_rack_latency(job, cluster(), np.array([1, 2])) == pytest.approx([35.0, 20.0])  # "paper" is the default


def test_job_constant_is_paid_once_per_dag() -> None:
    # two stages in a chain: 2 x L+(1) = 2 x 39 with zero task start-up, plus the job constant once
    plus = cluster().model_copy(update={"model": MRCutePlus(job_startup_s=7.0)})
    dag = JobSpec(name="d", stages=[stage("a"), stage("b", after=["a"])])
    assert job_rack_latency(dag, plus, 1) == pytest.approx(7.0 + 2 * 39.0)


def test_cluster_spec_selects_the_model_from_json() -> None:
    base = cluster().model_dump(mode="json")
    assert parse(ClusterSpec, {**base, "model": "paper"}).model == "paper"
    plus = parse(ClusterSpec, {**base, "model": {"name": "mrcute+", "job_startup_s": 5}})
    assert plus.model == MRCutePlus(job_startup_s=5.0)
    with pytest.raises(InputError, match="model"):
        parse(ClusterSpec, {**base, "model": {"name": "mrcute+", "task_startup_s": -1}})
    with pytest.raises(InputError, match="model"):
        parse(ClusterSpec, {**base, "model": "mrcute"})


def test_plan_records_the_model_and_uses_it() -> None:
    params = MRCutePlus(scale=1.5, job_startup_s=20.0, task_startup_s=2.0, fitted_runs=9)
    spec = cluster().model_copy(update={"model": params})
    workload = Workload(jobs=[JobSpec(name="j", stages=[stage()])])
    plan = build_plan(workload, spec, "batch", alpha=0.0)
    assert plan.model == params
    j = plan.jobs[0]
    assert j.predicted_duration_s == pytest.approx(float(job_rack_latency(workload.jobs[0], spec, len(j.racks))))
    assert latency_table(workload.jobs, spec, 0.0)[0][0, 0] > latency_table(workload.jobs, cluster(), 0.0)[0][0, 0]
    assert build_plan(workload, cluster(), "batch", alpha=0.0).model == "paper"
    assert plan.plan_id != build_plan(workload, cluster(), "batch", alpha=0.0).plan_id
