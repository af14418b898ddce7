"""Simulation inputs beyond ``corral_yarn.workloads``: the paper's clusters, SWIM FB-2009 replay,
recurring + ad hoc mixes and error injection (thesis §4.5.2, §4.5.5, §4.5.6, §4.5.7).

A job is ad hoc when it has no ``recurring_key``: the planner never sees it.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from corral_yarn.contracts import BLOCK_BYTES, MAX_BYTES, MAX_SECONDS, ClusterSpec, JobSpec, StageSpec, Workload
from corral_yarn.errors import InputError
from corral_yarn.io import parse
from corral_yarn.workloads import example_cluster

GBPS = 1e9 / 8
REDUCE_INPUT_BYTES = 2**30  # SWIM carries no task counts: one reducer per GiB of shuffle (documented)
SWIM_CLUSTER_MACHINES = 600  # the FB-2009 trace came from a 600-machine cluster (SWIM)
SWIM_COLUMNS = ("job_id", "submit_s", "gap_s", "input_bytes", "shuffle_bytes", "output_bytes")
SWIM_LIMITS = {"submit_s": MAX_SECONDS, "input_bytes": MAX_BYTES, "shuffle_bytes": MAX_BYTES, "output_bytes": MAX_BYTES}


def paper_simulation_cluster(racks: int = 50, machines_per_rack: int = 40) -> ClusterSpec:
    """§4.5.7: 2,000 machines in 50 racks of 40, 5:1 to the core, 1 Gbps NICs, 20 tasks per machine
    (our split: 12 map + 8 reduce slots); disks at 100 MB/s as in ``example_cluster``."""
    return example_cluster(racks, machines_per_rack, oversubscription=5.0, map_slots=12, reduce_slots=8,
                           nic_bytes_per_s=1 * GBPS, name=f"paper-sim-{racks}x{machines_per_rack}")


def testbed_cluster() -> ClusterSpec:
    """§4.5.2: 7 racks x 30 machines, 10 Gbps NICs, 5:1 (run it with background_share 0.5)."""
    return example_cluster()


def _scale_stage(stage: StageSpec, factor: float) -> StageSpec:
    return StageSpec(
        name=stage.name, input_bytes=stage.input_bytes * factor, shuffle_bytes=stage.shuffle_bytes * factor,
        output_bytes=stage.output_bytes * factor, map_tasks=stage.map_tasks, reduce_tasks=stage.reduce_tasks,
        map_rate_bytes_per_s=stage.map_rate_bytes_per_s, reduce_rate_bytes_per_s=stage.reduce_rate_bytes_per_s,
        after=stage.after,
    )


# W1-like bytes x 8: the slot load of the thesis's W1 at its lightest (about 8 % at 50 jobs/h, §4.5.6), where the
# core is the bottleneck; at x 1 the tasks are so short that placement hardly matters (docs/simulator.md)
DEFAULT_SCALE = 8.0


def scale_sizes(workload: Workload, factor: float) -> Workload:
    """Every job's bytes x ``factor`` with the same task counts (longer tasks, same parallelism)."""
    return Workload(jobs=[j.model_copy(update={"stages": [_scale_stage(s, factor) for s in j.stages]}) for j in workload.jobs])


def perturb(workload: Workload, size_error: float = 0.0, arrival_error_s: float = 0.0, fraction: float = 1.0, seed: int = 0) -> Workload:
    """What actually runs when the prediction was ``workload`` (§4.5.6): every job's data size off by
    a uniform factor in [1 - x, 1 + x]; a ``fraction`` of the jobs start off by a uniform [-t, t]."""
    if not 0.0 <= size_error < 1.0 or arrival_error_s < 0 or not 0.0 <= fraction <= 1.0:
        raise InputError("size_error in [0, 1), arrival_error_s >= 0 and fraction in [0, 1] please")
    rng = np.random.default_rng(seed)
    jobs = []
    for job in workload.jobs:
        factor = float(rng.uniform(1.0 - size_error, 1.0 + size_error))
        shift = float(rng.uniform(-arrival_error_s, arrival_error_s)) if rng.random() < fraction else 0.0
        jobs.append(job.model_copy(update={
            "stages": [_scale_stage(s, factor) for s in job.stages],
            "arrival_s": max(0.0, job.arrival_s + shift),
        }))
    return Workload(jobs=jobs)


