"""One simulation run from contracts to a SimResult: plan (for Corral and LocalShuffle), jobs, loop."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from corral_yarn.contracts import ClusterSpec, Plan, Scenario, Workload
from corral_yarn.errors import InputError
from corral_yarn.planner.build import build_plan
from corral_yarn.sim.engine import SimConfig, Simulator
from corral_yarn.sim.flows import effective_cluster
from corral_yarn.sim.metrics import SimResult, job_results, summarize
from corral_yarn.sim.network import SHARING
from corral_yarn.sim.schedulers import PLANNED, SCHEDULERS, make_policy
from corral_yarn.sim.state import JobRun, StageRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    scheduler: str
    network: str = "tcp"
    scenario: Scenario = "online"
    seed: int = 0
    background_share: float = 0.0
    output_replication: int = 3

    @property
    def label(self) -> str:
        return f"{self.scheduler}+{self.network}"

    def check(self) -> None:
        if self.scheduler not in SCHEDULERS:
            raise InputError(f"unknown scheduler {self.scheduler!r}; choose from {', '.join(SCHEDULERS)}", field="scheduler")
        if self.network not in SHARING:
            raise InputError(f"unknown network {self.network!r}; choose from {', '.join(SHARING)}", field="network")
        if self.output_replication not in (1, 2, 3):
            raise InputError(f"must be 1, 2 or 3, got {self.output_replication}", field="output_replication")
        if not 0.0 <= self.background_share < 1.0:
            raise InputError(f"must be in [0, 1), got {self.background_share}", field="background_share")


def recurring(workload: Workload) -> Workload | None:
    """The jobs the planner knows about: those with a recurring_key (the others are ad hoc)."""
    jobs = [j for j in workload.jobs if j.recurring_key is not None]
    return Workload(jobs=jobs) if jobs else None


def plan_for(predicted: Workload, cluster: ClusterSpec, scenario: Scenario, background_share: float = 0.0) -> Plan | None:
    """Corral's plan of the recurring jobs, built on the bandwidth they actually get: the rack-to-core
    links less the background share (``effective_cluster``)."""
    known = recurring(predicted)
    return build_plan(known, effective_cluster(cluster, background_share), scenario, with_bound=False) if known else None


def simulate(cluster: ClusterSpec, workload: Workload, spec: RunSpec, plan: Plan | None = None, predicted: Workload | None = None) -> SimResult:
    """Run ``workload`` (what actually happens) under ``spec``; Corral and LocalShuffle follow ``plan``,
    built from ``predicted`` (default: the workload itself) when not given. Batch runs set every
    arrival to 0."""
    spec.check()
    if spec.scheduler in PLANNED and plan is None:
        plan = plan_for(predicted or workload, cluster, spec.scenario, spec.background_share)
    if plan is not None and plan.cluster_name != cluster.name:
        raise InputError(f"the plan is for cluster {plan.cluster_name!r}, not {cluster.name!r}", field="plan")
    jobs = _job_runs(workload, len(cluster.racks), spec.scenario)
    policy = make_policy(spec.scheduler, cluster, plan)
    sim = Simulator(cluster, jobs, policy, SimConfig(spec.network, spec.background_share, output_replication=spec.output_replication, seed=spec.seed))
    log.info("simulating %d jobs: %s, %s", len(jobs), spec.label, spec.scenario)
    sim.run()
    results = job_results(jobs, effective_cluster(cluster, spec.background_share))
    return SimResult(
        label=spec.label, scheduler=spec.scheduler, network=spec.network, scenario=spec.scenario, seed=spec.seed,
        cluster_name=cluster.name, background_share=spec.background_share,
        plan_id=plan.plan_id if plan is not None and spec.scheduler in PLANNED else None,
        summary=summarize(results, sim), jobs=results,
    )


def _job_runs(workload: Workload, racks: int, scenario: Scenario) -> list[JobRun]:
    runs = []
    for i, spec in enumerate(workload.jobs):
        job = JobRun(spec=spec, index=i, arrival_s=spec.arrival_s if scenario == "online" else 0.0, key=(), adhoc=spec.recurring_key is None)
        job.stages = {s.name: StageRun(spec=s, uid=64 * i + k, racks=racks) for k, s in enumerate(spec.stages)}
        runs.append(job)
    return runs
