"""The MapReduce JobHistory server REST API (``/ws/v1/history/mapreduce``) as a history source.

Job sizes are the job counters: input = HDFS_BYTES_READ of the maps, shuffle = REDUCE_SHUFFLE_BYTES
(0 for a map-only job), output = HDFS_BYTES_WRITTEN, plus MAP_OUTPUT_BYTES in the log. Task samples
come from each successful attempt: a map's elapsed time and HDFS_BYTES_READ, a reduce's reduce-phase
time (elapsedReduceTime), its whole attempt's time (elapsedTime, what its container took) and
HDFS_BYTES_WRITTEN, with the node and rack it ran on (thesis §3.1.2).
A succeeded job without one of the needed counters is skipped and counted as "missing counter".
"""

from __future__ import annotations

import logging

from tqdm import tqdm

from corral_yarn.cluster.errors import ClusterError
from corral_yarn.cluster.history import JobHistory
from estimator.identity import RecurringKey, plan_entry, tagged_key
from estimator.records import SUCCEEDED, IngestReport, JobRun, TaskSample
from estimator.sources.rest import from_ms

log = logging.getLogger(__name__)

INPUT_DIR = "mapreduce.input.fileinputformat.inputdir"
JOB_TAGS = "mapreduce.job.tags"  # the application tags, as YARNRunner and the pipeline write them into job.xml


class MissingCounter(Exception):
    """A counter the job row needs is absent (the job's history is partial)."""


def _need(counters: dict[str, dict[str, int]], name: str, part: str) -> int:
    if name not in counters:
        raise MissingCounter(name)
    return int(counters[name][part])


def job_sizes(counters: dict[str, dict[str, int]], reduces: int) -> tuple[int, int, int]:
    """(input, shuffle, output) bytes of a job from its counters."""
    shuffle = _need(counters, "REDUCE_SHUFFLE_BYTES", "total") if reduces > 0 else 0
    return _need(counters, "HDFS_BYTES_READ", "map"), shuffle, _need(counters, "HDFS_BYTES_WRITTEN", "total")


class JobHistorySource:
    """Reads finished MapReduce jobs from a JobHistory server (e.g. ``http://host:19888``)."""

    def __init__(self, url: str, key: RecurringKey, tasks: bool = True, history: JobHistory | None = None) -> None:
        self.history = history or JobHistory(url)
        self.key = key
        self.tasks = tasks

    def read(self, report: IngestReport, skip_ids: set[str] = frozenset()) -> list[JobRun]:
        """Every finished job not in ``skip_ids`` (run ids already stored) as a run."""
        runs = []
        for job_id in tqdm(self.history.job_ids(), desc="jobhistory", unit="job", leave=False):
            report.read += 1
            if f"jobhistory:{job_id}" in skip_ids:
                report.duplicates += 1
                continue
            try:
                runs.append(self.run(job_id))
            except MissingCounter as exc:
                report.skip("missing counter", f"{job_id}: no {exc}")
            except ClusterError as exc:  # this job's history is gone or broken; the others are still read
                report.skip("unreadable job", f"{job_id}: {exc}")
        return runs

    def run(self, job_id: str) -> JobRun:
        job = self.history.job(job_id)
        counters = self.history.counters(job_id)
        outcome = job.get("state", "UNKNOWN")
        reduces = int(job.get("reducesTotal", 0))
        try:
            input_bytes, shuffle_bytes, output_bytes = job_sizes(counters, reduces)
        except MissingCounter:
            if outcome == SUCCEEDED:
                raise
            input_bytes = shuffle_bytes = output_bytes = None  # a failed job's partial counters are not sizes
        maps, reds, placements = self._samples(job_id) if self.tasks and outcome == SUCCEEDED else ((), (), set())
        name = job.get("name") or job_id
        conf = self.history.conf(job_id)
        input_path = conf.get(INPUT_DIR)
        return JobRun(
            run_id=f"jobhistory:{job_id}",
            recurring_key=tagged_key(conf.get(JOB_TAGS), self.key.key(name, input_path, conf.get(self.key.column or ""))),  # --key COLUMN: a job conf property
            name=name,
            source=f"jobhistory:{self.history.rest.base_url}",
            submit_time=from_ms(job.get("submitTime")) or from_ms(job.get("startTime")),
            start_time=from_ms(job.get("startTime")),
            finish_time=from_ms(job.get("finishTime")),
            input_bytes=input_bytes,
            shuffle_bytes=shuffle_bytes,
            output_bytes=output_bytes,
            map_tasks=int(job.get("mapsTotal", 0)),
            reduce_tasks=reduces,
            map_task_samples=maps,
            reduce_task_samples=reds,
            racks=tuple(sorted({r for r, _ in placements})),
            nodes=tuple(sorted({n for _, n in placements})),
            outcome=outcome,
            input_path=input_path,
            **plan_entry(conf.get(JOB_TAGS)),
        )

    def _samples(self, job_id: str) -> tuple[tuple[TaskSample, ...], tuple[TaskSample, ...], set[tuple[str, str]]]:
        """Map and reduce task samples of the successful attempts, and their (rack, node) placements."""
        placements: set[tuple[str, str]] = set()
        maps, reduces = [], []
        for task in self.history.tasks(job_id):
            if task.get("state") != SUCCEEDED or not task.get("successfulAttempt"):
                continue
            attempt = self.history.task_attempt(job_id, task["id"], task["successfulAttempt"])
            counters = self.history.task_counters(job_id, task["id"])
            node = (attempt.get("nodeHttpAddress") or "").split(":")[0] or None
            if node:
                placements.add((attempt.get("rack") or "/default-rack", node))
            if task.get("type") == "MAP" and "HDFS_BYTES_READ" in counters:
                maps.append(TaskSample(attempt.get("elapsedTime", 0) / 1000.0, int(counters["HDFS_BYTES_READ"]), node))
            elif task.get("type") == "REDUCE" and "HDFS_BYTES_WRITTEN" in counters:
                reduces.append(TaskSample(attempt.get("elapsedReduceTime", 0) / 1000.0, int(counters["HDFS_BYTES_WRITTEN"]), node,
                                          container_seconds=attempt["elapsedTime"] / 1000.0 if "elapsedTime" in attempt else None))
            else:
                log.warning("%s %s has no byte counter; left out of the task samples", job_id, task["id"])
        return tuple(maps), tuple(reduces), placements