def with_adhoc(recurring: Workload, adhoc: Workload) -> Workload:
    """A mix (§4.5.5): ``adhoc`` jobs lose their recurring_key (the plan ignores them), renamed adhoc-*."""
    extra = [j.model_copy(update={"name": f"adhoc-{j.name}", "recurring_key": None}) for j in adhoc.jobs]
    return Workload(jobs=[*recurring.jobs, *extra])


def spread_arrivals(workload: Workload, span_s: float, seed: int = 0) -> Workload:
    """Arrivals drawn uniformly in [0, span_s] (sorted), as in the online scenario (§4.5.3)."""
    rng = np.random.default_rng(seed)
    arrivals = np.sort(rng.uniform(0.0, span_s, size=len(workload.jobs))) if span_s > 0 else np.zeros(len(workload.jobs))
    return Workload(jobs=[j.model_copy(update={"arrival_s": float(a)}) for j, a in zip(workload.jobs, arrivals)])


def swim_replay(path: str | Path, cluster: ClusterSpec, start_s: float = 0.0, duration_s: float = 3600.0, size_scale: float | None = None, seed: int = 0) -> Workload:
    """Jobs of the SWIM FB-2009 trace submitted in [start_s, start_s + duration_s), scaled to ``cluster``.

    Bytes are scaled by machines / 600 (the trace's cluster) unless ``size_scale`` is given; task
    counts are derived: one map per 128 MiB of input, one reducer per GiB of shuffle (none without
    shuffle); map and reduce rates (not in the trace) are drawn as in W1, 20-80 MB/s.
    """
    machines = sum(len(r.machines) for r in cluster.racks)
    scale = machines / SWIM_CLUSTER_MACHINES if size_scale is None else size_scale
    rng = np.random.default_rng(seed)
    jobs = [
        _swim_job(row, scale, start_s, rng, f"{path}:{line}")
        for line, row in _swim_rows(Path(path))
        if start_s <= row[1] < start_s + duration_s
    ]
    if not jobs:
        raise InputError(f"no SWIM job submitted in [{start_s}, {start_s + duration_s}) s (the trace window)", field=str(path))
    return Workload(jobs=jobs)


def _swim_rows(path: Path) -> list[tuple[int, tuple[str, float, float, float, float]]]:
    """(line number, row) of every non-empty line; the first bad one is an InputError naming line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not a SWIM trace (not UTF-8 text): {exc}") from None
    rows = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    return [(n, _swim_row(r, f"{path}:{n}")) for n, r in enumerate(rows, start=1) if r]


def _swim_row(cells: list[str], where: str) -> tuple[str, float, float, float, float]:
    if len(cells) < len(SWIM_COLUMNS):
        raise InputError(f"{len(cells)} fields, expected {len(SWIM_COLUMNS)}: {', '.join(SWIM_COLUMNS)} (tab-separated)", field=where)
    values = []
    for column, top in SWIM_LIMITS.items():
        text = cells[SWIM_COLUMNS.index(column)]
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0.0 <= value <= top:
            raise InputError(f"expected a number in [0, {top:.0e}], got {text!r}", field=f"{where}: {column}")
        values.append(value)
    return (cells[0], *values)


def _swim_job(row: tuple[str, float, float, float, float], scale: float, start_s: float, rng: np.random.Generator,
              where: str) -> JobSpec:
    name, submit, input_bytes, shuffle, output = row
    input_bytes, shuffle, output = input_bytes * scale, shuffle * scale, output * scale
    reduce_tasks = math.ceil(shuffle / REDUCE_INPUT_BYTES) if shuffle > 0 else 0
    stage = {"name": "main", "input_bytes": input_bytes, "shuffle_bytes": shuffle, "output_bytes": output if reduce_tasks else 0.0,
             "map_tasks": max(1, math.ceil(input_bytes / BLOCK_BYTES)), "reduce_tasks": reduce_tasks,
             "map_rate_bytes_per_s": float(rng.uniform(20e6, 80e6)), "reduce_rate_bytes_per_s": float(rng.uniform(20e6, 80e6))}
    return parse(JobSpec, {"name": f"swim-{name}", "arrival_s": submit - start_s, "stages": [stage], "recurring_key": f"swim-{name}"},
                 source=where)
