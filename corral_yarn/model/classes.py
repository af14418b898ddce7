"""Heterogeneous racks (docs/paragon.md "Heterogeneous racks in Corral"): a cluster whose racks belong to
node classes is planned class by class, each class a cluster of identical machines; a job's task rates
on a class are its reference rates times its speedup there (Paragon's server configurations, paper 003 §2.1)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Literal

from corral_yarn.contracts import ClusterSpec, JobSpec
from corral_yarn.errors import InputError

log = logging.getLogger(__name__)


def class_racks(cluster: ClusterSpec) -> dict[str, list[int]]:
    """The rack indices of every node class, classes in the order their first rack appears."""
    out: dict[str, list[int]] = {name: [] for name in cluster.class_names}
    for i, rack in enumerate(cluster.racks):
        out[rack.node_class].append(i)
    return out


Startup = Literal["job_startup_s", "task_startup_s"]  # MRCute+'s per-job constant and per-task start-up (docs/model.md)
STARTUPS: tuple[Startup, ...] = ("job_startup_s", "task_startup_s")


def startup(cluster: ClusterSpec, name: str | None, kind: Startup) -> float:
    """MRCute+'s start-up ``kind`` on class ``name``: the class's own figure, else the model's (0 for the thesis's model)."""
    if cluster.model == "paper":
        return 0.0
    own = getattr(cluster.node_classes[name], kind) if name is not None and cluster.node_classes else None
    return getattr(cluster.model, kind) if own is None else own


def mean_startup(cluster: ClusterSpec, kind: Startup, racks: list[int] | None = None) -> float:
    """A start-up figure averaged rack by rack over ``racks`` (default: every rack), as the task rates are
    for a job spread over classes: its AM and its tasks may start on any of them."""
    chosen = range(len(cluster.racks)) if racks is None else racks
    return classes_startup(cluster, kind, [cluster.racks[i].node_class for i in chosen])


def classes_startup(cluster: ClusterSpec, kind: Startup, classes: Sequence[str | None]) -> float:
    """A start-up figure averaged rack by rack over racks whose node classes are ``classes`` (one entry a rack)."""
    return sum(startup(cluster, name, kind) for name in classes) / len(classes)


def with_startups(cluster: ClusterSpec, figure: Callable[[Startup], float]) -> dict[str, object]:
    """The model update setting both start-ups to ``figure(kind)``; none for the thesis's model."""
    return {} if cluster.model == "paper" else {"model": cluster.model.model_copy(update={kind: figure(kind) for kind in STARTUPS})}


def class_cluster(cluster: ClusterSpec, name: str) -> ClusterSpec:
    """The racks of class ``name`` as a cluster of identical machines: the class's B_D and start-ups,
    the same NICs, rack uplinks and model otherwise (the network does not change with the class)."""
    node_class = cluster.node_classes[name]
    return cluster.model_copy(update={
        "racks": [r.model_copy(update={"node_class": None}) for r in cluster.racks if r.node_class == name],
        "node_classes": None,
        "disk_bandwidth_bytes_per_s": node_class.disk_bandwidth_bytes_per_s or cluster.disk_bandwidth_bytes_per_s,
        **with_startups(cluster, lambda kind: startup(cluster, name, kind)),
    })


def speedups(job: JobSpec, cluster: ClusterSpec, name: str) -> tuple[float, float]:
    """(map, reduce) multipliers of the job's rates on class ``name``: the job's own figure for the class
    if it has one (history or classification), else the class's defaults."""
    if job.class_speedups and name in job.class_speedups:
        return job.class_speedups[name], job.class_speedups[name]
    c = cluster.node_classes[name]
    return c.map_speedup or c.speedup, c.reduce_speedup or c.speedup


def job_on_class(job: JobSpec, cluster: ClusterSpec, name: str) -> JobSpec:
    """The job as it runs on class ``name``: B_map^P and B_reduce^P scaled by its speedups there."""
    map_speedup, reduce_speedup = speedups(job, cluster, name)
    if (map_speedup, reduce_speedup) == (1.0, 1.0):
        return job
    stages = [s.model_copy(update={"map_rate_bytes_per_s": s.map_rate_bytes_per_s * map_speedup,
                                   "reduce_rate_bytes_per_s": s.reduce_rate_bytes_per_s * reduce_speedup}) for s in job.stages]
    return job.model_copy(update={"stages": stages})


def check_class_speedups(jobs: list[JobSpec], cluster: ClusterSpec) -> None:
    """A job's per-class speedups must name the cluster's node classes."""
    known = set(cluster.node_classes or ())
    for j, job in enumerate(jobs):
        if unknown := sorted(set(job.class_speedups or ()) - known):
            raise InputError(f"names node classes the cluster does not have: {unknown} (cluster: {sorted(known) or 'none'})",
                             field=f"jobs[{j}].class_speedups ({job.name})")


def identical_machines(jobs: list[JobSpec], cluster: ClusterSpec) -> tuple[list[JobSpec], ClusterSpec]:
    """The cluster as identical machines and every job at its mean task rates over the racks,
    Min{B_D, rate x speedup} averaged rack by rack (thesis §3.1.2), and the mean start-ups: what a
    class-blind history gives."""
    racks = [r.node_class for r in cluster.racks]
    disks = {name: c.disk_bandwidth_bytes_per_s or cluster.disk_bandwidth_bytes_per_s for name, c in cluster.node_classes.items()}
    flat = cluster.model_copy(update={"racks": [r.model_copy(update={"node_class": None}) for r in cluster.racks], "node_classes": None,
                                      "disk_bandwidth_bytes_per_s": max(disks.values()), **with_startups(cluster, lambda kind: mean_startup(cluster, kind))})
    out = []
    for job in jobs:
        per_rack = [(speedups(job, cluster, name), disks[name]) for name in racks]
        stages = [s.model_copy(update={
            "map_rate_bytes_per_s": sum(min(d, s.map_rate_bytes_per_s * m) for (m, _), d in per_rack) / len(per_rack),
            "reduce_rate_bytes_per_s": sum(min(d, s.reduce_rate_bytes_per_s * r) for (_, r), d in per_rack) / len(per_rack)})
            for s in job.stages]
        out.append(job.model_copy(update={"stages": stages, "class_speedups": None}))
    return out, flat


def with_node_classes(live: ClusterSpec, classes: ClusterSpec, source: str = "cluster spec") -> ClusterSpec:
    """The live cluster with the node classes of the cluster spec ``classes`` (read from ``source``): each rack
    takes the ``node_class`` of the rack of the same name there, its machines stay the live ones; every live
    rack must be in ``classes``. A rack of ``classes`` that is not live (down for maintenance) is only warned
    of: the plan is made on the live racks, as without classes."""
    if not classes.node_classes:
        raise InputError(f"{source}: no node_classes: give the classes and each rack's node_class (docs/paragon.md)")
    named = {r.name: r.node_class for r in classes.racks}
    live_names = [r.name for r in live.racks]
    if missing := [name for name in live_names if name not in named]:
        raise InputError(f"{source}: no node_class for the live cluster's racks {missing} (its racks: {sorted(named)})")
    if unknown := sorted(named.keys() - set(live_names)):
        log.warning("%s: racks %s are not live (no live DataNode or NodeManager): planned without them", source, unknown)
    return live.model_copy(update={"racks": [r.model_copy(update={"node_class": named[r.name]}) for r in live.racks],
                                   "node_classes": classes.node_classes})
