"""A seeded synthetic history of recurring jobs with known truth, to test the predictors (thesis §2.2).

Each job runs at one to three fixed times of day, every day, on weekdays only or on weekends only.
Its true input size at a slot is base x slot factor x (weekend factor on weekends) x growth^days;
the observed size is the truth times (1 + e), e ~ Normal(0, noise), and, with probability
``outlier_rate``, times a factor of 3 (an odd day). Arrivals are jittered around the slot time.
Shuffle and output follow from per-job selectivities with the same noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

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


def _job(rng: np.random.Generator, index: int) -> _Job:
    n = int(rng.integers(1, 4))
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
        submit = date + timedelta(seconds=slot + float(rng.normal(0.0, spec.arrival_jitter_s)))
        run = JobRun(
            run_id=f"synthetic:{job.key}:{submit:%Y%m%dT%H%M%S}",
            recurring_key=job.key,
            name=f"{job.key}-{submit:%Y-%m-%dT%H:%M}",
            source="synthetic",
            submit_time=submit,
            input_bytes=int(observed[0]),
            shuffle_bytes=int(observed[1]),
            output_bytes=int(observed[2]),
            map_tasks=max(1, int(np.ceil(observed[0] / (128 * 2**20)))),
            reduce_tasks=max(1, int(np.ceil(observed[1] / GB))),
        )
        out.append((run, truth))
    return out


def synthetic_history(spec: SyntheticSpec) -> tuple[list[JobRun], dict[str, tuple[float, float, float]]]:
    """The runs, oldest first, and the true (input, shuffle, output) bytes of each run by run id."""
    rng = np.random.default_rng(spec.seed)
    jobs = [_job(rng, i) for i in range(spec.jobs)]
    pairs = [p for day in range(7 * spec.weeks) for job in jobs for p in _runs_on_day(job, spec, rng, day)]
    pairs.sort(key=lambda p: p[0].submit_time)
    return [r for r, _ in pairs], {r.run_id: t for r, t in pairs}
