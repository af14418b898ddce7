"""One pipeline run per period at a time: a lock file on HDFS, held by the cluster rather than a worker's disk.

``<plans_dir>/locks/<period>.lock`` names its holder as JSON (:class:`Holder`): the run id (Airflow's
``<dag id>/<run id>``), the Hadoop user, host and pid of the task that took it, when it was taken and its
heartbeat (renewed by every task of the run that enters it). Each change is one atomic NameNode operation
(the WebHDFS adapter's primitives): taking it is a CREATE with overwrite=false; renewing it overwrites it
in place (so it is never absent for another run to take); releasing or breaking it deletes exactly the
file that was read (by its inode id), so a lock replaced in between is never deleted by mistake. The
rules (:func:`decide`):

* no lock file: take it;
* held by the same run id: re-enter it and renew the heartbeat (a retried task of the same run);
* held by another run whose heartbeat is older than ``stale_after_s``: stale, break it (logged with the
  holder) and take it;
* otherwise wait, polling and logging progress, for at most ``wait_s``; then :class:`PeriodLockedError`
  names the holder and how to break its lock (``corral pipeline-lock break``, docs/cli.md).

Design and staleness rule: docs/pipeline.md, "One run per period".
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import posixpath
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from corral_yarn.cluster.tags import period_id
from corral_yarn.cluster.webhdfs import WebHdfs
from corral_yarn.errors import CorralError

log = logging.getLogger(__name__)

SUFFIX = ".lock"
WAIT_S = 300.0  # a second run of the period waits this long for the first, then fails naming it
POLL_S = 5.0
# The longest a holding run goes without renewing: a job's wait on the triggerer (YarnApplicationSensor's 6 h timeout) and retries.
STALE_AFTER_S = 7 * 3600.0
UNREADABLE = "<unreadable>"  # the run id shown for a lock file that does not parse (its writer died while creating it)

Action = Literal["take", "reenter", "break", "wait"]


class PeriodLockedError(CorralError):
    """Another pipeline run holds the period's lock and did not release it within the wait."""


class Holder(BaseModel):
    """Who holds a period's lock, as its lock file says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    period: str
    run_id: str
    owner: str
    host: str
    pid: int
    acquired: datetime
    heartbeat: datetime

    def describe(self) -> str:
        return (f"run {self.run_id!r} ({self.owner}@{self.host}, pid {self.pid}; since {self.acquired:%Y-%m-%d %H:%M:%S}Z, "
                f"heartbeat {self.heartbeat:%Y-%m-%d %H:%M:%S}Z)")

    def age_s(self, now: datetime) -> float:
        """Seconds since the holder's last heartbeat."""
        return (now - self.heartbeat).total_seconds()


def decide(holder: Holder | None, run_id: str, now: datetime, stale_after_s: float = STALE_AFTER_S) -> Action:
    """What a run does on finding ``holder`` in the lock file (None: no lock file)."""
    if holder is None:
        return "take"
    if holder.run_id == run_id:
        return "reenter"
    return "break" if holder.age_s(now) > stale_after_s else "wait"


def parse_holder(data: bytes, period: str, modified_ms: int) -> Holder:
    """The lock file's holder; a file that does not parse (its writer died mid-create) is an unknown holder
    whose heartbeat is the file's modification time, so it goes stale like any other."""
    try:
        return Holder.model_validate_json(data)
    except ValidationError:
        at = datetime.fromtimestamp(modified_ms / 1000, UTC)
        return Holder(period=period, run_id=UNREADABLE, owner="?", host="?", pid=0, acquired=at, heartbeat=at)


def locks_dir(plans_dir: str) -> str:
    return posixpath.join(plans_dir, "locks")


def lock_path(plans_dir: str, period: str) -> str:
    return posixpath.join(locks_dir(plans_dir), period + SUFFIX)


