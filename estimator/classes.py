"""Per-class task rates from the history store: Paragon's sparse matrix for Hadoop jobs (paper 003 §2.1;
docs/paragon.md "Heterogeneous racks in Corral").

A task sample records the node its attempt ran on (JobHistory's nodeHttpAddress); the cluster spec
maps the node to its rack and the rack to its node class. For every recurring job, its median task
rate on each class it ran on over its median on all of them is its speedup there. The classes a job
has not run on are filled in by the classification engine (``corral_yarn.paragon.classify``): the
jobs seen on every class are the dense rows of a jobs x classes matrix of log speedups, and a job
seen on some classes is folded in from those entries and its row reconstructed (§3.1).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corral_yarn.contracts import MAX_SPEEDUP, ClusterSpec, Workload
from corral_yarn.paragon.classify import Sparse, classify, train
from estimator.records import SUCCEEDED, JobRun, TaskSample

log = logging.getLogger(__name__)

MIN_DENSE_JOBS = 2  # jobs seen on every class needed to train the engine (classify.train's least)


@dataclass(frozen=True)
class ClassSpeedups:
    """Per recurring key: speedup per class, and which of them the classification engine filled in."""

    speedups: dict[str, dict[str, float]]
    filled: dict[str, list[str]]


def node_classes(cluster: ClusterSpec) -> dict[str, str]:
    """Host name -> node class, from the cluster spec's racks."""
    return {m: r.node_class for r in cluster.racks if r.node_class for m in r.machines}


def _rate(sample: TaskSample) -> float | None:
    return sample.bytes / sample.seconds if sample.seconds > 0 and sample.bytes > 0 else None


def observed(runs: Sequence[JobRun], cluster: ClusterSpec) -> dict[str, dict[str, float]]:
    """Per recurring key, per node class it ran on: median map task rate there over its median on all
    classes (reduce samples where a job has no map samples); samples on unknown nodes are left out.
    Runs are pooled steadily: each task's rate is taken relative to its run's geometric mean of per-class
    medians (a run of other data, whose tasks all run faster, or with another mix of classes, does not
    move the ratio between classes); a class's figure is the median over runs of its run-relative median,
    over the median of all run-relative rates. Runs on one class are used only for a job with no other."""
    where = node_classes(cluster)
    by_key: dict[str, list[dict[str, list[float]]]] = defaultdict(list)
    for run in runs:
        if run.outcome != SUCCEEDED:
            continue
        per_class: dict[str, list[float]] = defaultdict(list)
        for s in run.map_task_samples or run.reduce_task_samples:
            if (rate := _rate(s)) is not None and s.node in where:
                per_class[where[s.node]].append(rate)
        if per_class:
            by_key[run.recurring_key].append(per_class)
    return {key: _pooled(key_runs) for key, key_runs in by_key.items()}


def _pooled(runs: list[dict[str, list[float]]]) -> dict[str, float]:
    """One job's speedups from its runs' per-class rates (``observed``)."""
    used = [r for r in runs if len(r) > 1] or runs
    relative: dict[str, list[float]] = defaultdict(list)
    samples: list[float] = []
    for per_class in used:
        middle = float(np.exp(np.mean([np.log(np.median(rates)) for rates in per_class.values()])))
        for c, rates in per_class.items():
            relative[c].append(float(np.median(rates)) / middle)
            samples.extend(rate / middle for rate in rates)
    overall = float(np.median(samples))
    return {c: float(np.clip(np.median(v) / overall, 1.0 / MAX_SPEEDUP, MAX_SPEEDUP)) for c, v in relative.items()}


def speedups(runs: Sequence[JobRun], cluster: ClusterSpec) -> ClassSpeedups:
    """Observed speedups, with each job's unseen classes filled in by the classification engine when at
    least MIN_DENSE_JOBS jobs ran on every class; otherwise unseen classes keep the class defaults."""
    seen = observed(runs, cluster)
    names = cluster.class_names
    dense = [k for k in sorted(seen) if set(seen[k]) == set(names)]
    sparse = [k for k in sorted(seen) if k not in dense]
    out = {k: dict(v) for k, v in seen.items()}
    filled: dict[str, list[str]] = {}
    if len(names) < 2 or not sparse or len(dense) < MIN_DENSE_JOBS:
        if sparse and len(names) > 1:
            log.info("node classes: %d jobs ran on every class (need %d): unseen classes keep the class defaults", len(dense), MIN_DENSE_JOBS)
        return ClassSpeedups(out, filled)
    column = {c: i for i, c in enumerate(names)}
    with np.errstate(invalid="ignore", divide="ignore"):  # dense rows alike after centring: an empty spectrum, rank 1
        model = train(np.log([[seen[k][c] for c in names] for k in dense]))  # log speed, as Paragon's SC matrix (§2.1)
    by_count: dict[int, list[str]] = defaultdict(list)
    for k in sparse:
        by_count[len(seen[k])].append(k)
    for keys in by_count.values():  # a batch of rows with the same number of known entries (classify.Sparse)
        cols = np.array([[column[c] for c in sorted(seen[k])] for k in keys])
        values = np.log([[seen[k][c] for c in sorted(seen[k])] for k in keys])
        rows = classify(model, Sparse(cols=cols, values=values))
        for k, row in zip(keys, rows):
            filled[k] = [c for c in names if c not in seen[k]]
            for c in filled[k]:
                out[k][c] = float(np.clip(np.exp(row[column[c]]), 1.0 / MAX_SPEEDUP, MAX_SPEEDUP))
    log.info("node classes: %d jobs seen on every class, %d filled in by classification", len(dense), len(filled))
    return ClassSpeedups(out, filled)


def with_class_speedups(workload: Workload, runs: Sequence[JobRun], cluster: ClusterSpec) -> tuple[Workload, ClassSpeedups]:
    """The predicted jobs with their per-class speedups (jobs without task samples on known nodes keep
    the class defaults)."""
    found = speedups(runs, cluster)
    jobs = [j.model_copy(update={"class_speedups": found.speedups[j.recurring_key]}) if j.recurring_key in found.speedups else j
            for j in workload.jobs]
    return Workload(jobs=jobs), found
