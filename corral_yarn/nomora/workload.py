"""Cluster workloads for the NoMora simulation: generated from published Google-trace statistics, or
replayed from the public Google cluster-trace task-events files (2011, schema v2).

A job is its arrival time and one duration per task (task 0 is the root, the server / master), with
a performance-latency function assigned at random in the paper's mix (NoMora §"Cluster Workloads":
50 % Memcached, 25 % STRADS, 25 % TensorFlow; single-task jobs left out).
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from corral_yarn.errors import InputError

# The paper's mix of performance-latency functions over the trace's jobs (NoMora §"Cluster Workloads").
PAPER_MIX = (("memcached", 0.5), ("strads", 0.25), ("tensorflow", 0.25))


@dataclass(frozen=True)
class TraceJob:
    """A job: arrival (s from the start), each task's duration (s; task 0 the root), its function's name."""

    name: str
    arrival_s: float
    durations_s: np.ndarray
    perf: str


@dataclass(frozen=True)
class GoogleLike:
    """Workload shape, scaled to the cluster. The trace itself is not bundled; these figures are chosen
    from its published totals (Reiss et al., SoCC 2012: ~12.5k machines, ~670k jobs and ~25M tasks in
    29 days, i.e. ~965 jobs/h and ~38 tasks per job, mostly short jobs with a heavy tail, and long-running
    services present from the trace's start) and are assumptions, documented in docs/nomora.md."""

    jobs_per_hour: float = 400.0  # multi-task jobs arriving per hour at 12,500 machines
    tasks_median: float = 12.0  # tasks per arriving job: 2 + log-normal(median, sigma), capped
    tasks_sigma: float = 1.6
    max_tasks: int = 2000
    duration_median_s: float = 600.0  # job duration: log-normal; its tasks vary around it
    duration_sigma: float = 1.4
    task_sigma: float = 0.2
    initial_load: float = 0.5  # share of the slots held by long-running jobs running from the start


def generate(hours: float, machines: int, slots: int, seed: int, shape: GoogleLike = GoogleLike(),
             mix: tuple[tuple[str, float], ...] = PAPER_MIX) -> list[TraceJob]:
    """Long-running jobs filling ``initial_load`` of the slots at t = 0 (never finishing within ``hours``),
    then Poisson arrivals of multi-task jobs, all scaled to ``machines`` (seeded, NumPy PCG64)."""
    for option, value in (("hours", hours), ("machines", machines), ("slots", slots)):
        if not value > 0:
            raise InputError(f"must be > 0, got {value}", field=option)
    rng = np.random.default_rng(seed)
    scale = machines / 12_500
    max_tasks = max(2, min(shape.max_tasks, int(machines * slots * 0.05)))
    jobs = []
    held, target = 0, shape.initial_load * machines * slots
    while held < target:
        tasks = _task_count(rng, shape, max_tasks)
        jobs.append(_job(rng, f"service{len(jobs)}", 0.0, np.full(tasks, 10 * 3600.0 * hours), mix))
        held += tasks
    horizon = hours * 3600.0
    arrival = rng.exponential(3600.0 / (shape.jobs_per_hour * scale))
    while arrival < horizon:
        tasks = _task_count(rng, shape, max_tasks)
        duration = shape.duration_median_s * np.exp(shape.duration_sigma * rng.standard_normal())
        jobs.append(_job(rng, f"job{len(jobs)}", arrival,
                         duration * np.exp(shape.task_sigma * rng.standard_normal(tasks)), mix))
        arrival += rng.exponential(3600.0 / (shape.jobs_per_hour * scale))
    return jobs


def _task_count(rng: np.random.Generator, shape: GoogleLike, cap: int) -> int:
    return int(min(cap, 2 + round(shape.tasks_median * np.exp(shape.tasks_sigma * rng.standard_normal()))))


def _job(rng: np.random.Generator, name: str, arrival: float, durations: np.ndarray,
         mix: tuple[tuple[str, float], ...]) -> TraceJob:
    names, weights = zip(*mix)
    return TraceJob(name, float(arrival), durations.astype(float), str(rng.choice(names, p=np.array(weights) / sum(weights))))


# Google cluster trace 2011 (schema v2), task_events: 13 columns, timestamps in µs since 600 s before the
# trace window; 0 = before the trace, 2^63 - 1 = after it. Event types: 0 SUBMIT, 1 SCHEDULE, 2 EVICT,
# 3 FAIL, 4 FINISH, 5 KILL, 6 LOST, 7 UPDATE_PENDING, 8 UPDATE_RUNNING.
_TIME, _JOB, _TASK, _EVENT = 0, 2, 3, 5
_SUBMIT, _SCHEDULE = 0, 1
_ENDS = {2, 3, 4, 5, 6}
_TRACE_START_US = 600_000_000
_AFTER_TRACE_US = 2**63 - 1


def load_task_events(paths: Iterable[str | Path], hours: float, seed: int,
                     mix: tuple[tuple[str, float], ...] = PAPER_MIX) -> list[TraceJob]:
    """Jobs of the first ``hours`` of the trace from task_events files (``.csv`` or ``.csv.gz``).

    A task's duration runs from its first SCHEDULE to its last EVICT/FAIL/FINISH/KILL/LOST (to the window's
    end when none); its arrival is its job's first SUBMIT (0 for tasks already there at the trace's start).
    Single-task jobs are left out (as in the paper); functions are assigned in ``mix`` (seeded).
    """
    if not hours > 0:
        raise InputError(f"must be > 0, got {hours}", field="hours")
    window_us = _TRACE_START_US + hours * 3600e6
    submit: dict[int, float] = {}
    started: dict[tuple[int, int], float] = {}
    ended: dict[tuple[int, int], float] = {}
    for path in paths:
        for line, row in _rows(Path(path)):
            try:
                time_us, job, task, event = int(row[_TIME]), int(row[_JOB]), int(row[_TASK]), int(row[_EVENT])
            except (IndexError, ValueError):
                raise InputError(f"not a task_events row (13 columns: time, missing, job ID, task index, machine, "
                                 f"event type, ...): {row!r}", field=f"{path}:{line}") from None
            time_us = min(max(time_us, _TRACE_START_US), _AFTER_TRACE_US)
            if time_us >= window_us:
                continue
            seconds = (time_us - _TRACE_START_US) / 1e6
            if event == _SUBMIT:
                submit[job] = min(submit.get(job, seconds), seconds)
            elif event == _SCHEDULE:
                started.setdefault((job, task), seconds)
            elif event in _ENDS:
                ended[(job, task)] = seconds
    return _trace_jobs(submit, started, ended, hours * 3600.0, np.random.default_rng(seed), mix)


def _rows(path: Path) -> Iterable[tuple[int, list[str]]]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", field="task_events") from None
    try:
        text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:  # a corrupt or truncated .gz, or not UTF-8
        raise InputError(f"{path} is not a task_events CSV (gzipped or not): {error}", field="task_events") from None
    rows = [(line, row) for line, row in enumerate(csv.reader(io.StringIO(text)), start=1) if row]
    if not rows:
        raise InputError(f"{path} holds no task_events row", field="task_events")
    yield from rows


def _trace_jobs(submit: dict[int, float], started: dict[tuple[int, int], float], ended: dict[tuple[int, int], float],
                horizon_s: float, rng: np.random.Generator, mix: tuple[tuple[str, float], ...]) -> list[TraceJob]:
    tasks: dict[int, list[float]] = {}
    for (job, task), start in sorted(started.items()):
        end = ended.get((job, task), horizon_s)
        tasks.setdefault(job, []).append(max(1.0, end - start) if end >= start else max(1.0, horizon_s - start))
    jobs = []
    for job in sorted(tasks, key=lambda j: (submit.get(j, 0.0), j)):
        if len(tasks[job]) >= 2:
            jobs.append(_job(rng, f"job{job}", submit.get(job, 0.0), np.array(tasks[job]), mix))
    return jobs
