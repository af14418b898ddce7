"""The planning pipeline on heterogeneous racks (docs/paragon.md, docs/pipeline.md "Params"): the node classes of a
cluster spec file overlaid on the discovered racks, per-class speedups and interference learnt in the estimate step,
a plan whose jobs carry their node class, and bad input refused naming the Param before any period file is written."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from corral_yarn import io
from corral_yarn.cluster.rm import NodeReport
from corral_yarn.cluster.topology import DataNodeInfo, Topology
from corral_yarn.contracts import ClusterSpec
from corral_yarn.errors import InputError
from corral_yarn.pipeline import planning, tasks
from corral_yarn.pipeline.settings import Period, PipelineSettings
from corral_yarn.planner.build import build_plan
from estimator.interference import THRESHOLD
from estimator.records import JobRun, TaskSample
from estimator.store import HistoryStore

MONDAY = datetime(2026, 1, 5, tzinfo=UTC)
RACKS = {"/rack-a": ("a1", "a2"), "/rack-b": ("b1", "b2"), "/rack-c": ("c1", "c2")}  # as the live cluster reports them
CLASSES = {"/rack-a": "new", "/rack-b": "old", "/rack-c": "old"}
TWO_CLASSES = {"new": {"speedup": 2.0}, "old": {"speedup": 0.5}}


def live_cluster() -> SimpleNamespace:
    """A cluster adapter whose topology is RACKS, every DataNode in service and every NodeManager running."""
    dns = tuple(DataNodeInfo(f"{h}:9866", h, rack, f"{h}:9864", 10**12, 10**12, "In Service") for rack, hosts in RACKS.items() for h in hosts)
    nms = tuple(NodeReport(f"{h}:8041", h, rack, "RUNNING", f"{h}:8042", 8192, 8, 8192) for rack, hosts in RACKS.items() for h in hosts)
    return SimpleNamespace(topology=lambda: Topology(dns, nms, ()), hdfs=SimpleNamespace(block_size=lambda: 128 << 20))


def spec_file(path: Path, racks: dict[str, str | None] = CLASSES, node_classes: dict | None = TWO_CLASSES) -> Path:
    """A cluster spec in 'corral plan --cluster''s format: its racks (other machines than the live ones) and node classes."""
    doc = {"racks": [{"name": name, "machines": [f"{name[-1]}-old-host"], "node_class": c} for name, c in racks.items()],
           "map_slots_per_machine": 2, "reduce_slots_per_machine": 2, "nic_bandwidth_bytes_per_s": 1.25e9,
           "disk_bandwidth_bytes_per_s": 1e8, "oversubscription": 5, "node_classes": node_classes}
    path.write_text(json.dumps(doc))
    return path


def settings(home: Path, **params: object) -> PipelineSettings:
    return PipelineSettings.from_params({"home": str(home), **params})


def test_the_live_racks_take_the_node_classes_of_the_racks_of_the_same_name(tmp_path: Path) -> None:
    spec_file(tmp_path / "classes.json")
    spec = planning.planning_cluster(live_cluster(), settings(tmp_path, node_classes_file="classes.json"))  # relative: under home
    assert {r.name: r.node_class for r in spec.racks} == CLASSES
    assert {r.name: tuple(r.machines) for r in spec.racks} == RACKS  # the machines stay the discovered ones
    assert set(spec.node_classes) == {"new", "old"} and spec.node_classes["new"].speedup == 2.0
    assert planning.planning_cluster(live_cluster(), settings(tmp_path)).node_classes is None  # no file: identical machines


@pytest.mark.parametrize(("racks", "node_classes", "message"), [
    ({"/rack-a": "new", "/rack-b": "old"}, TWO_CLASSES, "no node_class for the live cluster's racks ['/rack-c']"),
    ({**CLASSES, "/rack-a": "fast"}, TWO_CLASSES, "racks[0].node_class must name one of node_classes (new, old), got 'fast'"),
    ({name: None for name in CLASSES}, None, "no node_classes: give the classes and each rack's node_class"),
])
def test_a_bad_node_classes_file_is_refused_naming_the_param_and_the_rack(tmp_path: Path, racks: dict, node_classes: dict | None,
                                                                         message: str) -> None:
    path = spec_file(tmp_path / "classes.json", racks, node_classes)
    with pytest.raises(InputError) as raised:
        planning.planning_cluster(live_cluster(), settings(tmp_path, node_classes_file=str(path)))
    assert raised.value.field == "node_classes_file" and str(path) in str(raised.value) and message in str(raised.value)


