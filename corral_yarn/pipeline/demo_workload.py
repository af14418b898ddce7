"""The bundled recurring workload: four daily MapReduce jobs from hadoop-mapreduce-examples, their
generated input for a period, and two weeks of generated history for the estimator to learn from.

Sized for a 2-core machine running the embedded cluster: a few MiB of input per job cut into 1 MiB
blocks, so each job has a handful of map tasks. The history mimics what these jobs do on that
cluster (input size with 4 % day-to-day noise; the selectivities and task rates measured in one demo
run, where a map task's time is mostly its JVM's start), so ``estimate -> plan`` predicts today's jobs
from the previous days.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from corral_yarn.io import write_atomic
from corral_yarn.pipeline.catalog import Catalog, RecurringJob
from estimator.records import JobRun, TaskSample

MIB = 1 << 20
HISTORY_DAYS = 14
NOISE = 0.04  # day-to-day input size noise (relative standard deviation)
MAP_RATE = 4.0e4  # input bytes per second of a map task on the embedded cluster (measured: 34-52 kB/s)
WORDS = [f"w{k:03d}" for k in range(400)] + ["ERROR", "WARN", "INFO", "timeout", "retry", "user", "click", "query"]


@dataclass(frozen=True)
class DemoJob:
    """One recurring job of the bundled workload."""

    key: str
    program: str
    reduces: int
    input_bytes: int
    time_of_day: timedelta
    shuffle_ratio: float  # shuffle bytes / input bytes for this program on this data (measured)
    output_ratio: float  # output bytes / shuffle bytes (measured)
    reduce_rate: float  # reduce output bytes per second of the reduce phase (measured)
    grep_pattern: str | None = None
    records: bool = False  # key<TAB>value lines (sort) rather than text


DEMO_JOBS = (
    DemoJob("clicks-wordcount", "wordcount", 2, 4 * MIB, timedelta(hours=1), 0.0043, 0.23, 900.0),
    DemoJob("events-sort", "sort", 2, 3 * MIB, timedelta(hours=2), 1.15, 0.87, 3.3e5, records=True),
    DemoJob("errors-grep", "grep", 1, 4 * MIB, timedelta(hours=3), 4e-5, 0.15, 5.0, grep_pattern="ERROR|timeout"),
    DemoJob("queries-wordcount", "wordcount", 1, 2 * MIB, timedelta(hours=4, minutes=30), 0.0043, 0.44, 900.0),
)


def demo_catalog(home: Path, examples_jar: str) -> Catalog:
    """The bundled catalog: each job's period input lands in ``<home>/landing/<key>/<date>``."""
    return Catalog(jar=examples_jar, jobs=[
        RecurringJob(key=j.key, program=j.program, reduces=j.reduces, grep_pattern=j.grep_pattern,
                     local_input=str(home / "landing" / "{key}" / "{date}"), block_bytes=MIB)
        for j in DEMO_JOBS
    ])


def _line(rng: random.Random, records: bool) -> str:
    if records:
        return f"{rng.choice(WORDS)}{rng.randrange(100000):05d}\tv{rng.randrange(10)}"
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))


def generate_input(job: DemoJob, directory: Path, seed: int) -> Path:
    """Write about ``job.input_bytes`` of text (or records) into ``directory/part-0.txt``; kept if present."""
    path = directory / "part-0.txt"
    if path.exists():
        return path
    rng = random.Random(seed)
    lines, total = [], 0
    while total < job.input_bytes:
        lines.append(_line(rng, job.records))
        total += len(lines[-1]) + 1
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def write_period_inputs(catalog: Catalog, start: datetime) -> list[Path]:
    """Generate the local input of every bundled job for the day of ``start``."""
    by_key = {j.key: j for j in DEMO_JOBS}
    return [generate_input(by_key[e.key], e.input_dir(start + by_key[e.key].time_of_day), seed=i)
            for i, e in enumerate(catalog.jobs)]


def _tasks(total: int, count: int, rate: float, node: str) -> tuple[TaskSample, ...]:
    share = total // count
    return tuple(TaskSample(seconds=share / rate, bytes=share, node=node) for _ in range(count))


def _run(job: DemoJob, submit: datetime, rng: random.Random) -> JobRun:
    """One generated run: sizes with noise, one map per MiB block, task samples at the demo rates."""
    input_bytes = int(job.input_bytes * max(0.5, rng.gauss(1.0, NOISE)))
    shuffle = int(input_bytes * job.shuffle_ratio)
    output = int(shuffle * job.output_ratio)
    maps = max(1, math.ceil(input_bytes / MIB))
    start = submit + timedelta(seconds=rng.uniform(2, 6))
    elapsed = 10 + MIB / MAP_RATE + output / (job.reduce_rate * job.reduces)
    return JobRun(
        run_id=f"demo:{job.key}:{submit:%Y%m%dT%H%M%S}", recurring_key=job.key, name=f"{job.key}-{submit:%Y-%m-%dT%H%M}",
        source="generated:corral-demo", submit_time=submit, start_time=start, finish_time=start + timedelta(seconds=elapsed),
        input_bytes=input_bytes, shuffle_bytes=shuffle, output_bytes=output, map_tasks=maps, reduce_tasks=job.reduces,
        map_task_samples=_tasks(input_bytes, maps, MAP_RATE, "demo-node"),
        reduce_task_samples=_tasks(output, job.reduces, job.reduce_rate, "demo-node"),
    )


def demo_history(before: datetime, days: int = HISTORY_DAYS, seed: int = 7) -> list[JobRun]:
    """``days`` days of runs of every bundled job before ``before``'s day, a few minutes off their time of day."""
    rng = random.Random(seed)
    first_day = before.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days)
    return [_run(job, first_day + timedelta(days=d) + job.time_of_day + timedelta(seconds=rng.uniform(-300, 300)), rng)
            for d in range(days) for job in DEMO_JOBS]
