"""Corral against its baselines on the shaped testbed, on real MapReduce jobs (thesis §4.5; docs/testbed.md).

One run = one scheduler x one scenario on the testbed's cluster: the workload's inputs are uploaded
(Corral: one replica of every block in the planned racks R_j; Yarn-CS: HDFS's own placement), the
counters are read, the jobs are submitted when they arrive (batch: all at t=0), and every job's submit, first container and finish, its
MapReduce counters and the cross-rack bytes per rack pair are recorded.

Schedulers, as in §4.5:
- ``yarn-cs``: YARN's CapacityScheduler with delay scheduling (node-locality-delay 40) and HDFS's default
  placement: jobs carry no rack set.
- ``corral``: the plan of ``corral_yarn.planner`` for the recurring jobs: inputs uploaded into R_j, each
  job submitted when it arrives with R_j and p_j, the scheduler giving a rack's free slots to the
  highest-priority job planned there (§4.1); ad hoc jobs run as under Yarn-CS.
- ``localshuffle``: Corral's plan (R_j and priorities) with HDFS's default data placement (§4.5.2).
- ``shufflewatcher``: ShuffleWatcher at rack granularity, as the simulator models it: when a job
  arrives it is confined, on its own, to the fewest racks whose map slots hold its maps in one wave,
  taking the racks with the most free memory at that moment (ties: rack order); HDFS's placement.
"""

from __future__ import annotations

import logging
import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.cluster.rm import NodeReport
from corral_yarn.contracts import ClusterSpec, JobSpec, LatencyModel, NodeClass, Order, Plan, Rack, Sharing, StageSpec, Workload
from corral_yarn.planner.build import build_plan
from corral_yarn.testbed.control import reshape
from corral_yarn.testbed.cpu import rack_classes
from corral_yarn.testbed.monitor import UplinkMonitor
from corral_yarn.testbed.shaping import Network

LOG = logging.getLogger(__name__)

Program = Literal["sort", "wordcount", "grep"]
Scheduler = Literal["yarn-cs", "corral", "localshuffle", "shufflewatcher"]
SCHEDULERS: tuple[Scheduler, ...] = ("yarn-cs", "corral")
BASELINES: tuple[Scheduler, ...] = ("localshuffle", "shufflewatcher")  # §4.5.2, beside Yarn-CS
MB = 2**20
WORDS = [f"w{k:04d}" for k in range(2000)]
# The task rates the planner is told (bytes a task processes per second on this machine's shared cores).
MAP_RATE = 4 * MB
REDUCE_RATE = 4 * MB
# What one task processes per second with a whole core to itself (sort, wordcount and grep on this machine).
CORE_RATE = 3 * MB
MAP_SLOTS_PER_NODE = 4
GREP_CLASSES = {"mapper": "org.apache.hadoop.mapreduce.lib.map.RegexMapper",
                "combiner": "org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer",
                "reducer": "org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer",
                "output_key_class": "org.apache.hadoop.io.Text", "output_value_class": "org.apache.hadoop.io.LongWritable"}


