"""Interference from history (docs/paragon.md "Heterogeneous racks in Corral", the interference rule):
jobs whose co-location slowed each other. Paragon measures sensitivity to interference by profiling
against microbenchmarks (paper 003 §3.1); recurring jobs have history instead, so we read it there.

Two runs are co-located when they overlap in time and share a rack (JobRun.racks, from the task
attempts). A run's pace is seconds per input byte; job a's slowdown next to job b is the median pace of
a's runs co-located with a run of b over the median pace of a's runs co-located with nothing. A pair
interferes when either job's slowdown next to the other reaches 1 + ``threshold``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from corral_yarn.contracts import Workload
from estimator.records import SUCCEEDED, JobRun

log = logging.getLogger(__name__)

THRESHOLD = 0.2  # 20 % slower next to the other job than alone


def _timed(runs: Sequence[JobRun]) -> list[JobRun]:
    return sorted((r for r in runs if r.outcome == SUCCEEDED and r.start_time and r.finish_time and r.racks and r.input_bytes),
                  key=lambda r: r.start_time)


def _pace(run: JobRun) -> float:
    return (run.finish_time - run.start_time).total_seconds() / run.input_bytes


def neighbours(runs: Sequence[JobRun]) -> dict[str, set[str]]:
    """Per run id, the recurring keys of the other jobs' runs co-located with it (a sweep in start order)."""
    timed = _timed(runs)
    out: dict[str, set[str]] = {r.run_id: set() for r in timed}
    for i, a in enumerate(timed):
        for b in timed[i + 1:]:
            if b.start_time >= a.finish_time:
                break
            if b.recurring_key != a.recurring_key and set(a.racks) & set(b.racks):
                out[a.run_id].add(b.recurring_key)
                out[b.run_id].add(a.recurring_key)
    return out


def slowdowns(runs: Sequence[JobRun]) -> dict[tuple[str, str], float]:
    """(a, b) -> a's median pace next to b over its median pace alone, where a has both kinds of runs."""
    near = neighbours(runs)
    alone: dict[str, list[float]] = defaultdict(list)
    beside: dict[tuple[str, str], list[float]] = defaultdict(list)
    for run in _timed(runs):
        if not near[run.run_id]:
            alone[run.recurring_key].append(_pace(run))
        for other in near[run.run_id]:
            beside[(run.recurring_key, other)].append(_pace(run))
    return {(a, b): float(np.median(paces) / np.median(alone[a])) for (a, b), paces in beside.items() if alone[a]}


def interfering(runs: Sequence[JobRun], threshold: float = THRESHOLD) -> dict[str, set[str]]:
    """Per recurring key, the keys it interferes with (symmetric)."""
    out: dict[str, set[str]] = defaultdict(set)
    for (a, b), slowdown in sorted(slowdowns(runs).items()):
        if slowdown >= 1.0 + threshold:
            out[a].add(b)
            out[b].add(a)
    log.info("interference: %d pairs of jobs slowed each other by %.0f %% or more", sum(map(len, out.values())) // 2, 100 * threshold)
    return dict(out)


def with_interference(workload: Workload, runs: Sequence[JobRun], threshold: float = THRESHOLD) -> Workload:
    """The predicted jobs, each with the recurring keys of the jobs it interferes with."""
    pairs = interfering(runs, threshold)
    return Workload(jobs=[j.model_copy(update={"interferes_with": sorted(pairs[j.recurring_key])}) if j.recurring_key in pairs else j
                          for j in workload.jobs])
