"""MRCute job parameters from the logs of earlier runs (thesis §3.1.2, "Estimating job-specific
parameters"): Estimator(P, D_s, H_P) -> {S_map, S_reduce, B_map, B_reduce, B_D}.

* S_map = input / shuffle and S_reduce = shuffle / output, as ratios of sums over the runs;
* B_map^P = a map task's input bytes over its duration; B_reduce^P = a reduce task's output bytes over
  its reduce-phase time (our contract's unit, docs/model.md); the median over the tasks of the runs;
* B_D per machine: the 95th percentile of the task rates seen on that machine. A task runs at
  Min{B_D, B^P} <= B_D, so this is a lower bound of the disk bandwidth, not a disk benchmark.

Runs of the job in production are used when they carry task samples; otherwise the job's profiling
runs (``is_profile``: the job run on a sample, thesis §3.1.2's fallback for a job with no history).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimator.records import SUCCEEDED, JobRun, TaskSample

log = logging.getLogger(__name__)

RECENT_RUNS = 10
DISK_QUANTILE = 0.95


@dataclass(frozen=True)
class MRCuteParams:
    """The fitted parameters of one recurring job; None where its history says nothing."""

    map_selectivity: float | None
    reduce_selectivity: float | None
    map_rate_bytes_per_s: float | None
    reduce_rate_bytes_per_s: float | None
    bytes_per_map_task: float | None
    reduce_tasks: int | None
    runs: int
    from_profile: bool


def _rates(samples: Sequence[TaskSample]) -> list[float]:
    return [s.bytes / s.seconds for s in samples if s.seconds > 0 and s.bytes > 0]


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if len(values) else None


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if numerator > 0 and denominator > 0 else None


def fit_job(runs: Sequence[JobRun]) -> MRCuteParams:
    """Fit one job's parameters from its most recent successful runs (RECENT_RUNS of them)."""
    ok = [r for r in runs if r.outcome == SUCCEEDED and r.has_sizes]
    production = [r for r in ok if not r.is_profile and r.map_task_samples]
    from_profile = not production
    used = (production or [r for r in ok if r.is_profile] or [r for r in ok if not r.is_profile])[-RECENT_RUNS:]
    if not used:
        return MRCuteParams(None, None, None, None, None, None, 0, False)
    sum_in, sum_sh, sum_out = (sum(getattr(r, q) for r in used) for q in ("input_bytes", "shuffle_bytes", "output_bytes"))
    per_map = [r.input_bytes / r.map_tasks for r in used if r.map_tasks]
    reduces = [r.reduce_tasks for r in used if r.reduce_tasks is not None]
    return MRCuteParams(
        map_selectivity=_ratio(sum_in, sum_sh),  # S_map = |D_i| / D_i^S (thesis §3.1.2)
        reduce_selectivity=_ratio(sum_sh, sum_out),  # S_reduce = shuffle / output
        map_rate_bytes_per_s=_median(_rates([s for r in used for s in r.map_task_samples])),
        reduce_rate_bytes_per_s=_median(_rates([s for r in used for s in r.reduce_task_samples])),
        bytes_per_map_task=_median(per_map),
        reduce_tasks=int(round(float(np.median(reduces)))) if reduces else None,
        runs=len(used),
        from_profile=from_profile and any(r.is_profile for r in used),
    )


def disk_bandwidth(runs: Sequence[JobRun]) -> dict[str, float]:
    """B_D per machine (bytes/s): the DISK_QUANTILE of the task rates observed on it (a lower bound)."""
    by_node: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        for s in (*r.map_task_samples, *r.reduce_task_samples):
            if s.node and s.seconds > 0 and s.bytes > 0:
                by_node[s.node].append(s.bytes / s.seconds)
    return {node: float(np.quantile(rates, DISK_QUANTILE)) for node, rates in sorted(by_node.items())}
