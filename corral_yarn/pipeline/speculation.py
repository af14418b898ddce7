"""Kwiken's speculation settings for the recurring jobs (docs/kwiken.md, "Kwiken for YARN"): learned from
the history store's task durations, written as a settings file, and merged into each job at submission."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.errors import InputError
from corral_yarn.io import load
from corral_yarn.kwiken.speculation import Rule, Scale, SpeculationSettings, TaskStage, TaskType, budget_matching, plan_speculation
from estimator.records import SUCCEEDED, JobRun
from estimator.store import HistoryStore

log = logging.getLogger(__name__)


def task_stages(runs: Sequence[JobRun], keys: Sequence[str] = ()) -> tuple[list[TaskStage], int]:
    """The map and reduce stages of the recurring jobs (only ``keys`` if given) in successful MapReduce runs
    with task samples, and how many runs they come from. N_s is the median task count of the runs; a reduce's
    duration is its reduce phase, and its container's seconds before it (shuffle, sort) are kept beside it."""
    by_key: dict[str, list[JobRun]] = defaultdict(list)
    for run in runs:
        if run.outcome == SUCCEEDED and not run.is_profile and run.application_type == "MAPREDUCE" and run.map_task_samples:
            if not keys or run.recurring_key in keys:
                by_key[run.recurring_key].append(run)
    if missing := sorted(set(keys) - set(by_key)):
        raise InputError(f"the history has no successful MapReduce run with task samples of {missing}", field="--job")
    stages = []
    for key in sorted(by_key):
        for type_, count, samples in (("map", "map_tasks", "map_task_samples"), ("reduce", "reduce_tasks", "reduce_task_samples")):
            timed = [t for r in by_key[key] for t in getattr(r, samples) if t.seconds > 0]
            tasks = int(np.median([getattr(r, count) or len(getattr(r, samples)) for r in by_key[key]]))
            if timed and tasks:
                before = np.array([max(0.0, (t.container_seconds or t.seconds) - t.seconds) for t in timed])  # a reduce's shuffle and sort
                stages.append(TaskStage(key, _type(type_), tasks, np.array([t.seconds for t in timed]), before))
    return stages, sum(len(v) for v in by_key.values())


def _type(name: str) -> TaskType:
    return "map" if name == "map" else "reduce"


def plan_from_store(store: Path, budget: float | None, keys: Sequence[str] = (), seed: int = 0,
                    extra_container_s: float | None = None, rule: Rule = "progress",
                    scale: Scale = "absolute") -> SpeculationSettings:
    """Kwiken's speculation settings for the recurring jobs of the history store at ``store``, at the budget B
    ``budget``, or (``budget`` None) at the B expected to spend ``extra_container_s`` per run of every job,
    another policy's measured spend (``budget_matching``); copies under Kwiken's estimator's ``rule``."""
    if not store.is_dir():
        raise InputError(f"no history store at {store}", field="--history")
    stages, runs = task_stages(HistoryStore(store).runs(), keys)
    if not stages:
        raise InputError(f"the history store {store} has no successful MapReduce run with task samples", field="--history")
    if budget is None:
        if extra_container_s is None:
            raise InputError("give a budget or the extra container-seconds to match", field="--budget")
        budget = budget_matching(extra_container_s, stages)
    return plan_speculation(stages, budget, runs, seed, rule, scale)


def load_settings(path: Path) -> SpeculationSettings | None:
    """The settings file at ``path``, or None when there is none (jobs then keep the cluster's speculation)."""
    return load(SpeculationSettings, path) if path.exists() else None


def with_speculation(job: MapReduceJob, props: dict[str, str]) -> MapReduceJob:
    """``job`` carrying Kwiken's speculation settings ``props`` (the job's own properties win)."""
    if props:
        log.info("%s: Kwiken speculation settings %s", job.name, props)
    return job.model_copy(update={"properties": {**props, **job.properties}}) if props else job
