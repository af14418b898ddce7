"""Contracts between the layers: the cluster, the predicted jobs and the plan (versioned JSON).

Units everywhere: bytes, seconds, bytes per second. Every model validates on construction and a
violation becomes one :class:`~corral_yarn.errors.InputError` naming the field (see ``corral_yarn.io``).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PositiveFloat, Tag, model_validator

CLUSTER_SCHEMA = "corral-yarn/cluster/v1"
JOBS_SCHEMA = "corral-yarn/jobs/v1"
PLAN_SCHEMA = "corral-yarn/plan/v1"

# Physically meaningful ranges: a value outside is a typo or a unit slip, and would make the
# latency model's floats overflow or the LP ill-conditioned, so it is refused naming the field.
MAX_BYTES = 1e18  # one exabyte per stage
MIN_RATE, MAX_RATE = 1e-3, 1e13  # bytes per second: a milli-byte (tiny reduce outputs) to 10 TB/s (beyond any link)
MAX_SECONDS = 1e9  # about 32 years: arrivals, deadlines and predicted durations
MAX_TASKS = 10_000_000  # tasks per stage; the largest Hadoop jobs have about 10^5-10^6
MAX_SLOTS = 10_000  # slots per machine
MAX_OVERSUBSCRIPTION = 1e4
BLOCK_BYTES = 128 * 2**20  # HDFS's default dfs.blocksize: one map task per block where the cluster's is not known
Scenario = Literal["batch", "online"]
Order = Literal["thesis", "shortest-work"]  # the planner's prioritization order (docs/planner.md)
Sharing = Literal["whole-rack", "slots"]  # whole racks per job (thesis §4.3) or slot-aware rack sharing (docs/planner.md)
# NoMora's published performance-latency functions (corral_yarn.nomora.perf.PUBLISHED; docs/nomora.md)
PublishedProfile = Literal["memcached", "strads", "tensorflow", "spark"]
CUSTOM_PROFILE = "custom"  # the corral-latency: tag's name for a job's own (latency, perf) points
Bytes = Annotated[float, Field(ge=0, le=MAX_BYTES)]
Rate = Annotated[float, Field(ge=MIN_RATE, le=MAX_RATE)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
Slots = Annotated[int, Field(ge=1, le=MAX_SLOTS)]
Name = Field(min_length=1, max_length=200, pattern=r"^[^\s,;]+$")
ClassName = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s,;]+$")]
MAX_SPEEDUP = 100.0  # a node class or a job at most 100x the reference rates (or 1/100 of them)
Speedup = Annotated[float, Field(ge=1.0 / MAX_SPEEDUP, le=MAX_SPEEDUP)]


def _absent(value: object) -> bool:
    """Optional fields added after v1 are left out of the JSON (and the plan digest) when not given."""
    return value is None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # Infinity and NaN are JSON-parsable


def _duplicates(names: list[str]) -> list[str]:
    seen: set[str] = set()
    return sorted({n for n in names if n in seen or seen.add(n)})


class Rack(_Strict):
    """One rack: a name (a topology path such as ``/rack-a``) and the hosts in it."""

    name: str = Name
    machines: list[str] = Field(min_length=1)
    node_class: ClassName | None = Field(default=None, exclude_if=_absent, description="the rack's node class (docs/paragon.md)")

    @model_validator(mode="after")
    def _unique_machines(self) -> Rack:
        if dup := _duplicates(self.machines):
            raise ValueError(f"duplicate machine names {dup}")
        return self


class MRCutePlus(_Strict):
    """MRCute+ (docs/model.md): the thesis model plus an output-write term, a per-job constant and a
    per-task start-up cost, with parameters fitted by least squares (``corral model fit``)."""

    name: Literal["mrcute+"] = "mrcute+"
    replication: int = Field(default=3, ge=1, le=16, description="HDFS replicas of each output block (dfs.replication)")
    output_replicas_leave_racks: bool = Field(default=True, description="replicas 2.. leave R_j (HDFS's and Corral's placement)")
    scale: float = Field(default=1.0, gt=0.0, le=1e3, description="multiplies the MRCute terms (map, shuffle, reduce, write)")
    job_startup_s: float = Field(default=0.0, ge=0.0, le=86400.0, description="per-job constant (AM start, job setup and commit)")
    task_startup_s: float = Field(default=0.0, ge=0.0, le=3600.0, description="per-task start-up cost, paid once per wave")
    fitted_runs: int = Field(default=0, ge=0, description="how many runs the parameters were fitted on (0: not fitted)")


# the thesis's model by name, or MRCute+'s parameters; one branch validates, so an error names its real field
# (model.task_startup_s, not "should be 'paper'"; "union-" tags are left out of error paths, corral_yarn.io)
LatencyModel = Annotated[
    Annotated[Literal["paper"], Tag("union-paper")] | Annotated[MRCutePlus, Tag("union-mrcute+")],
    Discriminator(lambda value: "union-paper" if isinstance(value, str) else "union-mrcute+"),
]


class NodeClass(_Strict):
    """A hardware class of machines (Paragon's server configuration, paper 003 §2.1): how fast a job's
    tasks run there relative to the job's reference rates, unless the job has its own figure for the class."""

    speedup: Speedup = Field(default=1.0, description="default multiplier of B_map^P and B_reduce^P on this class")
    map_speedup: Speedup | None = Field(default=None, description="default multiplier of B_map^P (else speedup)")
    reduce_speedup: Speedup | None = Field(default=None, description="default multiplier of B_reduce^P (else speedup)")
    disk_bandwidth_bytes_per_s: Rate | None = Field(default=None, description="B_D of this class (else the cluster's)")
    job_startup_s: float | None = Field(default=None, ge=0.0, le=86400.0, exclude_if=_absent,
                                        description="MRCute+'s per-job constant on this class (AM start, setup, commit; else the model's)")
    task_startup_s: float | None = Field(default=None, ge=0.0, le=3600.0, exclude_if=_absent,
                                         description="MRCute+'s per-task start-up on this class (a container's launch; else the model's)")


class ClusterSpec(_Strict):
    """Racks of machines under a folded-Clos core (thesis §3.1.2, §4.5.2).

    Give either ``oversubscription`` (O > 1) or ``rack_core_bandwidth_bytes_per_s``; the other is
    derived from rack uplink = machines per rack x NIC / O. ``model`` selects the latency model:
    ``"paper"`` (the thesis's MRCute, the default) or MRCute+ with its fitted parameters.
    """

    schema_version: Literal["corral-yarn/cluster/v1"] = CLUSTER_SCHEMA
    name: str = "cluster"
    racks: list[Rack] = Field(min_length=1)
    map_slots_per_machine: Slots
    reduce_slots_per_machine: Slots
    nic_bandwidth_bytes_per_s: Rate
    disk_bandwidth_bytes_per_s: Rate
    oversubscription: float | None = Field(default=None, gt=1.0, le=MAX_OVERSUBSCRIPTION)
    rack_core_bandwidth_bytes_per_s: Rate | None = None
    model: LatencyModel = "paper"
    node_classes: dict[ClassName, NodeClass] | None = Field(default=None, exclude_if=_absent, min_length=1,
                                                          description="heterogeneous racks: the classes each rack's node_class names")

    @model_validator(mode="after")
    def _topology(self) -> ClusterSpec:
        self._check_classes()
        if dup := _duplicates([r.name for r in self.racks]):
            raise ValueError(f"duplicate rack names {dup}")
        if dup := _duplicates([m for r in self.racks for m in r.machines]):
            raise ValueError(f"machines in more than one rack {dup}")
        given = (self.oversubscription, self.rack_core_bandwidth_bytes_per_s)
        if given == (None, None):
            raise ValueError("give oversubscription or rack_core_bandwidth_bytes_per_s")
        uplink_full = self.machines_per_rack * self.nic_bandwidth_bytes_per_s
        if self.oversubscription is None:
            oversub = uplink_full / self.rack_core_bandwidth_bytes_per_s
            if not 1.0 < oversub <= MAX_OVERSUBSCRIPTION:
                raise ValueError(f"rack_core_bandwidth_bytes_per_s must be below machines x NIC (O > 1) and at least "
                                 f"machines x NIC / {MAX_OVERSUBSCRIPTION:.0e} (O <= {MAX_OVERSUBSCRIPTION:.0e}); it gives O = {oversub:.6g}")
            object.__setattr__(self, "oversubscription", oversub)
        elif self.rack_core_bandwidth_bytes_per_s is None:
            object.__setattr__(self, "rack_core_bandwidth_bytes_per_s", uplink_full / self.oversubscription)
        return self

    def _check_classes(self) -> None:
        """With node_classes every rack names one of them; without, none names any."""
        for i, rack in enumerate(self.racks):
            if self.node_classes is None and rack.node_class is not None:
                raise ValueError(f"racks[{i}].node_class {rack.node_class!r} given but the cluster has no node_classes")
            if self.node_classes is not None and rack.node_class not in self.node_classes:
                known = ", ".join(sorted(self.node_classes))
                raise ValueError(f"racks[{i}].node_class must name one of node_classes ({known}), got {rack.node_class!r}")

    @property
    def class_names(self) -> list[str]:
        """The node classes in the order their first rack appears (empty for identical machines)."""
        return list(dict.fromkeys(r.node_class for r in self.racks if r.node_class is not None))

    @property
    def machines_per_rack(self) -> int:
        """m in MRCute; the planner assumes uniform racks and takes the smallest (conservative)."""
        return min(len(r.machines) for r in self.racks)

    @property
    def rack_names(self) -> list[str]:
        return [r.name for r in self.racks]


class StageSpec(_Strict):
    """One MapReduce stage (a whole MR job, or a vertex of a DAG, thesis §3.1.3).

    Sizes may be given as bytes or as selectivities, S_map = input / shuffle and
    S_reduce = shuffle / output (thesis §3.1.2); after validation both forms are filled in (a
    selectivity only where both its sizes are > 0: a map-only stage, shuffle 0, has none).
    ``map_rate_bytes_per_s`` is B_map^P (input bytes a map task processes per second);
    ``reduce_rate_bytes_per_s`` is B_reduce^P, in reduce *output* bytes per second, because the
    MRCute reduce term divides each task's output by B_reduce (see docs/model.md).
    """

    name: str = Name
    input_bytes: Bytes
    shuffle_bytes: Bytes | None = None
    output_bytes: Bytes | None = None
    map_selectivity: PositiveFloat | None = None
    reduce_selectivity: PositiveFloat | None = None
    map_tasks: int = Field(ge=1, le=MAX_TASKS)
    reduce_tasks: int = Field(ge=0, le=MAX_TASKS)
    map_rate_bytes_per_s: Rate
    reduce_rate_bytes_per_s: Rate
    after: list[str] = []

    @model_validator(mode="after")
    def _sizes(self) -> StageSpec:
        shuffle = _one_of(self.shuffle_bytes, self.map_selectivity, self.input_bytes, "shuffle_bytes", "map_selectivity")
        output = _one_of(self.output_bytes, self.reduce_selectivity, shuffle, "output_bytes", "reduce_selectivity")
        if max(shuffle, output) > MAX_BYTES:
            raise ValueError(f"the selectivities make a stage of more than {MAX_BYTES:.0e} bytes")
        if self.reduce_tasks == 0 and shuffle > 0:
            raise ValueError("reduce_tasks is 0 but the stage shuffles data; a map-only stage has shuffle_bytes 0")
        object.__setattr__(self, "shuffle_bytes", shuffle)
        object.__setattr__(self, "output_bytes", output)
        object.__setattr__(self, "map_selectivity", _ratio(self.input_bytes, shuffle))
        object.__setattr__(self, "reduce_selectivity", _ratio(shuffle, output))
        return self


def _ratio(upstream: float, size: float) -> float | None:
    """A derived selectivity, or None where a size is 0 (a map-only or empty stage has none), so it reloads."""
    ratio = upstream / size if size else 0.0
    return ratio if 0.0 < ratio < math.inf else None


def _one_of(size: float | None, selectivity: float | None, upstream: float, size_name: str, sel_name: str) -> float:
    if size is None and selectivity is None:
        raise ValueError(f"give {size_name} or {sel_name}")
    if size is None:
        return upstream / selectivity
    if selectivity is not None and not math.isclose(size * selectivity, upstream, rel_tol=1e-9):
        raise ValueError(f"{size_name} {size} and {sel_name} {selectivity} disagree; give one of them")
    return size


_STAGE_FIELDS = set(StageSpec.model_fields) - {"name", "after"}


class LatencyPoint(_Strict):
    """One measured point of a job's performance-latency function (NoMora §"Functions of application performance")."""

    latency_us: float = Field(ge=0, le=1e7, description="network latency to the root task, in microseconds")
    perf: float = Field(gt=0, le=1.5, description="performance normalised to the job's at low latency")


class LatencyProfile(_Strict):
    """A job's own performance-latency function: 1 up to ``threshold_us``, a fitted polynomial above it."""

    threshold_us: float = Field(ge=0, le=1e7)
    points: list[LatencyPoint] = Field(min_length=2)
    degree: int = Field(default=3, ge=1, le=3)


# a published function by name, or the job's own points; one branch validates, so an error names its real field
# ("union-" tags are left out of error paths, corral_yarn.io)
ProfileChoice = Annotated[
    Annotated[PublishedProfile, Tag("union-name")] | Annotated[LatencyProfile, Tag("union-points")],
    Discriminator(lambda value: "union-name" if isinstance(value, str) else "union-points"),
]


class JobSpec(_Strict):
    """A predicted recurring job: a MapReduce job (one stage) or a DAG of stages.

    The MapReduce shorthand puts the stage fields on the job itself; it becomes one stage "main".
    """

    name: str = Name
    arrival_s: Seconds = 0.0
    deadline_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS)
    stages: list[StageSpec] = Field(min_length=1)
    input_path: str | None = None
    recurring_key: str | None = None
    class_speedups: dict[ClassName, Speedup] | None = Field(
        default=None, exclude_if=_absent, description="this job's task-rate multiplier per node class (history or classification)")
    interferes_with: list[ClassName] | None = Field(
        default=None, exclude_if=_absent, description="recurring keys (or names) of jobs whose co-location slowed this one or it them in history")
    latency_profile: ProfileChoice | None = Field(
        default=None, exclude_if=_absent, description="how the job's performance falls with network latency (NoMora); none: latency-insensitive")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        if isinstance(data, dict) and "stages" not in data and _STAGE_FIELDS & data.keys():
            stage = {k: v for k, v in data.items() if k in _STAGE_FIELDS}
            rest = {k: v for k, v in data.items() if k not in _STAGE_FIELDS}
            return {**rest, "stages": [{"name": "main", **stage}]}
        return data

    @model_validator(mode="after")
    def _dag(self) -> JobSpec:
        names = [s.name for s in self.stages]
        if dup := _duplicates(names):
            raise ValueError(f"duplicate stage names {dup}")
        for s in self.stages:
            if unknown := sorted(set(s.after) - set(names)):
                raise ValueError(f"stage {s.name!r} runs after unknown stages {unknown}")
        if cycle := find_cycle({s.name: s.after for s in self.stages}):
            raise ValueError(f"the stages form a cycle: {' -> '.join(cycle)}")
        return self

    @property
    def input_bytes(self) -> float:
        """D_j^I: bytes read from HDFS by the DAG's source stages (what Corral places in R_j)."""
        return sum(s.input_bytes for s in self.stages if not s.after)

    @property
    def shuffle_bytes(self) -> float:
        return sum(s.shuffle_bytes for s in self.stages)

    @property
    def tasks(self) -> int:
        return sum(s.map_tasks + s.reduce_tasks for s in self.stages)