@dataclass
class PeriodLock:
    """The lock of one period, as seen by the run ``run_id``."""

    hdfs: WebHdfs
    plans_dir: str
    period: str
    run_id: str
    wait_s: float = WAIT_S
    poll_s: float = POLL_S
    stale_after_s: float = STALE_AFTER_S

    @classmethod
    def of(cls, hdfs: WebHdfs, plans_dir: str, period_start: datetime, run_id: str, **options: float) -> PeriodLock:
        return cls(hdfs, plans_dir, period_id(period_start), run_id, **options)

    @property
    def path(self) -> str:
        return lock_path(self.plans_dir, self.period)

    def read(self) -> tuple[int, Holder] | None:
        """The lock file's inode id and holder, or None if there is none."""
        found = self.hdfs.read_with_id(self.path)
        return None if found is None else (found[0], parse_holder(found[2], self.period, found[1]))

    def acquire(self) -> Holder:
        """Take, re-enter or (stale) break and take the lock; wait for another holder up to ``wait_s``."""
        began = time.monotonic()
        while True:
            found = self.read()
            now = datetime.now(UTC)
            action = decide(found[1] if found else None, self.run_id, now, self.stale_after_s)
            if action == "take":
                if self.hdfs.create_exclusive(self.path, self._holder(now, now).model_dump_json().encode()):
                    log.info("period %s: lock %s taken by run %r", self.period, self.path, self.run_id)
                    return self._holder(now, now)
            elif found and action == "reenter":
                if held := self._renew(found[1], now):
                    return held
            elif found and action == "break":
                log.warning("period %s: breaking the stale lock of %s (no heartbeat for %.0f s, more than %.0f s)",
                            self.period, found[1].describe(), found[1].age_s(now), self.stale_after_s)
                self.hdfs.delete_id(found[0])
            elif found:
                waited = time.monotonic() - began
                if waited >= self.wait_s:
                    raise PeriodLockedError(
                        f"period {self.period} is being run by {found[1].describe()}; gave up after waiting {waited:.0f} s. "
                        f"If that run is gone, break its lock: corral pipeline-lock break {self.period} --plans-dir {self.plans_dir}")
                log.info("period %s is held by %s; waiting (%.0f of %.0f s)", self.period, found[1].describe(), waited, self.wait_s)
                time.sleep(min(self.poll_s, max(self.wait_s - waited, 0.0)))

    def _renew(self, holder: Holder, now: datetime) -> Holder | None:
        """Overwrite our own lock file with a fresh heartbeat; None if another task of this run renews it right now
        (then look again). Only a lock broken as stale between our read and this write would be overwritten."""
        renewed = self._holder(holder.acquired, now)
        if not self.hdfs.replace(self.path, renewed.model_dump_json().encode()):
            return None
        log.info("period %s: run %r re-entered its lock (held since %s)", self.period, self.run_id, holder.acquired.isoformat())
        return renewed

    def release(self) -> bool:
        """Delete the lock if this run holds it; True if it did."""
        found = self.read()
        if found is None or found[1].run_id != self.run_id:
            log.warning("period %s: run %r does not hold the lock (%s); nothing released", self.period, self.run_id,
                        found[1].describe() if found else "no lock file")
            return False
        released = self.hdfs.delete_id(found[0])
        log.info("period %s: lock released by run %r", self.period, self.run_id)
        return released

    def _holder(self, acquired: datetime, heartbeat: datetime) -> Holder:
        return Holder(period=self.period, run_id=self.run_id, owner=_user(), host=socket.gethostname(), pid=os.getpid(),
                      acquired=acquired, heartbeat=heartbeat)


@contextmanager
def holding(lock: PeriodLock) -> Iterator[Holder]:
    """Hold ``lock`` for the block; released at its end, also on failure."""
    holder = lock.acquire()
    try:
        yield holder
    finally:
        lock.release()


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (a container)
        return str(os.getuid())


def list_locks(hdfs: WebHdfs, plans_dir: str, stale_after_s: float = STALE_AFTER_S) -> list[dict[str, object]]:
    """Every period lock under ``plans_dir``: its holder, heartbeat age and whether it is stale."""
    if hdfs.status(locks_dir(plans_dir), strict=False) is None:
        return []
    now, out = datetime.now(UTC), []
    for name in sorted(hdfs.list(locks_dir(plans_dir))):
        if name.endswith(SUFFIX) and (found := PeriodLock(hdfs, plans_dir, name.removesuffix(SUFFIX), "").read()):
            holder = found[1]
            out.append({**json.loads(holder.model_dump_json()), "path": lock_path(plans_dir, holder.period),
                        "heartbeat_age_s": round(holder.age_s(now), 1), "stale": holder.age_s(now) > stale_after_s})
    return out


def break_lock(hdfs: WebHdfs, plans_dir: str, period: str, run_id: str | None = None) -> Holder:
    """Delete a period's lock (only if ``run_id`` holds it, when given); returns the holder it had."""
    lock = PeriodLock(hdfs, plans_dir, period, "")
    found = lock.read()
    if found is None:
        raise PeriodLockedError(f"period {period} has no lock ({lock.path} does not exist)")
    if run_id is not None and found[1].run_id != run_id:
        raise PeriodLockedError(f"period {period} is held by {found[1].describe()}, not by run {run_id!r}; nothing broken")
    if not hdfs.delete_id(found[0]):
        raise PeriodLockedError(f"the lock of period {period} changed while breaking it; look again (corral pipeline-lock show)")
    log.warning("period %s: lock of %s broken by an operator", period, found[1].describe())
    return found[1]

