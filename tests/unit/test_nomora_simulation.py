import gzip
import json

import numpy as np
import pytest

from corral_yarn.errors import InputError
from corral_yarn.nomora import simulation, workload
from corral_yarn.nomora.simulation import FatTreeLatency, SimConfig, Topology, simulate

SMALL = Topology(96, hosts_per_rack=8, racks_per_pod=4, slots=2)  # 12 racks in 3 pods
CONFIG = SimConfig(hours=0.1, round_s=10.0, seed=3)


@pytest.fixture(scope="module")
def jobs():
    return workload.generate(CONFIG.hours, SMALL.machines, SMALL.slots, seed=3)


@pytest.fixture(scope="module")
def results(jobs):
    return {policy: simulate(jobs, SMALL, policy, CONFIG) for policy in simulation.POLICIES}


def test_capacity_is_never_exceeded_and_performance_is_a_fraction(results):
    for policy, result in results.items():
        assert 0 < result.max_running_over_slots <= 1.0, policy
        assert len(result.job_perf) and np.all((result.job_perf > 0) & (result.job_perf <= 1.0)), policy
        assert np.all(result.placement_latency_s >= 0), policy
        assert all(0 <= share <= 1 for share in result.migrated_share), policy


def test_only_preempting_runs_migrate(results):
    assert not results["random"].migrated_share and not results["load_spreading"].migrated_share
    assert set(results["nomora"].migrated_share) == {0.0}
    assert max(results["nomora_preempt"].migrated_share) > 0  # β = 0: tasks move to better machines


def test_nomora_places_better_than_random_and_load_spreading(results):
    nomora = results["nomora"].avg_app_perf
    assert nomora > results["random"].avg_app_perf and nomora > results["load_spreading"].avg_app_perf
    assert results["nomora_preempt"].avg_app_perf >= results["random"].avg_app_perf


def test_same_seed_same_outcome(jobs, results):
    again = simulate(jobs, SMALL, "nomora_preempt", CONFIG)
    assert np.array_equal(again.job_perf, results["nomora_preempt"].job_perf)
    assert again.migrated_share == results["nomora_preempt"].migrated_share


def test_fat_tree_latency_rows_match_pairs_and_follow_distance():
    latency = FatTreeLatency(SMALL, seed=1)
    values, index = latency.row(5)
    machines = np.arange(SMALL.machines)
    assert np.array_equal(values[index], latency.pairs(np.full(SMALL.machines, 5), machines))
    assert values[index][5] == simulation.SAME_HOST_US
    assert np.allclose(latency.rack_latency, latency.rack_latency.T)
    pod = np.arange(SMALL.racks) // SMALL.racks_per_pod
    same_rack = np.diag(latency.rack_latency).mean()
    cross_pod = latency.rack_latency[pod[:, None] != pod[None, :]].mean()
    assert same_rack < cross_pod
    before = latency.rack_latency.copy()
    latency.step(60)
    assert not np.array_equal(before, latency.rack_latency)


def test_generated_workload_follows_its_shape():
    jobs = workload.generate(1.0, 12_500, 8, seed=7)
    services = [j for j in jobs if j.arrival_s == 0]
    arriving = [j for j in jobs if j.arrival_s > 0]
    assert sum(len(j.durations_s) for j in services) >= 0.5 * 12_500 * 8
    assert all(len(j.durations_s) >= 2 for j in jobs)
    assert all(0 < j.arrival_s < 3600 for j in arriving)
    assert 300 < len(arriving) < 500  # Poisson, 400 jobs per hour
    shares = {name: sum(j.perf == name for j in jobs) / len(jobs) for name, _ in workload.PAPER_MIX}
    assert shares["memcached"] == pytest.approx(0.5, abs=0.05)
    assert workload.generate(1.0, 12_500, 8, seed=7)[-1].durations_s.tolist() == jobs[-1].durations_s.tolist()