def find_cycle(after: dict[str, list[str]]) -> list[str] | None:
    """A cycle in the dependency graph (as a closed list of names), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for p in after[n]:
            if state.get(p) == 1:
                return stack[stack.index(p):] + [p]
            if p not in state and (c := visit(p)):
                return c
        state[n] = 2
        stack.pop()
        return None

    for n in after:
        if n not in state and (c := visit(n)):
            return c
    return None


class Workload(_Strict):
    """The jobs file: predicted jobs for one planning period."""

    schema_version: Literal["corral-yarn/jobs/v1"] = JOBS_SCHEMA
    jobs: list[JobSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Workload:
        if dup := _duplicates([j.name for j in self.jobs]):
            raise ValueError(f"duplicate job names {dup}")
        return self


class PlannedJob(_Strict):
    """The plan for one job j: its rack set R_j, priority p_j and planned start T_j (thesis §4.1)."""

    name: str
    racks: list[str]
    priority: int = Field(description="YARN application priority: larger runs first")
    order: int = Field(description="position in the prioritization order, 0 first")
    arrival_s: float
    planned_start_s: float
    predicted_duration_s: float = Field(description="L_j(r_j) by MRCute")
    planned_finish_s: float = Field(description="start + L'_j(r_j), with the data-balance penalty")
    input_bytes: float
    cross_rack_shuffle_bytes: float
    node_class: str | None = Field(default=None, exclude_if=_absent, description="the node class of R_j (heterogeneous racks)")
    rack_set_latency_us: float | None = Field(default=None, exclude_if=_absent, description="max network latency between racks of R_j (with a latency matrix)")
    expected_performance: float | None = Field(default=None, exclude_if=_absent, description="perf_j(rack_set_latency_us) of a latency-sensitive job (NoMora)")
    latency_function: str | None = Field(
        default=None, exclude_if=_absent, pattern=r"^[a-z0-9._-]{1,64}$",
        description="a latency-sensitive job's performance-latency function (a published name, or 'custom'): its submission is tagged corral-latency:<it>")


class PlanOptions(_Strict):
    """The planner's knobs a plan was made with (docs/planner.md); a plan without them used the thesis's."""

    order: Order = Field(default="thesis", description="prioritization order: thesis (§4.3.4) or shortest-work")
    sharing: Sharing = Field(default="whole-rack", description="whole-rack (thesis §4.3) or slots: jobs share a rack's slots")


class Plan(_Strict):
    """An offline plan: per job {R_j, p_j, T_j}, and the figures that say how good it is."""

    schema_version: Literal["corral-yarn/plan/v1"] = PLAN_SCHEMA
    plan_id: str
    planner_version: str
    inputs_sha256: str
    cluster_name: str
    scenario: Scenario
    objective: Literal["makespan", "mean_completion_time"]
    objective_s: float
    lower_bound_s: float | None
    gap: float | None = Field(description="objective / lower bound - 1")
    alpha_s_per_byte: float
    model: LatencyModel = Field(default="paper", description="the latency model and parameters the plan used")
    options: PlanOptions = Field(default_factory=PlanOptions)
    jobs: list[PlannedJob]
    rack_input_bytes: dict[str, float]
    rack_input_cov: float
    cross_rack_shuffle_bytes: float
    all_racks_cross_rack_shuffle_bytes: float

    def job(self, name: str) -> PlannedJob:
        return next(j for j in self.jobs if j.name == name)
