"""Several runs on one workload, sharing one plan per scenario (thesis §4.5): what ``corral compare``
and the benchmarks run."""

from __future__ import annotations

from collections.abc import Iterable

from corral_yarn.contracts import ClusterSpec, Plan, Workload
from corral_yarn.sim.metrics import SimResult
from corral_yarn.sim.run import RunSpec, plan_for, simulate
from corral_yarn.sim.schedulers import PLANNED


def run_all(cluster: ClusterSpec, workload: Workload, specs: Iterable[RunSpec], predicted: Workload | None = None, plan: Plan | None = None) -> list[SimResult]:
    """Simulate every spec; Corral and LocalShuffle of one scenario (and background share) follow the
    same plan, built once from ``predicted`` (default: the workload) unless ``plan`` is given."""
    plans: dict[tuple[str, float], Plan | None] = {}
    results = []
    for spec in specs:
        key = (spec.scenario, spec.background_share)
        if spec.scheduler in PLANNED and key not in plans:
            plans[key] = plan if plan is not None else plan_for(predicted or workload, cluster, spec.scenario, spec.background_share)
        results.append(simulate(cluster, workload, spec, plan=plans.get(key)))
    return results


def reduction(value: float, baseline: float) -> float | None:
    """1 - value / baseline: the fraction by which a run improves on the baseline (negative: worse)."""
    return 1.0 - value / baseline if baseline > 0 else None


def summary_row(result: SimResult, baseline: SimResult) -> dict[str, float | None]:
    """Reductions of one run against the baseline, rounded for a JSON line."""
    s, b = result.summary, baseline.summary

    def r(x: float, y: float) -> float | None:
        value = reduction(x, y)
        return None if value is None else round(value, 4)

    return {
        "makespan_s": round(s.makespan_s, 1), "mean_s": round(s.mean_completion_s, 1), "median_s": round(s.median_completion_s, 1),
        "p90_s": round(s.p90_completion_s, 1), "cross_rack_tb": round(s.cross_rack_bytes / 1e12, 3),
        "compute_hours": round(s.compute_hours, 2), "slot_load": round(s.mean_slot_load, 4), "rack_data_cov": round(s.rack_data_cov, 4),
        "local_maps": round(s.local_map_fraction, 3),
        "makespan_reduction": r(s.makespan_s, b.makespan_s), "mean_reduction": r(s.mean_completion_s, b.mean_completion_s),
        "median_reduction": r(s.median_completion_s, b.median_completion_s), "p90_reduction": r(s.p90_completion_s, b.p90_completion_s),
        "cross_rack_reduction": r(s.cross_rack_bytes, b.cross_rack_bytes), "compute_hours_reduction": r(s.compute_hours, b.compute_hours),
    }