TRACE = """\
0,,100,0,1,0,u,0,9,0.1,0.1,0,0
0,,100,0,1,1,u,0,9,0.1,0.1,0,0
0,,100,1,2,0,u,0,9,0.1,0.1,0,0
0,,100,1,2,1,u,0,9,0.1,0.1,0,0
700000000,,100,0,1,4,u,0,9,0.1,0.1,0,0
900000000,,200,0,,0,u,0,9,0.1,0.1,0,0
905000000,,200,0,3,1,u,0,9,0.1,0.1,0,0
905000000,,300,0,,0,u,0,9,0.1,0.1,0,0
906000000,,300,0,,1,u,0,9,0.1,0.1,0,0
906000000,,300,1,4,0,u,0,9,0.1,0.1,0,0
910000000,,300,1,4,1,u,0,9,0.1,0.1,0,0
1000000000,,300,1,4,5,u,0,9,0.1,0.1,0,0
9000000000,,400,0,,0,u,0,9,0.1,0.1,0,0
"""


def test_task_events_loader_replays_the_2011_schema(tmp_path):
    path = tmp_path / "part-00000-of-00500.csv.gz"
    path.write_bytes(gzip.compress(TRACE.encode()))
    jobs = workload.load_task_events([path], hours=1.0, seed=0)
    assert [j.name for j in jobs] == ["job100", "job300"]  # job 200 has one task; job 400 is after the hour
    first, second = jobs
    assert first.arrival_s == 0 and first.durations_s.tolist() == [100.0, 3600.0]  # task 1 never ends: to the end
    assert second.arrival_s == 305.0 and second.durations_s.tolist() == [3294.0, 90.0]
    assert {j.perf for j in jobs} <= {"memcached", "strads", "tensorflow"}


def test_task_events_loader_names_a_bad_row(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text("0,,100,0,1,0\nnot,a,row\n")
    with pytest.raises(InputError) as error:
        workload.load_task_events([path], hours=1.0, seed=0)
    assert error.value.field == f"{path}:2"
    with pytest.raises(InputError) as error:
        workload.load_task_events([tmp_path / "missing.csv"], hours=1.0, seed=0)
    assert error.value.field == "task_events"


def test_bad_input_names_the_field(jobs):
    with pytest.raises(InputError) as error:
        simulate(jobs, SMALL, "fifo", CONFIG)
    assert error.value.field == "policy"
    with pytest.raises(InputError) as error:
        Topology(0)
    assert error.value.field == "machines"
    with pytest.raises(InputError) as error:
        workload.generate(0, 10, 1, seed=0)
    assert error.value.field == "hours"


def test_cli_simulate_prints_the_figures_and_replays_a_trace(tmp_path, capsys):
    from corral_yarn.cli import main

    small = ["--machines", "96", "--hosts-per-rack", "8", "--racks-per-pod", "4", "--slots", "2", "--hours", "0.05"]
    assert main(["nomora", "simulate", *small, "--policy", "random", "nomora", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document["policies"]) == {"random", "nomora"} and document["machines"] == 96
    assert 0 < document["policies"]["nomora"]["avg_app_perf"] <= 1
    path = tmp_path / "part-00000-of-00500.csv"
    path.write_text(TRACE)
    assert main(["nomora", "simulate", *small, "--trace", str(path), "--policy", "nomora"]) == 0
    assert "1 jobs on 96 machines" in capsys.readouterr().out  # job 300 arrives after the 0.05 h window


def test_cli_simulate_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    from corral_yarn.cli import main

    assert main(["nomora", "simulate", "--machines", "0"]) == 2
    assert "--machines" in capsys.readouterr().err
    bad = tmp_path / "events.csv"
    bad.write_text("x,y\n")
    assert main(["nomora", "simulate", "--machines", "96", "--trace", str(bad)]) == 2
    assert f"{bad}:1" in capsys.readouterr().err
