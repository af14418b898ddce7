"""A seeded synthetic history of recurring jobs with known truth, to test the predictors (thesis §2.2).

Each job runs at one to three fixed times of day, every day, on weekdays only or on weekends only.
Its true input size at a slot is base x slot factor x (weekend factor on weekends) x growth^days;
the observed size is the truth times (1 + e), e ~ Normal(0, noise), and, with probability
``outlier_rate``, times a factor of 3 (an odd day). Arrivals are jittered around the slot time.
Shuffle and output follow from per-job selectivities with the same noise.

Real traces also hold what this model alone lacks, so a spec may add: ``irregular_jobs`` recurring
jobs that run once a day at a random time of day (a key matched by input path, not by schedule), and
``adhoc_per_day`` one-off jobs (never seen again) at random times with log-uniform inputs of 1 kB to
1 TB, a third of them map-only; a one-off job's truth is its own size.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from corral_yarn.contracts import BLOCK_BYTES
from estimator.records import JobRun

GB = 1e9


@dataclass(frozen=True)
class SyntheticSpec:
    jobs: int = 20
    weeks: int = 4
    noise: float = 0.05
    arrival_jitter_s: float = 120.0
    growth_per_day: float = 0.0
    outlier_rate: float = 0.0
    start: datetime = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
    seed: int = 0
    irregular_jobs: int = 0
    adhoc_per_day: int = 0


@dataclass(frozen=True)
class _Job:
    key: str
    slots_s: tuple[float, ...]
    slot_factor: tuple[float, ...]
    days: str  # "all", "weekday", "weekend"
    base_bytes: float
    weekend_factor: float
    map_selectivity: float
    reduce_selectivity: float
    irregular: bool = False


def _job(rng: np.random.Generator, index: int, irregular: bool = False) -> _Job:
    n = 1 if irregular else int(rng.integers(1, 4))
    slots = np.sort(rng.choice(np.arange(0, 22 * 4), size=n, replace=False) * 900.0 + 1800.0)
    return _Job(
        key=f"synthetic-{index:02d}",
        slots_s=tuple(float(s) for s in slots),
        slot_factor=tuple(float(f) for f in rng.uniform(0.5, 1.5, size=n)),
        days=str(rng.choice(["all", "weekday", "weekend"], p=[0.7, 0.2, 0.1])),
        base_bytes=float(np.exp(rng.uniform(np.log(1 * GB), np.log(10_000 * GB)))),
        weekend_factor=float(rng.uniform(0.3, 0.8)),
        map_selectivity=float(np.exp(rng.uniform(np.log(0.5), np.log(8.0)))),
        reduce_selectivity=float(np.exp(rng.uniform(np.log(0.5), np.log(8.0)))),
        irregular=irregular,
    )


def _runs_on_day(job: _Job, spec: SyntheticSpec, rng: np.random.Generator, day: int) -> list[tuple[JobRun, tuple[float, float, float]]]:
    date = spec.start + timedelta(days=day)
    weekend = date.weekday() >= 5
    if (job.days == "weekday" and weekend) or (job.days == "weekend" and not weekend):
        return []
    out = []
    for slot, factor in zip(job.slots_s, job.slot_factor, strict=True):
        true_input = job.base_bytes * factor * (job.weekend_factor if weekend else 1.0) * (1.0 + spec.growth_per_day) ** day
        truth = (true_input, true_input / job.map_selectivity, true_input / job.map_selectivity / job.reduce_selectivity)
        odd = 3.0 if rng.random() < spec.outlier_rate else 1.0
        observed = [max(1.0, t * odd * (1.0 + rng.normal(0.0, spec.noise))) for t in truth]
        at = float(rng.uniform(0.0, 86_000.0)) if job.irregular else slot + float(rng.normal(0.0, spec.arrival_jitter_s))
        submit = date + timedelta(seconds=at)
        run = JobRun(
            run_id=f"synthetic:{job.key}:{submit:%Y%m%dT%H%M%S}",
            recurring_key=job.key,
            name=f"{job.key}-{submit:%Y-%m-%dT%H:%M}",
            source="synthetic",
            submit_time=submit,
            input_bytes=int(observed[0]),
            shuffle_bytes=int(observed[1]),
            output_bytes=int(observed[2]),
            map_tasks=max(1, int(np.ceil(observed[0] / BLOCK_BYTES))),
            reduce_tasks=max(1, int(np.ceil(observed[1] / GB))),
        )
        out.append((run, truth))
    return out


def _adhoc_on_day(spec: SyntheticSpec, rng: np.random.Generator, day: int) -> list[tuple[JobRun, tuple[float, float, float]]]:
    out = []
    for j in range(spec.adhoc_per_day):
        size = float(10 ** rng.uniform(3, 12))
        shuffle = 0.0 if j % 3 == 0 else size / float(np.exp(rng.uniform(np.log(0.5), np.log(8.0))))
        submit = spec.start + timedelta(days=day, seconds=float(rng.uniform(0.0, 86_000.0)))
        run = JobRun(run_id=f"synthetic:adhoc-{day}-{j}", recurring_key=f"adhoc-{day}-{j}", name=f"query-{day}-{j}", source="synthetic",
                     submit_time=submit, input_bytes=int(size), shuffle_bytes=int(shuffle), output_bytes=int(max(shuffle, size) / 4),
                     map_tasks=max(1, int(np.ceil(size / BLOCK_BYTES))), reduce_tasks=max(1, int(np.ceil(shuffle / GB))) if shuffle else 0)
        out.append((run, (float(run.input_bytes), float(run.shuffle_bytes), float(run.output_bytes))))
    return out


def synthetic_history(spec: SyntheticSpec) -> tuple[list[JobRun], dict[str, tuple[float, float, float]]]:
    """The runs, oldest first, and the true (input, shuffle, output) bytes of each run by run id."""
    rng = np.random.default_rng(spec.seed)
    jobs = [_job(rng, i) for i in range(spec.jobs)] + [_job(rng, spec.jobs + i, irregular=True) for i in range(spec.irregular_jobs)]
    pairs = [p for day in range(7 * spec.weeks) for job in jobs for p in _runs_on_day(job, spec, rng, day)]
    pairs += [p for day in range(7 * spec.weeks) for p in _adhoc_on_day(spec, rng, day)]
    pairs.sort(key=lambda p: p[0].submit_time)
    return [r for r, _ in pairs], {r.run_id: t for r, t in pairs}