def test_a_rack_of_the_file_that_is_not_live_is_warned_of_and_the_live_racks_are_planned(tmp_path: Path,
                                                                                           caplog: pytest.LogCaptureFixture) -> None:
    # a rack down for maintenance must not stop the daily plan; the plan is made on the live racks, as without classes
    path = spec_file(tmp_path / "classes.json", {**CLASSES, "/rack-z": "old"})
    with caplog.at_level(logging.WARNING):
        spec = planning.planning_cluster(live_cluster(), settings(tmp_path, node_classes_file=str(path)))
    assert {r.name: r.node_class for r in spec.racks} == CLASSES
    assert "racks ['/rack-z'] are not live" in caplog.text and str(path) in caplog.text


def test_a_missing_or_broken_node_classes_file_is_refused_naming_the_param(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{racks")
    for name, message in (("absent.json", "no such file"), ("broken.json", "is not JSON")):
        with pytest.raises(InputError, match=f"^node_classes_file: .*{message}"):
            planning.planning_cluster(live_cluster(), settings(tmp_path, node_classes_file=name))


@pytest.mark.parametrize(("given", "threshold"), [(False, None), (True, THRESHOLD), (0.35, 0.35), ("0.35", 0.35)])
def test_the_interference_param_is_a_switch_or_the_threshold(tmp_path: Path, given: object, threshold: float | None) -> None:
    assert settings(tmp_path, interference=given).interference == threshold
    assert settings(tmp_path).interference is None  # off by default


@pytest.mark.parametrize("given", [0, -0.2, "often"])
def test_a_bad_interference_threshold_is_refused_naming_the_param(tmp_path: Path, given: object) -> None:
    with pytest.raises(InputError, match="params: interference"):
        settings(tmp_path, interference=given)


def run(key: str, day: int, minute: int, minutes: float, rates: dict[str, float]) -> JobRun:
    """A run on racks a and b: one 128 MB map task per node of ``rates`` at its rate (bytes/s)."""
    start = MONDAY + timedelta(days=day, hours=9, minutes=minute)
    samples = tuple(TaskSample(seconds=128e6 / rate, bytes=int(128e6), node=node) for node, rate in rates.items())
    return JobRun(run_id=f"{key}:{day}", recurring_key=key, name=key, source="test", submit_time=start, start_time=start,
                  finish_time=start + timedelta(minutes=minutes), input_bytes=int(128e6) * len(rates), shuffle_bytes=0, output_bytes=0,
                  map_tasks=len(rates), reduce_tasks=0, map_task_samples=samples, racks=("/rack-a", "/rack-b"))


def history() -> list[JobRun]:
    """Four weekdays of 'etl' (2x faster on the new rack) and 'scan' (the same everywhere): alone on days 0 and 2
    (etl 5 min), side by side on days 1 and 3 (etl 7 min: slowed by 40 %)."""
    runs = []
    for day in range(4):
        together = day % 2 == 1
        runs.append(run("etl", day, 0, 7 if together else 5, {"a1": 40e6, "a2": 40e6, "b1": 20e6, "b2": 20e6}))
        runs.append(run("scan", day, 0 if together else 20, 5, {"a1": 30e6, "b1": 30e6, "c1": 30e6}))
    return runs


def test_estimate_learns_speedups_and_interference_and_the_plan_puts_each_job_on_a_class(tmp_path: Path) -> None:
    """estimate -> plan as the planning DAG runs them: details.json lists what was learnt, jobs.json carries it, the plan's
    jobs carry their node class, cluster.json the classes; the same plan as 'corral plan' on that cluster and those jobs."""
    HistoryStore(tmp_path / "history").append(history())
    spec_file(tmp_path / "classes.json")
    chosen = settings(tmp_path, node_classes_file="classes.json", interference=True)
    cluster = live_cluster()
    directory = planning.estimate_period(chosen, Period(start=MONDAY + timedelta(days=4), horizon_s=86_400, scenario="batch"),
                                         128 << 20, planning.planning_cluster(cluster, chosen))
    details = json.loads((directory / planning.DETAILS).read_text())
    speedups = details["class_speedups"]["speedups"]
    assert speedups["etl"]["new"] == pytest.approx(2 * speedups["etl"]["old"]) and speedups["scan"] == pytest.approx({"new": 1.0, "old": 1.0})
    assert details["interference"] == {"threshold": THRESHOLD, "interferes_with": {"etl": ["scan"], "scan": ["etl"]}}
    jobs = {j.recurring_key: j for j in io.load_workload(directory / planning.JOBS).jobs}
    assert jobs["etl"].class_speedups == pytest.approx(speedups["etl"]) and jobs["etl"].interferes_with == ["scan"]
    plan = planning.plan_period(cluster, chosen, directory)
    written = io.load_cluster(directory / planning.CLUSTER)
    assert {r.name: r.node_class for r in written.racks} == CLASSES
    assert all(j.node_class in ("new", "old") for j in plan.jobs) and plan.job(jobs["etl"].name).node_class == "new"
    assert plan.plan_id == build_plan(io.load_workload(directory / planning.JOBS), written, "batch").plan_id


def test_without_the_params_the_estimate_learns_nothing_of_classes(tmp_path: Path) -> None:
    HistoryStore(tmp_path / "history").append(history())
    directory = planning.estimate_period(settings(tmp_path), Period(start=MONDAY + timedelta(days=4), horizon_s=86_400, scenario="batch"),
                                         128 << 20)
    assert set(json.loads((directory / planning.DETAILS).read_text())) == {"jobs", "unsized_jobs"}
    assert all(j.class_speedups is None and j.interferes_with is None for j in io.load_workload(directory / planning.JOBS).jobs)


def test_a_bad_node_classes_file_fails_the_estimate_task_before_any_period_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    HistoryStore(tmp_path / "history").append(history())
    spec_file(tmp_path / "classes.json", {"/rack-a": "new"})
    monkeypatch.setattr(tasks, "cluster_from_airflow", live_cluster)
    params = {"home": str(tmp_path), "horizon": "1d", "scenario": "batch", "slack": 0.1, "node_classes_file": "classes.json"}
    with pytest.raises(InputError, match=r"^node_classes_file: .*\['/rack-b', '/rack-c'\]"):
        tasks.estimate(params, MONDAY + timedelta(days=4))
    assert not (tmp_path / "periods").exists()
    assert Path(tasks.estimate({**params, "node_classes_file": ""}, MONDAY + timedelta(days=4)), planning.JOBS).is_file()


def test_the_pipeline_learns_what_corral_estimate_learns_with_the_same_cluster_and_threshold(tmp_path: Path) -> None:
    from corral_yarn.cli import main

    HistoryStore(tmp_path / "history").append(history())
    spec_file(tmp_path / "classes.json")
    chosen = settings(tmp_path, node_classes_file="classes.json", interference=0.3)
    spec = planning.planning_cluster(live_cluster(), chosen)
    io.save(spec, tmp_path / "live.json")
    start = MONDAY + timedelta(days=4)
    directory = planning.estimate_period(chosen, Period(start=start, horizon_s=86_400, scenario="batch"), 128 << 20, spec)
    assert main(["estimate", "--store", str(tmp_path / "history"), "--at", start.isoformat(), "--horizon", "1d", "--no-adhoc",
                 "--block-size", str(128 << 20), "--cluster", str(tmp_path / "live.json"), "--interference", "0.3",
                 "--out", str(tmp_path / "jobs.json"), "--details", str(tmp_path / "details.json")]) == 0
    assert io.load_workload(tmp_path / "jobs.json") == io.load_workload(directory / planning.JOBS)
    cli, pipeline = (json.loads(p.read_text()) for p in (tmp_path / "details.json", directory / planning.DETAILS))
    assert (cli["class_speedups"], cli["interference"]) == (pipeline["class_speedups"], pipeline["interference"])
