"""Per-stage latency samples of a DAG's requests (thesis §3.2.2, §5.4.1) and their CSV form.

A trace is one latency per request and stage: a requests x stages matrix, columns in the DAG's stage
order. The CSV form, one row per (request, stage), is what application logs give:

    request_id,stage,latency[,cost]

``latency`` is in any one unit (milliseconds or seconds; figures come out in the same unit);
``cost`` (optional) is the resources the request used at that stage, and its mean per stage is c_s
(§5.4.1). Every request must have exactly one row per stage of the DAG.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from corral_yarn.errors import InputError
from corral_yarn.kwiken.dag import KwikenDag

REQUIRED = ("request_id", "stage", "latency")
MIN_REQUESTS = 100  # fewer samples give no usable tail (the thesis uses >= 10,000, §5.4.1)
MAX_LATENCY = 1e12


@dataclass(frozen=True)
class Trace:
    """Latency (requests x stages) and, when the log had it, the mean cost per stage."""

    stages: tuple[str, ...]
    latency: NDArray[np.float64]
    cost: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        if self.latency.ndim != 2 or self.latency.shape[1] != len(self.stages):
            raise ValueError(f"latency must be requests x {len(self.stages)} stages, got shape {self.latency.shape}")

    @property
    def requests(self) -> int:
        return self.latency.shape[0]

    def split(self, train_fraction: float) -> tuple[Trace, Trace]:
        """The first ``train_fraction`` of requests (in log order) for training, the rest for testing (§5.4.1)."""
        k = int(round(self.requests * train_fraction))
        return Trace(self.stages, self.latency[:k], self.cost), Trace(self.stages, self.latency[k:], self.cost)


def stage_costs(dag: KwikenDag, trace: Trace) -> NDArray[np.float64]:
    """c_s normalised to sum 1 (§5.2): the DAG's costs, else the log's, else mean latency x fan-out (§5.4.1)."""
    given = np.array([s.cost if s.cost is not None else np.nan for s in dag.stages])
    fallback = trace.cost if trace.cost is not None else trace.latency.mean(axis=0) * [s.fanout for s in dag.stages]
    cost = np.where(np.isnan(given), fallback, given)
    if not np.all(cost > 0):
        zero = [n for n, c in zip(dag.names, cost) if not c > 0]
        raise InputError(f"stages {zero} have no cost: their latencies are all 0; give 'cost' in the DAG file")
    return cost / cost.sum()


def _number(text: str, where: str, positive: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value if positive else 0 <= value) or not value <= MAX_LATENCY:
        raise InputError(f"expected a finite number {'>' if positive else '>='} 0 (at most {MAX_LATENCY:.0e}), got {text!r}", field=where)
    return value


def parse_latency_csv(text: str, dag: KwikenDag, source: str = "latency.csv") -> Trace:
    """The trace of ``dag`` in a CSV log; the first problem becomes one InputError naming line and column."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    if missing := [c for c in REQUIRED if c not in header]:
        raise InputError(f"the header lacks columns {missing} (need request_id,stage,latency[,cost])", field=f"{source}: line 1")
    column = {name: k for k, name in enumerate(dag.names)}
    has_cost = "cost" in header
    rows: dict[str, NDArray[np.float64]] = {}
    costs = np.zeros((2, len(column)))  # sum of cost and rows per stage
    for line, row in enumerate(reader, start=2):
        where = f"{source}: line {line}"
        stage = row.get("stage")
        if stage not in column:
            raise InputError(f"unknown stage {stage!r}; the DAG {dag.name!r} has {dag.names}", field=f"{where}: stage")
        values = rows.setdefault(row["request_id"] or "", np.full(len(column), np.nan))
        if not np.isnan(values[column[stage]]):
            raise InputError(f"request {row['request_id']!r} has a second row for stage {stage!r}", field=where)
        values[column[stage]] = _number(row.get("latency") or "", f"{where}: latency", positive=False)
        if has_cost:
            costs[:, column[stage]] += (_number(row.get("cost") or "", f"{where}: cost", positive=True), 1)
    for request, values in rows.items():
        if np.isnan(values).any():
            lacking = [n for n, v in zip(dag.names, values) if np.isnan(v)]
            raise InputError(f"request {request!r} has no latency for stages {lacking}", field=source)
    if len(rows) < MIN_REQUESTS:
        raise InputError(f"{len(rows)} requests; Kwiken needs at least {MIN_REQUESTS} to see a latency tail", field=source)
    return Trace(tuple(dag.names), np.stack(list(rows.values())), costs[0] / costs[1] if has_cost else None)


def latency_csv(trace: Trace, first_request: int = 0) -> str:
    """The CSV form of a trace (request ids ``first_request``, ``first_request + 1``, ...)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REQUIRED if trace.cost is None else (*REQUIRED, "cost"))
    for i, row in enumerate(trace.latency, start=first_request):
        for stage, value, cost in zip(trace.stages, row, trace.cost if trace.cost is not None else [None] * len(row)):
            writer.writerow((i, stage, f"{value:.6g}") if cost is None else (i, stage, f"{value:.6g}", f"{cost:.6g}"))
    return out.getvalue()
