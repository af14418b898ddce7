"""Where the pipeline keeps its state and how it describes the cluster to the planner.

Local state lives under ``home`` (a shared volume when Airflow has several workers): the catalog,
the estimator's history store, each period's files and report, and the run records. Plans are
published on HDFS under ``plans_dir``; each run's input and output go under ``runs_dir``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, field_validator

from corral_yarn.cluster.tags import period_id
from corral_yarn.contracts import Scenario, Sharing
from corral_yarn.io import parse
from estimator.interference import THRESHOLD


class PipelineSettings(BaseModel):
    """The knobs shared by the planning and run steps (the DAGs' Params)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    home: Path
    plans_dir: str = "/corral/plans"
    runs_dir: str = "/corral/runs"
    nic_gbps: PositiveFloat = 10.0
    disk_mbps: PositiveFloat = 100.0
    oversubscription: float = Field(5.0, gt=1.0)
    task_memory_mb: int = Field(1024, ge=128, description="one task container's memory, for slots per machine")
    node_classes_file: str = Field("", description="cluster spec whose node classes the live racks take (docs/paragon.md); empty: none")
    interference: float | None = Field(None, gt=0.0, description="F: mark jobs whose co-location slowed one by F or more; None: off")
    sharing: Sharing = Field("whole-rack", description="whole-rack (thesis §4.3) or slots: small jobs share a rack (docs/planner.md)")

    @field_validator("interference", mode="before")
    @classmethod
    def _interference_switch(cls, value: Any) -> Any:
        """The Param's switch: true is on at the CLI's default F, false is off."""
        if isinstance(value, bool):
            return THRESHOLD if value else None
        return value

    @property
    def node_classes(self) -> Path | None:
        """The cluster spec file of the node classes (a relative path is under home); None: identical machines."""
        return self.home / self.node_classes_file if self.node_classes_file else None

    @property
    def catalog(self) -> Path:
        return self.home / "catalog.json"

    @property
    def store(self) -> Path:
        return self.home / "history"

    @property
    def speculation(self) -> Path:
        """Kwiken's per-job speculation settings (``corral kwiken yarn-plan --out``), merged in at submission when present."""
        return self.home / "kwiken-yarn.json"

    @property
    def periods(self) -> Path:
        return self.home / "periods"

    @property
    def records(self) -> Path:
        return self.home / "records"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> PipelineSettings:
        return parse(cls, dict(params), source="params")


class Period(BaseModel):
    """The planning period [start, start + horizon) and how it is planned."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: datetime
    horizon_s: PositiveFloat
    scenario: Scenario
    slack: float = Field(0.0, ge=0.0)

    @property
    def horizon(self) -> timedelta:
        return timedelta(seconds=self.horizon_s)

    @property
    def stamp(self) -> str:
        """The period's id: its directory name and its ``corral-period:`` tag (:func:`~corral_yarn.cluster.tags.period_id`)."""
        return period_id(self.start)
