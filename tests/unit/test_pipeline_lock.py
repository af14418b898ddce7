"""The rules of the period lock (pipeline.lock): take, re-enter, break when stale, else wait and fail naming
the holder. The HDFS primitives it stands on (create-if-absent, overwrite, read with inode id, delete by inode id) are
exercised on the live cluster in tests/integration/test_fault_pipeline_lock.py; here a dict plays the
NameNode so that the rules' edge cases run in milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corral_yarn.cli import main
from corral_yarn.pipeline.lock import STALE_AFTER_S, UNREADABLE, Holder, PeriodLock, PeriodLockedError, decide, holding, parse_holder

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
START = datetime(2026, 11, 25, tzinfo=UTC)


def _holder(run_id: str = "corral_run/a", age_s: float = 0.0) -> Holder:
    beat = NOW - timedelta(seconds=age_s)
    return Holder(period="20261125T000000Z", run_id=run_id, owner="etl", host="w1", pid=7, acquired=beat, heartbeat=beat)


class Inodes:
    """Files by path with inode ids, as the three WebHdfs primitives the lock uses see them."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, bytes]] = {}
        self.ids = count(16385)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        if path in self.files:
            return False
        self.files[path] = (next(self.ids), data)
        return True

    def replace(self, path: str, data: bytes) -> bool:
        self.files[path] = (next(self.ids), data)
        return True

    def read_with_id(self, path: str) -> tuple[int, int, bytes] | None:
        found = self.files.get(path)
        return None if found is None else (found[0], int(NOW.timestamp() * 1000), found[1])

    def delete_id(self, file_id: int) -> bool:
        path = next((p for p, (i, _) in self.files.items() if i == file_id), None)
        return path is not None and self.files.pop(path) is not None


def _lock(hdfs: Inodes, run_id: str, **options: float) -> PeriodLock:
    return PeriodLock.of(hdfs, "/corral/plans", START, run_id, **{"wait_s": 0.0, "poll_s": 0.01, **options})  # type: ignore[arg-type]


def test_the_rules() -> None:
    assert decide(None, "corral_run/a", NOW) == "take"
    assert decide(_holder("corral_run/a", age_s=10 * STALE_AFTER_S), "corral_run/a", NOW) == "reenter"
    assert decide(_holder("corral_run/b"), "corral_run/a", NOW) == "wait"
    assert decide(_holder("corral_run/b", age_s=STALE_AFTER_S), "corral_run/a", NOW) == "wait"  # stale only once older
    assert decide(_holder("corral_run/b", age_s=STALE_AFTER_S + 1), "corral_run/a", NOW) == "break"


@given(holder=st.none() | st.builds(_holder, st.sampled_from(["corral_run/a", "corral_run/b", "corral_plan/a"]),
                                    st.floats(0, 3 * STALE_AFTER_S)), run_id=st.sampled_from(["corral_run/a", "corral_plan/a"]))
def test_a_run_re_enters_only_its_own_lock_and_breaks_only_a_stale_one(holder: Holder | None, run_id: str) -> None:
    action = decide(holder, run_id, NOW)
    assert (action == "take") == (holder is None)
    assert (action == "reenter") == (holder is not None and holder.run_id == run_id)
    assert action != "break" or holder is not None and holder.age_s(NOW) > STALE_AFTER_S


def test_an_unreadable_lock_file_goes_stale_from_its_modification_time() -> None:
    holder = parse_holder(b'{"period": "2026', "20261125T000000Z", int((NOW - timedelta(hours=8)).timestamp() * 1000))
    assert holder.run_id == UNREADABLE and holder.heartbeat == NOW - timedelta(hours=8)
    assert decide(holder, "corral_run/a", NOW) == "break"


def test_take_re_enter_and_release() -> None:
    hdfs = Inodes()
    first = _lock(hdfs, "corral_run/a").acquire()
    [(old_id, _)] = hdfs.files.values()
    again = _lock(hdfs, "corral_run/a").acquire()  # a retried task of the same run
    [(new_id, data)] = hdfs.files.values()
    assert new_id != old_id and again.acquired == first.acquired and again.heartbeat >= first.heartbeat
    assert Holder.model_validate_json(data).run_id == "corral_run/a"
    assert not _lock(hdfs, "corral_run/b").release() and hdfs.files  # not its lock: left alone
    assert _lock(hdfs, "corral_run/a").release() and not hdfs.files


def test_another_run_waits_then_fails_naming_the_holder(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="corral_yarn.pipeline.lock")
    hdfs = Inodes()
    held = _lock(hdfs, "corral_plan/scheduled__1").acquire()
    with pytest.raises(PeriodLockedError) as err:
        _lock(hdfs, "corral_plan/manual__2", wait_s=0.05).acquire()
    message = str(err.value)
    assert "period 20261125T000000Z is being run by run 'corral_plan/scheduled__1'" in message
    assert f"{held.owner}@{held.host}, pid {held.pid}" in message and "corral pipeline-lock break 20261125T000000Z" in message
    assert "period 20261125T000000Z is held by run 'corral_plan/scheduled__1'" in caplog.text and "; waiting (0 of 0 s)" in caplog.text


def test_a_stale_lock_is_broken_and_taken() -> None:
    hdfs = Inodes()
    hdfs.create_exclusive("/corral/plans/locks/20261125T000000Z.lock", _holder("corral_run/gone", age_s=STALE_AFTER_S + 60).model_dump_json().encode())
    assert _lock(hdfs, "corral_run/next").acquire().run_id == "corral_run/next"


def test_holding_releases_on_failure() -> None:
    hdfs = Inodes()
    with pytest.raises(RuntimeError), holding(_lock(hdfs, "corral_plan/a")):
        assert hdfs.files
        raise RuntimeError("a step failed")
    assert not hdfs.files


def test_pipeline_lock_refuses_a_bad_period_before_any_cluster_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipeline-lock", "break", "yesterday", "--rm", "http://127.0.0.1:1", "--webhdfs", "http://127.0.0.1:1"]) == 2
    assert "argument period: 'yesterday' is not a period id" in capsys.readouterr().err
