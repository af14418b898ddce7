"""Contracts and their JSON: validation with one-line errors naming the field, round trips, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn import io
from corral_yarn.contracts import ClusterSpec, JobSpec, Plan, Rack, StageSpec, Workload, find_cycle
from corral_yarn.errors import CorralError, InputError
from corral_yarn.planner.build import build_plan
from corral_yarn.workloads import example_cluster, w1_like

STAGE = {"input_bytes": 1000.0, "shuffle_bytes": 500.0, "output_bytes": 250.0, "map_tasks": 4, "reduce_tasks": 2,
         "map_rate_bytes_per_s": 10.0, "reduce_rate_bytes_per_s": 10.0}


def cluster_data(**overrides: object) -> dict:
    data = {"racks": [{"name": "/a", "machines": ["a1", "a2"]}, {"name": "/b", "machines": ["b1", "b2"]}],
            "map_slots_per_machine": 2, "reduce_slots_per_machine": 1, "nic_bandwidth_bytes_per_s": 100.0,
            "disk_bandwidth_bytes_per_s": 50.0, "oversubscription": 4.0}
    return {**data, **overrides}


def error_of(model: type, data: object) -> str:
    with pytest.raises(InputError) as exc:
        io.parse(model, data, source="in.json")
    message = str(exc.value)
    assert "\n" not in message and message.startswith("in.json: ")
    return message


# ClusterSpec


def test_oversubscription_gives_the_rack_uplink() -> None:
    c = io.parse(ClusterSpec, cluster_data())
    assert c.rack_core_bandwidth_bytes_per_s == pytest.approx(2 * 100.0 / 4.0)  # m B_M / O


def test_rack_uplink_gives_the_oversubscription() -> None:
    c = io.parse(ClusterSpec, cluster_data(oversubscription=None, rack_core_bandwidth_bytes_per_s=40.0))
    assert c.oversubscription == pytest.approx(5.0)  # 2 x 100 / 40


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"oversubscription": None}, "give oversubscription or rack_core_bandwidth_bytes_per_s"),
        ({"oversubscription": 1.0}, "oversubscription: Input should be greater than 1"),
        ({"oversubscription": None, "rack_core_bandwidth_bytes_per_s": 200.0}, "O > 1"),
        ({"nic_bandwidth_bytes_per_s": -1.0}, "nic_bandwidth_bytes_per_s: Input should be greater than or equal to 0.001 (got -1.0)"),
        ({"racks": []}, "racks:"),
        ({"map_slots_per_machine": 0}, "map_slots_per_machine"),
        ({"colour": "red"}, "colour: Extra inputs are not permitted"),
    ],
)
def test_bad_clusters_name_the_field(overrides: dict, expected: str) -> None:
    assert expected in error_of(ClusterSpec, cluster_data(**overrides))


def test_duplicate_rack_names() -> None:
    racks = [{"name": "/a", "machines": ["a1"]}, {"name": "/a", "machines": ["b1"]}]
    assert "duplicate rack names ['/a']" in error_of(ClusterSpec, cluster_data(racks=racks))


def test_duplicate_machine_names_in_a_rack_and_across_racks() -> None:
    same_rack = [{"name": "/a", "machines": ["a1", "a1"]}]
    assert "racks[0]: duplicate machine names ['a1']" in error_of(ClusterSpec, cluster_data(racks=same_rack))
    two_racks = [{"name": "/a", "machines": ["x"]}, {"name": "/b", "machines": ["x"]}]
    assert "machines in more than one rack ['x']" in error_of(ClusterSpec, cluster_data(racks=two_racks))


def test_names_may_not_hold_spaces_or_commas() -> None:
    assert "racks[0].name" in error_of(ClusterSpec, cluster_data(racks=[{"name": "a b", "machines": ["x"]}]))
    assert "racks[0].name" in error_of(ClusterSpec, cluster_data(racks=[{"name": "a,b", "machines": ["x"]}]))


# StageSpec and JobSpec


def test_selectivities_fill_in_the_sizes() -> None:
    s = StageSpec(name="s", input_bytes=1000.0, map_selectivity=2.0, reduce_selectivity=4.0, map_tasks=4, reduce_tasks=2,
                  map_rate_bytes_per_s=1.0, reduce_rate_bytes_per_s=1.0)
    assert (s.shuffle_bytes, s.output_bytes) == (500.0, 125.0)  # D/S_map, D/(S_map S_reduce)


def test_sizes_fill_in_the_selectivities() -> None:
    s = StageSpec(name="s", **STAGE)
    assert (s.map_selectivity, s.reduce_selectivity) == (2.0, 2.0)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"shuffle_bytes": None}, "give shuffle_bytes or map_selectivity"),
        ({"map_selectivity": 3.0}, "shuffle_bytes 500.0 and map_selectivity 3.0 disagree"),
        ({"reduce_tasks": 0}, "reduce_tasks is 0 but the stage shuffles data"),
        ({"input_bytes": -1.0}, "input_bytes: Input should be greater than or equal to 0"),
        ({"map_tasks": 0}, "map_tasks: Input should be greater than or equal to 1"),
        ({"map_rate_bytes_per_s": 0.0}, "map_rate_bytes_per_s: Input should be greater than or equal to 0.001"),
    ],
)
def test_bad_stages_name_the_problem(overrides: dict, expected: str) -> None:
    data = {"jobs": [{"name": "j", "stages": [{"name": "s", **STAGE, **overrides}]}]}
    message = error_of(Workload, data)
    assert "jobs[0].stages[0]" in message and expected in message


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("map_rate_bytes_per_s", 1e-300, "greater than or equal to 0.001"),
        ("map_rate_bytes_per_s", 1e-10, "greater than or equal to 0.001"),
        ("reduce_rate_bytes_per_s", 1e14, "less than or equal to 10000000000000"),
        ("map_tasks", 10**30, "less than or equal to 10000000"),
        ("reduce_tasks", 10**8, "less than or equal to 10000000"),
        ("input_bytes", 1e19, "less than or equal to 1000000000000000000"),
        ("map_selectivity", 1e-300, "the selectivities make a stage of more than 1e+18 bytes"),
    ],
)
def test_stage_numbers_outside_their_physical_range_name_the_field(field: str, value: float, expected: str) -> None:
    stage = {"name": "s", **STAGE, field: value}
    if field == "map_selectivity":
        stage.pop("shuffle_bytes")
    message = error_of(Workload, {"jobs": [{"name": "j", "stages": [stage]}]})
    assert message.startswith("in.json: jobs[0].stages[0]") and expected in message
    assert field in message or field.endswith("selectivity")


@pytest.mark.parametrize(("field", "value"), [("arrival_s", 1e12), ("arrival_s", -1.0), ("deadline_s", 2e9), ("deadline_s", 0.0)])
def test_job_times_outside_their_range_name_the_field(field: str, value: float) -> None:
    assert f"jobs[0].{field}: Input should be" in error_of(Workload, {"jobs": [{"name": "j", field: value, **STAGE}]})


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"nic_bandwidth_bytes_per_s": 1e-10}, "nic_bandwidth_bytes_per_s: Input should be greater than or equal to 0.001"),
        ({"disk_bandwidth_bytes_per_s": 1e300}, "disk_bandwidth_bytes_per_s: Input should be less than or equal to"),
        ({"map_slots_per_machine": 10**9}, "map_slots_per_machine: Input should be less than or equal to 10000"),
        ({"oversubscription": 1e6}, "oversubscription: Input should be less than or equal to 10000"),
        ({"oversubscription": None, "rack_core_bandwidth_bytes_per_s": 0.001}, "O <= 1e+04); it gives O = 200000"),
    ],
)
def test_cluster_numbers_outside_their_physical_range_name_the_field(overrides: dict, expected: str) -> None:
    assert expected in error_of(ClusterSpec, cluster_data(**overrides))


def test_a_job_whose_predicted_latency_is_beyond_any_period_is_an_input_error() -> None:
    # every field is in range, but 1 EB read at 0.001 B/s would take 10^21 s
    slow = {"name": "slow", **{**STAGE, "input_bytes": 1e18, "shuffle_bytes": 0.0, "output_bytes": 0.0, "reduce_tasks": 0,
                                "map_rate_bytes_per_s": 0.001}}
    workload = io.parse(Workload, {"jobs": [{"name": "fine", **STAGE}, slow]})
    with pytest.raises(InputError, match=r"^jobs\[1\] \(slow\): its predicted latency reaches .* s, over 1e\+09 s; check its sizes and rates$"):
        build_plan(workload, example_cluster(2, 2), "batch")


def test_map_only_stage() -> None:
    s = StageSpec(name="m", **{**STAGE, "shuffle_bytes": 0.0, "output_bytes": 0.0, "reduce_tasks": 0})
    assert s.map_selectivity is None and s.reduce_selectivity is None


def test_mapreduce_shorthand_is_one_stage_named_main() -> None:
    job = io.parse(JobSpec, {"name": "j", "arrival_s": 5.0, **STAGE})
    assert [s.name for s in job.stages] == ["main"] and job.arrival_s == 5.0
    assert job.input_bytes == 1000.0 and job.shuffle_bytes == 500.0 and job.tasks == 6


def dag(after: dict[str, list[str]]) -> dict:
    return {"name": "dag", "stages": [{"name": n, "after": a, **STAGE} for n, a in after.items()]}


def test_dag_input_is_read_by_source_stages_only() -> None:
    job = io.parse(JobSpec, dag({"a": [], "b": [], "c": ["a", "b"]}))
    assert job.input_bytes == 2000.0 and job.shuffle_bytes == 1500.0


def test_dag_with_a_cycle() -> None:
    message = error_of(Workload, {"jobs": [dag({"a": ["c"], "b": ["a"], "c": ["b"]})]})
    assert "jobs[0]: the stages form a cycle:" in message


def test_dag_errors() -> None:
    assert "runs after unknown stages ['z']" in error_of(JobSpec, dag({"a": ["z"]}))
    two = {"name": "j", "stages": [{"name": "a", **STAGE}, {"name": "a", **STAGE}]}
    assert "duplicate stage names ['a']" in error_of(JobSpec, two)


def test_find_cycle() -> None:
    assert find_cycle({"a": [], "b": ["a"], "c": ["a", "b"]}) is None
    cycle = find_cycle({"a": ["b"], "b": ["a"]})
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b"}
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


# Workload and Plan


def test_empty_job_list() -> None:
    assert "jobs: is empty; give at least 1" in error_of(Workload, {"jobs": []})


def test_duplicate_job_names() -> None:
    job = {"name": "j", **STAGE}
    assert "duplicate job names ['j']" in error_of(Workload, {"jobs": [job, job]})


def test_wrong_schema_version() -> None:
    assert "schema_version: Input should be 'corral-yarn/jobs/v1'" in error_of(Workload, {"schema_version": "v0", "jobs": [{"name": "j", **STAGE}]})


def test_not_an_object() -> None:
    assert "Workload: Input should be a valid dictionary" in error_of(Workload, [1, 2])


def test_plan_round_trips_through_json(tmp_path: Path) -> None:
    plan = build_plan(w1_like(6, seed=3, arrival_span_s=100.0), example_cluster(3, 4), "online")
    io.save(plan, tmp_path / "plan.json")
    assert io.load_plan(tmp_path / "plan.json") == plan
    assert plan.job(plan.jobs[0].name) is plan.jobs[0]
    assert json.loads((tmp_path / "plan.json").read_text())["schema_version"] == "corral-yarn/plan/v1"


def test_inputs_hash_is_stable_and_sensitive() -> None:
    a, b = w1_like(5, seed=1), w1_like(5, seed=2)
    assert io.inputs_sha256(a) == io.inputs_sha256(w1_like(5, seed=1))
    assert io.inputs_sha256(a) != io.inputs_sha256(b)


@settings(max_examples=200, deadline=None)
@given(
    input_bytes=st.floats(0.0, 1e13),
    map_selectivity=st.floats(0.01, 100.0),
    reduce_selectivity=st.floats(0.01, 100.0),
    map_tasks=st.integers(1, 10**5),
    reduce_tasks=st.integers(1, 10**4),
    arrival=st.floats(0.0, 1e7),
)
def test_jobs_round_trip_through_json(input_bytes: float, map_selectivity: float, reduce_selectivity: float, map_tasks: int, reduce_tasks: int, arrival: float) -> None:
    job = JobSpec(name="j", arrival_s=arrival, stages=[StageSpec(
        name="s", input_bytes=input_bytes, map_selectivity=map_selectivity, reduce_selectivity=reduce_selectivity,
        map_tasks=map_tasks, reduce_tasks=reduce_tasks, map_rate_bytes_per_s=1.0, reduce_rate_bytes_per_s=1.0)])
    workload = Workload(jobs=[job])
    assert io.parse(Workload, json.loads(io.to_json(workload))) == workload


# reading and writing


def test_read_json_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        io.read_json(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="bad.json is not JSON"):
        io.read_json(tmp_path / "bad.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="is not JSON"):
        io.read_json(tmp_path / "binary.json")


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(cluster_data(oversubscription=0.5)))
    with pytest.raises(InputError, match=r"cluster.json: oversubscription"):
        io.load_cluster(path)


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old")

    def fail(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        io.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temporary file left behind


def test_write_together_removes_what_it_created_on_failure(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "kept.html").write_text("mine")
    (tmp_path / "blocker").mkdir()  # the last file cannot be written
    with pytest.raises(OSError):
        io.write_together({tmp_path / "a.json": "{}", tmp_path / "new": {"index.html": b"x"},
                           tmp_path / "old": {"kept.html": b"new", "added.png": b"png"}, tmp_path / "blocker": "{}"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "old"]
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["kept.html"]  # the file it replaced keeps its new content
    assert (tmp_path / "old" / "kept.html").read_text() == "new"


def test_write_together_writes_directories(tmp_path: Path) -> None:
    io.write_together({tmp_path / "a.json": "{}", tmp_path / "report": {"index.html": b"<html>"}})
    assert (tmp_path / "a.json").read_text() == "{}" and (tmp_path / "report" / "index.html").read_bytes() == b"<html>"


def test_written_files_are_readable_by_others(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        io.write_atomic(tmp_path / "x.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o644


def test_errors_are_one_hierarchy() -> None:
    assert issubclass(InputError, CorralError)
    assert str(InputError("bad", field="jobs[0].name")) == "jobs[0].name: bad"


def test_rack_rejects_an_empty_machine_list() -> None:
    with pytest.raises(ValueError):
        Rack(name="/a", machines=[])


def test_plan_rejects_unknown_fields() -> None:
    plan = build_plan(w1_like(2), example_cluster(2, 2), "batch").model_dump(mode="json")
    assert "extra: Extra inputs are not permitted" in error_of(Plan, {**plan, "extra": 1})


@pytest.mark.parametrize(
    ("sizes", "selectivities"),
    [
        ({"shuffle_bytes": 0.0, "output_bytes": 800.0, "reduce_tasks": 0}, (None, None)),  # map-only, output written by the maps
        ({"input_bytes": 0.0, "shuffle_bytes": 0.0, "output_bytes": 0.0, "reduce_tasks": 0}, (None, None)),  # zero input
        ({"input_bytes": 0.0}, (None, 2.0)),  # no input read from HDFS, yet a shuffle (e.g. generated data)
        ({"output_bytes": 0.0}, (2.0, None)),
    ],
)
def test_stages_with_a_zero_size_have_no_selectivity_and_reload(sizes: dict, selectivities: tuple) -> None:
    job = JobSpec(name="j", stages=[StageSpec(name="s", **{**STAGE, **sizes})])
    assert (job.stages[0].map_selectivity, job.stages[0].reduce_selectivity) == selectivities
    workload = Workload(jobs=[job])
    assert io.parse(Workload, json.loads(io.to_json(workload))) == workload
