"""JobHistory server REST client: a finished MapReduce job, its counters, configuration, tasks and where
each attempt ran (the one client of ``/ws/v1/history/mapreduce``; the estimator reads history through it)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from corral_yarn.cluster.errors import ClusterError, RemoteError
from corral_yarn.cluster.rest import RestClient, Retry, as_list, expect, items

SERVICE = "JobHistory server"
API = "/ws/v1/history/mapreduce"
JOBS = f"{API}/jobs"


@dataclass(frozen=True)
class TaskAttempt:
    """One container of a MapReduce job: a task attempt, or the MRAppMaster (type ``AM``)."""

    attempt_id: str
    type: str  # MAP, REDUCE or AM
    state: str
    rack: str  # empty when the history does not say (AM attempts)
    node_http_address: str
    container_id: str
    started_ms: int
    finished_ms: int
    diagnostics: str = ""  # why the attempt ended as it did, as the MR AM recorded it (e.g. a kill's reason)


def job_counters(job_counters: dict[str, Any]) -> dict[str, dict[str, int]]:
    """``{name: {"total": .., "map": .., "reduce": ..}}`` from the ``jobCounters`` object."""
    counters: dict[str, dict[str, int]] = {}
    for group in as_list((job_counters or {}).get("counterGroup")):
        for c in as_list(group.get("counter")):
            counters[c["name"]] = {"total": c.get("totalCounterValue", 0), "map": c.get("mapCounterValue", 0), "reduce": c.get("reduceCounterValue", 0)}
    return counters


def task_counters(job_task_counters: dict[str, Any]) -> dict[str, int]:
    """``{name: value}`` from the ``jobTaskCounters`` object."""
    groups = as_list((job_task_counters or {}).get("taskCounterGroup"))
    return {c["name"]: c.get("value", 0) for g in groups for c in as_list(g.get("counter"))}


def conf_text(value: Any) -> str:
    """A configuration value as text: booleans lower-case as Hadoop's, None empty."""
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def job_id_of(app_id: str) -> str:
    """MapReduce's job id for a YARN application id (``application_<ts>_<n>`` -> ``job_<ts>_<n>``)."""
    return "job_" + app_id.removeprefix("application_")


class JobHistory:
    """REST client of the MapReduce JobHistory server, e.g. ``JobHistory("http://localhost:19888")``."""

    def __init__(self, url: str, timeout_s: float = 30.0, retry: Retry = Retry()) -> None:
        self.rest = RestClient(SERVICE, url, timeout_s=timeout_s, retry=retry)

    def configuration(self) -> dict[str, tuple[str, str]]:
        """The server's effective configuration (``/conf``): key -> (value, source resource)."""
        props = expect(self.rest.get("/conf", params={"format": "json"}), "properties", service=SERVICE)
        return {p["key"]: (str(p["value"]), str(p.get("resource", ""))) for p in props}

    def job_ids(self) -> list[str]:
        """Every job the server has loaded."""
        return [j["id"] for j in items(self.rest.get(JOBS), "jobs", "job", SERVICE)]

    def job(self, job_id: str) -> dict[str, Any]:
        return expect(self.rest.get(f"{JOBS}/{job_id}"), "job", service=SERVICE)

    def counters(self, job_id: str) -> dict[str, dict[str, int]]:
        """The job's counters by name: their total, map and reduce values."""
        return job_counters(expect(self.rest.get(f"{JOBS}/{job_id}/counters"), "jobCounters", service=SERVICE))

    def conf(self, job_id: str) -> dict[str, str]:
        """The job's configuration properties (name -> value, as text: the JSON answer types values like
        ``false`` and ``1000``, which are given back as Hadoop writes them, ``"false"`` and ``"1000"``)."""
        conf = expect(self.rest.get(f"{JOBS}/{job_id}/conf"), "conf", service=SERVICE) or {}
        return {p["name"]: conf_text(p.get("value")) for p in as_list(conf.get("property")) if p.get("name")}

    def tasks(self, job_id: str) -> list[dict[str, Any]]:
        return items(self.rest.get(f"{JOBS}/{job_id}/tasks"), "tasks", "task", SERVICE)

    def task_attempt(self, job_id: str, task_id: str, attempt_id: str) -> dict[str, Any]:
        return expect(self.rest.get(f"{JOBS}/{job_id}/tasks/{task_id}/attempts/{attempt_id}"), "taskAttempt", service=SERVICE)

    def task_counters(self, job_id: str, task_id: str) -> dict[str, int]:
        return task_counters(expect(self.rest.get(f"{JOBS}/{job_id}/tasks/{task_id}/counters"), "jobTaskCounters", service=SERVICE))

    def wait_for_job(self, job_id: str, timeout_s: float = 120.0, poll_s: float = 2.0) -> dict[str, Any]:
        """The job's history once the server has loaded it (it appears shortly after the job ends)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self.job(job_id)
            except RemoteError as exc:
                if exc.status != 404 or time.monotonic() > deadline:
                    raise ClusterError(f"{SERVICE} has no history for {job_id} after {timeout_s:.0f} s: {exc.remote_message}") from None
            time.sleep(poll_s)

    def attempts(self, job_id: str) -> list[TaskAttempt]:
        """Every container of the job: MRAppMaster attempts, then each task's attempts."""
        found = [self._am(a) for a in items(self.rest.get(f"{JOBS}/{job_id}/jobattempts"), "jobAttempts", "jobAttempt", SERVICE)]
        for task in self.tasks(job_id):
            doc = self.rest.get(f"{JOBS}/{job_id}/tasks/{task['id']}/attempts")
            found += [self._task(a) for a in items(doc, "taskAttempts", "taskAttempt", SERVICE)]
        return found

    @staticmethod
    def _am(a: dict[str, Any]) -> TaskAttempt:
        return TaskAttempt(str(a.get("id", "")), "AM", "", "", str(a.get("nodeHttpAddress", "")),
                           str(a.get("containerId", "")), int(a.get("startTime", 0)), 0)

    @staticmethod
    def _task(a: dict[str, Any]) -> TaskAttempt:
        return TaskAttempt(str(a["id"]), str(a.get("type", "")), str(a.get("state", "")), str(a.get("rack", "")),
                           str(a.get("nodeHttpAddress", "")), str(a.get("assignedContainerId", "")),
                           int(a.get("startTime", 0)), int(a.get("finishTime", 0)), str(a.get("diagnostics") or ""))
