"""A Kwiken DAG (thesis §5.2): stages with their dependencies, reissue costs c_s and fan-out.

The DAG file (``corral-yarn/kwiken-dag/v1``) names each stage, the stages it runs after, optionally
its reissue cost per request (relative; default its mean latency x fan-out, §5.4.1) and how many
responders it aggregates (``fanout``; > 1 makes it a candidate for partial answers, §5.3.2).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from corral_yarn.contracts import Name, find_cycle
from corral_yarn.model import critical_path

DAG_SCHEMA = "corral-yarn/kwiken-dag/v1"
MAX_FANOUT = 100_000
MAX_COST = 1e12


class KwikenStage(BaseModel):
    """One stage s of a DAG."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Name
    after: list[str] = []
    cost: float | None = Field(None, gt=0, le=MAX_COST, description="c_s, the relative cost of reissuing one request (§5.2)")
    fanout: int = Field(1, ge=1, le=MAX_FANOUT, description="responders the stage aggregates (§5.3.2)")


class KwikenDag(BaseModel):
    """A DAG w of stages; its latency is the longest path (eq. 5.1)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    schema_version: Literal["corral-yarn/kwiken-dag/v1"] = DAG_SCHEMA
    name: str = Name
    stages: list[KwikenStage] = Field(min_length=1, max_length=10_000)

    @model_validator(mode="after")
    def _acyclic(self) -> KwikenDag:
        names = self.names
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate stage names {sorted({n for n in names if names.count(n) > 1})}")
        for s in self.stages:
            if unknown := sorted(set(s.after) - set(names)):
                raise ValueError(f"stage {s.name!r} runs after unknown stages {unknown}")
        if cycle := find_cycle(self.after):
            raise ValueError(f"the stages form a cycle: {' -> '.join(cycle)}")
        return self

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    @property
    def after(self) -> dict[str, list[str]]:
        return {s.name: s.after for s in self.stages}

    def latency(self, stage_latency: NDArray[np.float64]) -> NDArray[np.float64]:
        """End-to-end latency per request from per-stage latencies (..., N), columns in stage order (eq. 5.1)."""
        columns = np.moveaxis(np.asarray(stage_latency, dtype=np.float64), -1, 0)
        return critical_path(self.after, dict(zip(self.names, columns, strict=True)))