@dataclass(frozen=True)
class TestbedJob:
    """One MapReduce job of the workload: a recurring one (planned) or an ad hoc one (not planned)."""

    __test__ = False

    name: str
    program: Program
    input_bytes: int
    block_bytes: int
    reduces: int
    arrival_s: float
    recurring: bool = True

    @property
    def maps(self) -> int:
        return -(-self.input_bytes // self.block_bytes)

    @property
    def shuffle_bytes(self) -> float:
        """What the planner is told: sort shuffles its input; wordcount and grep combine to little."""
        return float(self.input_bytes) if self.program == "sort" else 0.02 * self.input_bytes


def workload(seed: int, scenario: str, quick: bool = False, arrival_span_s: float = 150.0) -> list[TestbedJob]:
    """W1/W3-shaped (§4.5.2): many small map-heavy jobs, a few large shuffle-heavy sorts, ad hoc greps."""
    rng = random.Random(seed)
    large, small, ad_hoc = (2, 4, 1) if quick else (3, 6, 2)
    jobs: list[TestbedJob] = []

    def arrival() -> float:
        return 0.0 if scenario == "batch" else round(rng.uniform(0, arrival_span_s), 1)

    for i in range(large):
        size = int(rng.uniform(14, 18) * MB)
        jobs.append(TestbedJob(f"sort-{i}", "sort", size, 8 * MB, 2, arrival()))
    for i in range(small):
        program: Program = "wordcount" if i % 2 == 0 else "grep"
        jobs.append(TestbedJob(f"{program}-{i}", program, int(rng.uniform(1.5, 2.5) * MB), 4 * MB, 1, arrival()))
    for i in range(ad_hoc):  # not planned; arrive during the run in both scenarios
        jobs.append(TestbedJob(f"adhoc-grep-{i}", "grep", int(rng.uniform(1.5, 2.5) * MB), 4 * MB, 1,
                               round(rng.uniform(0, arrival_span_s / 2), 1), recurring=False))
    return jobs


def write_input(job: TestbedJob, directory: Path, seed: int) -> Path:
    """The job's input as a local file: ``key<TAB>value`` lines for sort, words for wordcount and grep."""
    rng = random.Random(f"{seed}-{job.name}")
    lines = job.input_bytes // 100 + 1  # about 100 bytes a line
    if job.program == "sort":
        values = rng.randbytes(45 * lines).hex()
        text = "".join(f"{rng.randrange(10**9):09d}\t{values[90 * i:90 * i + 90]}\n" for i in range(lines))
    else:
        words = rng.choices(WORDS, k=16 * lines)
        text = "".join(" ".join(words[16 * i:16 * i + 16]) + "\n" for i in range(lines))
    path = directory / f"{job.name}.txt"
    path.write_text(text)
    return path


def cluster_spec(description: dict[str, Any], net: Network, rack_cpus: dict[str, float] | None = None) -> ClusterSpec:
    """The planner's view of the testbed: its racks and hosts, node rate and oversubscription (> 1); with
    ``rack_cpus`` (cores per node of each rack) its node classes, each at its cores over the racks' mean
    (``reference_cpus``) as its default speedup."""
    classes = rack_classes(rack_cpus) if rack_cpus is not None else {}
    racks = [Rack(name=r["name"], machines=[n["host"] for n in r["nodes"]], node_class=classes.get(r["name"].removeprefix("/rack-")))
             for r in description["racks"]]
    node_classes = {classes[rack]: NodeClass(speedup=cores / reference_cpus(rack_cpus)) for rack, cores in rack_cpus.items()} if rack_cpus else None
    return ClusterSpec(name="testbed", racks=racks, map_slots_per_machine=MAP_SLOTS_PER_NODE, reduce_slots_per_machine=2,
                       nic_bandwidth_bytes_per_s=net.node_mbit_s * 1e6 / 8, disk_bandwidth_bytes_per_s=100e6,
                       oversubscription=net.oversubscription, node_classes=node_classes)


def reference_cpus(rack_cpus: dict[str, float]) -> float:
    """The cores per node a job's reference rates are for on racks of node classes: the racks' mean."""
    return sum(rack_cpus.values()) / len(rack_cpus)


def task_rate(node_cpus: float | None) -> float:
    """A task's rate when its node's slots are all busy: the node's quota split over them (shared cores: MAP_RATE)."""
    return MAP_RATE if node_cpus is None else CORE_RATE * node_cpus / MAP_SLOTS_PER_NODE


@dataclass(frozen=True)
class Profile:
    """A recurring job's profile from its earlier runs (thesis §3.1.2): selectivities and measured task rates."""

    map_selectivity: float  # S_map = input / shuffle
    reduce_selectivity: float  # S_reduce = shuffle / output
    map_rate_bytes_per_s: float
    reduce_rate_bytes_per_s: float


def job_spec(job: TestbedJob, node_cpus: float | None = None, profile: Profile | None = None) -> JobSpec:
    """What the planner is told about ``job``: with its ``profile``, this run's input at the profile's
    selectivities and rates (thesis §3.1.2); without, the workload's sizes and every slot of a node busy."""
    if profile is None:
        shuffle, output = job.shuffle_bytes, float(job.input_bytes) if job.program == "sort" else 0.01 * job.input_bytes
        map_rate = reduce_rate = task_rate(node_cpus)
    else:
        shuffle = job.input_bytes / profile.map_selectivity
        output, map_rate, reduce_rate = shuffle / profile.reduce_selectivity, profile.map_rate_bytes_per_s, profile.reduce_rate_bytes_per_s
    stage = StageSpec(name="main", input_bytes=float(job.input_bytes), shuffle_bytes=shuffle, output_bytes=output,
                      map_tasks=job.maps, reduce_tasks=job.reduces, map_rate_bytes_per_s=map_rate, reduce_rate_bytes_per_s=reduce_rate)
    return JobSpec(name=job.name, arrival_s=job.arrival_s, stages=[stage], recurring_key=job.name)


def unshaped(net: Network) -> Network:
    """The same racks with a core and NICs far faster than anything on this machine."""
    return Network(net.racks, net.nodes_per_rack, node_mbit_s=10_000.0, oversubscription=1.0)


@dataclass(frozen=True)
class PlanChoice:
    """How Corral plans (docs/planner.md "Ablation on the testbed"): the latency model (``paper``: the thesis's
    MRCute, §3.1.2; or a fitted MRCute+), whole racks or slot-aware sharing, the prioritization order (None:
    the scenario's default), and the recurring jobs' profiles (None: ``job_spec``'s sizes and rates)."""

    model: LatencyModel = "paper"
    sharing: Sharing = "whole-rack"
    order: Order | None = None
    profiles: Mapping[str, Profile] | None = field(default=None, hash=False)


@dataclass
class Placement:
    """Where and when one job goes: its racks (empty: anywhere), priority and submit time."""

    racks: tuple[str, ...] = ()
    priority: int = 0
    submit_s: float = 0.0
    place_input: bool = False
    planned_finish_s: float | None = None


def placements(jobs: list[TestbedJob], scheduler: Scheduler, scenario: str, spec: ClusterSpec,
               node_cpus: float | None = None, choice: PlanChoice = PlanChoice(), plan: Plan | None = None) -> tuple[dict[str, Placement], dict[str, Any]]:
    """Each job's placement under ``scheduler``, and the plan's figures (Corral, planned as ``choice`` says);
    ``plan``: the recurring jobs' plan made elsewhere (e.g. from history), else one is made here from ``job_spec``."""
    result = {j.name: Placement(submit_s=j.arrival_s) for j in jobs}
    recurring = [j for j in jobs if j.recurring]
    if scheduler in ("yarn-cs", "shufflewatcher") or not recurring:
        return result, {}
    if plan is None:
        profiles = choice.profiles or {}
        missing = [j.name for j in recurring if choice.profiles is not None and j.name not in profiles]
        if missing:
            raise ValueError(f"no profile for the recurring jobs {', '.join(missing)}")
        plan = build_plan(Workload(jobs=[job_spec(j, node_cpus, profiles.get(j.name)) for j in recurring]), spec.model_copy(update={"model": choice.model}),
                          scenario, order=choice.order, sharing=choice.sharing)  # type: ignore[arg-type]
    for planned in plan.jobs:
        result[planned.name] = Placement(
            racks=tuple(planned.racks), priority=planned.priority, place_input=scheduler == "corral",
            submit_s=result[planned.name].submit_s, planned_finish_s=planned.planned_finish_s)
    return result, {"objective_s": plan.objective_s, "lower_bound_s": plan.lower_bound_s, "order": plan.options.order,
                    "sharing": plan.options.sharing, "model": "paper" if plan.model == "paper" else plan.model.name,
                    "job_specs": "workload" if choice.profiles is None else "profiled"}


def shufflewatcher_racks(job: TestbedJob, nodes: list[NodeReport], map_slots: int) -> tuple[str, ...]:
    """The fewest racks whose map slots hold the job's maps in one wave, most free memory first."""
    free: dict[str, int] = {}
    machines: dict[str, int] = {}
    for node in nodes:
        if node.state == "RUNNING":
            free[node.rack] = free.get(node.rack, 0) + node.available_memory_mb
            machines[node.rack] = machines.get(node.rack, 0) + 1
    ranked = sorted(free, key=lambda rack: (-free[rack], rack))
    chosen, slots = [], 0
    for rack in ranked:
        if chosen and slots >= job.maps:
            break
        chosen.append(rack)
        slots += machines[rack] * map_slots
    return tuple(chosen)


def mapreduce_job(job: TestbedJob, description: dict[str, Any], root: str, output_replication: int) -> MapReduceJob:
    common = {"name": job.name, "jar": description["examples_jar"], "inputs": [f"{root}/{job.name}/in"],
              "output": f"{root}/{job.name}/out", "reduces": job.reduces}
    properties = {"dfs.replication": str(output_replication)}  # of the job's output files
    if job.program == "grep":
        return MapReduceJob(**common, **GREP_CLASSES, properties={**properties, "mapreduce.mapper.regex": "w00[0-4][0-9]"})
    return MapReduceJob(**common, program=job.program, properties=properties)


@dataclass
class JobResult:
    name: str
    recurring: bool
    racks: list[str]
    arrival_s: float
    submit_s: float
    first_container_s: float
    finish_s: float
    jct_s: float
    planned_finish_s: float | None
    containers_per_rack: dict[str, int]
    counters: dict[str, int] = field(default_factory=dict)
    am_running_s: float | None = None  # when the MRAppMaster began running the job (JobHistory startTime)
    containers: list[tuple[str, str, float | None, float | None]] = field(default_factory=list)  # (AM/MAP/REDUCE, node, start, finish)


def run(cluster: Cluster, description: dict[str, Any], net: Network, namespace: str, jobs: list[TestbedJob],
        scheduler: Scheduler, scenario: str, inputs: dict[str, Path], tag: str, output_replication: int = 1,
        plan_net: Network | None = None, node_cpus: float | None = None, choice: PlanChoice = PlanChoice(),
        plan: Plan | None = None) -> dict[str, Any]:
    """One scheduler x scenario on the testbed (call inside its namespace); returns its figures.

    Corral plans for ``plan_net`` (default: the network the run is on) and nodes of ``node_cpus`` cores, as ``choice`` says,
    or runs ``plan`` if given."""
    spec = cluster_spec(description, plan_net or net)
    chosen, plan_figures = placements(jobs, scheduler, scenario, spec, node_cpus, choice, plan)
    root = f"/testbed/{tag}"
    cluster.hdfs.delete(root, recursive=True)
    # Inputs are uploaded long before their jobs run (§4.1): the upload is not part of the measured run.
    reshape(unshaped(net), namespace)
    uploader = cluster.uploader()
    for job in jobs:
        racks = list(chosen[job.name].racks) if chosen[job.name].place_input else []
        uploader.upload(inputs[job.name], f"{root}/{job.name}/in", racks, block_bytes=job.block_bytes)
    reshape(net, namespace)
    monitor = UplinkMonitor(net, namespace, interval_s=1.0)
    monitor.start()
    start = time.time()
    submitter = cluster.mapreduce()

    def submit(job: TestbedJob) -> tuple[str, float]:
        place = chosen[job.name]
        time.sleep(max(0.0, start + place.submit_s - time.time()))
        submitted = time.time() - start
        if scheduler == "shufflewatcher":
            place.racks = shufflewatcher_racks(job, cluster.rm.nodes(), spec.map_slots_per_machine)
        tags = CorralTags(tag, job.name, place.racks)
        return submitter.submit(mapreduce_job(job, description, root, output_replication), tags, priority=place.priority).app_id, submitted

    order = sorted(jobs, key=lambda j: (chosen[j.name].submit_s, -chosen[j.name].priority))
    with ThreadPoolExecutor(max_workers=4) as pool:
        apps = dict(zip([j.name for j in order], pool.map(submit, order)))
    reports = {name: cluster.rm.wait(app_id, timeout_s=3600) for name, (app_id, _) in apps.items()}
    monitor.stop()
    results = [_job_result(cluster, job, chosen[job.name], apps[job.name], reports[job.name], start) for job in jobs]
    cluster.hdfs.delete(root, recursive=True)
    return _figures(results, monitor, scheduler, scenario, plan_figures)


def _job_result(cluster: Cluster, job: TestbedJob, place: Placement, app: tuple[str, float], report: Any, start: float) -> JobResult:
    app_id, submitted = app
    job_id = job_id_of(app_id)
    history = cluster.history.wait_for_job(job_id)
    attempts = cluster.history.attempts(job_id)
    tasks = [a for a in attempts if a.type != "AM"]
    per_rack: dict[str, int] = {}
    for a in tasks:
        per_rack[a.rack] = per_rack.get(a.rack, 0) + 1
    first = min((a.started_ms for a in attempts if a.started_ms), default=report.started_ms) / 1000 - start
    counters = cluster.history.counters(job_id)
    keep = ("HDFS_BYTES_READ", "HDFS_BYTES_WRITTEN", "REDUCE_SHUFFLE_BYTES", "DATA_LOCAL_MAPS", "RACK_LOCAL_MAPS", "OTHER_LOCAL_MAPS")
    finish = report.finished_ms / 1000 - start

    def since_start(ms: int) -> float | None:
        return round(ms / 1000 - start, 2) if ms else None

    containers = [(a.type, a.node_http_address.rsplit(":", 1)[0], since_start(a.started_ms), since_start(a.finished_ms)) for a in attempts]
    return JobResult(job.name, job.recurring, list(place.racks), job.arrival_s, round(submitted, 2), round(first, 2),
                     round(finish, 2), round(finish - job.arrival_s, 2), place.planned_finish_s, per_rack,
                     {k: int(counters[k]["total"]) for k in keep if k in counters}, since_start(int(history.get("startTime") or 0)),
                     containers)


def _figures(results: list[JobResult], monitor: UplinkMonitor, scheduler: str, scenario: str, plan: dict[str, Any]) -> dict[str, Any]:
    pairs = monitor.pair_bytes()
    jcts = [r.jct_s for r in results]
    return {
        "scheduler": scheduler, "scenario": scenario,
        "makespan_s": round(max(r.finish_s for r in results), 2),
        "median_jct_s": round(statistics.median(jcts), 2), "mean_jct_s": round(statistics.fmean(jcts), 2),
        "cross_rack_bytes": sum(b for (s, d), b in pairs.items() if s != d),
        "in_rack_bytes": sum(b for (s, d), b in pairs.items() if s == d),
        "bytes_by_rack_pair": {f"{s}->{d}": b for (s, d), b in sorted(pairs.items())},
        "peak_link_mbit_s": round(monitor.peak_mbit_s(), 2),
        "uplink_utilisation": monitor.utilisation(),
        "plan": plan,
        "jobs": [asdict(r) for r in results],
    }
