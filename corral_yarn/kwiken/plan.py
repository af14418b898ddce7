"""A Kwiken reissue plan (``corral-yarn/kwiken-plan/v1``): per stage, the fraction r_s it may reissue and
its timeout T_s, learned from a training trace for one budget (thesis §5.3.1), and its replay on a test
trace with the simulator of §5.4.1."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from corral_yarn.contracts import Name
from corral_yarn.errors import InputError
from corral_yarn.kwiken.apportion import spent
from corral_yarn.kwiken.dag import KwikenDag
from corral_yarn.kwiken.reissue import POLICIES, Outcome, ReissueModel, reissue_draws, simulate
from corral_yarn.kwiken.trace import Trace

PLAN_SCHEMA = "corral-yarn/kwiken-plan/v1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class StageReissue(_Strict):
    """One stage's part of the plan."""

    name: str = Name
    reissue_fraction: float = Field(ge=0.0, le=1.0, description="r_s: the share of requests reissued")
    timeout: float | None = Field(ge=0.0, description="T_s, the (1 - r_s) quantile of training latencies; null: never reissue")
    cost_share: float = Field(ge=0.0, le=1.0, description="c_s, normalised to sum 1 over the DAG")
    variance: float = Field(ge=0.0, description="V_s(0): the stage's latency variance on the training trace")
    planned_variance: float = Field(ge=0.0, description="V̄_s(r_s): its variance under the plan, from the curve's hull")


class KwikenPlan(_Strict):
    """Per-stage reissue timeouts for one DAG and budget."""

    schema_version: Literal["corral-yarn/kwiken-plan/v1"] = PLAN_SCHEMA
    dag: str = Name
    policy: Literal[POLICIES]  # type: ignore[valid-type]
    budget: float = Field(ge=0.0, le=1.0, description="B: extra resources for reissues, as a fraction of the DAG's (eq. 5.3)")
    planned_cost: float = Field(ge=0.0, le=1.0, description="sum_s c_s r_s <= B")
    training_requests: int = Field(ge=1)
    stages: list[StageReissue] = Field(min_length=1)

    @model_validator(mode="after")
    def _within_budget(self) -> KwikenPlan:
        if self.planned_cost > self.budget + 1e-9:
            raise ValueError(f"planned_cost {self.planned_cost} is over the budget {self.budget}")
        return self

    def check(self, dag: KwikenDag) -> None:
        """Refuse a plan made for another DAG (or another version of it)."""
        if [s.name for s in self.stages] != dag.names or self.dag != dag.name:
            raise InputError(f"the plan is for DAG {self.dag!r} with stages {[s.name for s in self.stages]}, "
                             f"not for {dag.name!r} with stages {dag.names}", field="--plan")

    @property
    def timeouts(self) -> np.ndarray:
        return np.array([np.inf if s.timeout is None else s.timeout for s in self.stages])


def plan_reissues(dag: KwikenDag, train: Trace, budget: float, policy: str = "sumvar", seed: int = 0,
                  random_allocations: int = 10_000) -> KwikenPlan:
    """Fit V_s(r) on the training trace and apportion ``budget`` by ``policy`` (§5.3.1, §5.4.2)."""
    model = ReissueModel.fit(dag, train, seed=seed)
    r = model.allocate(policy, budget, seed=seed, random_allocations=random_allocations)
    stages = [StageReissue(name=name, reissue_fraction=float(r_s), timeout=None if np.isinf(t) else float(t), cost_share=float(c),
                           variance=float(curve(0.0)), planned_variance=float(curve(r_s)))
              for name, r_s, t, c, curve in zip(dag.names, r, model.timeouts(r), model.costs, model.curves)]
    return KwikenPlan(dag=dag.name, policy=policy, budget=budget, planned_cost=min(budget, spent(model.costs, r)),
                      training_requests=train.requests, stages=stages)


def replay(dag: KwikenDag, plan: KwikenPlan, test: Trace, seed: int = 0) -> tuple[Outcome, Outcome]:
    """(without reissues, with the plan's) on the test trace, with the same reissue draws (§5.4.1)."""
    plan.check(dag)
    draws = reissue_draws(test.latency, np.random.default_rng(seed))
    return simulate(dag, test.latency, draws, np.full(len(dag.stages), np.inf)), simulate(dag, test.latency, draws, plan.timeouts)
