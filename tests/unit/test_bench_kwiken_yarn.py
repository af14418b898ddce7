"""benchmarks/bench_kwiken_yarn.py's pure parts: what the MR AM knew of an attempt when its copy was decided (from
real Hadoop 3.5 AM syslog lines), and the split of copies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_kwiken_yarn.py"
APP = "1795669616524_0018"
SYSLOG = f"""\
2026-11-26 05:18:34,127 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000000_0 TaskAttempt Transitioned from ASSIGNED to RUNNING
2026-11-26 05:18:35,000 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000001_0 TaskAttempt Transitioned from ASSIGNED to RUNNING
2026-11-26 05:18:40,000 INFO [IPC Server handler 1 on default port 43241] org.apache.hadoop.mapred.TaskAttemptListenerImpl: Progress of TaskAttempt attempt_{APP}_m_000001_0 is : 0.0
2026-11-26 05:18:42,000 INFO [IPC Server handler 1 on default port 43241] org.apache.hadoop.mapred.TaskAttemptListenerImpl: Progress of TaskAttempt attempt_{APP}_m_000001_0 is : 0.25
2026-11-26 05:18:44,127 INFO [DefaultSpeculator background processing] org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator: DefaultSpeculator.addSpeculativeAttempt -- we are speculating task_{APP}_m_000000
2026-11-26 05:18:45,000 INFO [DefaultSpeculator background processing] org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator: DefaultSpeculator.addSpeculativeAttempt -- we are speculating task_{APP}_m_000001
2026-11-26 05:18:59,150 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000000_1 TaskAttempt Transitioned from ASSIGNED to RUNNING
2026-11-26 05:19:07,657 INFO [IPC Server handler 0 on default port 43241] org.apache.hadoop.mapred.TaskAttemptListenerImpl: Progress of TaskAttempt attempt_{APP}_m_000000_0 is : 0.0
2026-11-26 05:19:08,926 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000000_1 TaskAttempt Transitioned from KILL_TASK_CLEANUP to KILLED
2026-11-26 05:19:09,127 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000000_0 TaskAttempt Transitioned from SUCCESS_FINISHING_CONTAINER to SUCCEEDED
2026-11-26 05:19:35,000 INFO [AsyncDispatcher event handler] org.apache.hadoop.mapreduce.v2.app.job.impl.TaskAttemptImpl: attempt_{APP}_m_000001_0 TaskAttempt Transitioned from KILL_TASK_CLEANUP to KILLED
"""


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_kwiken_yarn", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_copy_decisions_give_what_the_am_knew_when_it_decided_and_how_the_attempt_ended(bench):
    silent, reported = bench.copy_decisions(SYSLOG.splitlines())
    # m_000000_0 ran 10 s with no status when copied; it succeeded 35 s after its launch, its copy lost
    assert silent == pytest.approx({"type": "MAP", "elapsed_s": 10.0, "statuses": 0, "progress": None, "ran_s": 35.0, "won": False})
    # m_000001_0 had sent 0.0 then 0.25 when copied 10 s in; it was killed 60 s after its launch: its copy won
    assert reported == pytest.approx({"type": "MAP", "elapsed_s": 10.0, "statuses": 2, "progress": 0.25, "ran_s": 60.0, "won": True})


def test_decision_split_counts_copies_without_progress_and_real_stragglers(bench):
    decisions = [{**d, "timeout_s": 30.0} for d in bench.copy_decisions(SYSLOG.splitlines())]
    split = bench.decision_split(decisions + [{**decisions[0], "statuses": 1, "progress": 0.0, "ran_s": 31.0}])
    assert {k: split["map"]["no_progress"][k] for k in ("copies", "no_status", "stragglers", "won")} == {"copies": 2, "no_status": 1, "stragglers": 2, "won": 0}
    assert {k: split["map"]["progress"][k] for k in ("copies", "no_status", "stragglers", "won")} == {"copies": 1, "no_status": 0, "stragglers": 1, "won": 1}
    assert split["reduce"]["copies"] == 0



def test_copies_on_their_first_attempts_node_are_counted_with_their_seconds(bench):
    from corral_yarn.cluster.history import TaskAttempt

    def attempt(task: str, k: int, node: str, state: str, start: int, end: int) -> TaskAttempt:
        return TaskAttempt(f"attempt_{APP}_{task}_{k}", "MAP" if "_m_" in f"_{task}" else "REDUCE", state, "/rack-a", node, f"c{task}{k}", start, end)

    attempts = [attempt("m_000000", 0, "slow:8042", "SUCCEEDED", 0, 90_000),
                attempt("m_000000", 1, "slow:8042", "KILLED", 40_000, 41_500),  # started on its original's node: killed at once
                attempt("m_000000", 2, "fast:8042", "KILLED", 43_000, 90_500),  # the copy elsewhere lost
                attempt("m_000001", 0, "fast:8042", "KILLED", 0, 60_000),
                attempt("m_000001", 1, "slow:8042", "SUCCEEDED", 30_000, 59_000),  # a copy on another node won
                attempt("r_000000", 0, "fast:8042", "SUCCEEDED", 0, 5_000)]
    launches, won, on_node = bench._copies(attempts)
    assert sorted(launches) == [("MAP", 30.0), ("MAP", 40.0)]
    assert won == {"MAP": 1, "REDUCE": 0}
    assert on_node == {"MAP": [1.5], "REDUCE": []}
