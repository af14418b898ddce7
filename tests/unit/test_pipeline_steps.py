"""The pipeline's steps that need no cluster: connections, locality figures, catalog, the bundled workload
through estimate -> plan -> planned runs, start times, the run summary."""

from __future__ import annotations

import dataclasses

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral_yarn.cli import main
from corral_yarn.cluster import CorralTags
from corral_yarn.cluster.history import TaskAttempt
from corral_yarn.cluster.topology import Topology
from corral_yarn.cluster.webhdfs import BlockLocation
from corral_yarn.contracts import ClusterSpec, Rack
from corral_yarn.errors import InputError
from corral_yarn import io
from corral_yarn.pipeline import demo_workload, planning, tasks
from corral_yarn.pipeline.catalog import Catalog
from corral_yarn.pipeline.connections import connection_env, endpoints_from
from corral_yarn.pipeline.execution import PlannedRun, check_priorities, planned_runs, start_due
from corral_yarn.pipeline.locality import attempt_racks, measure
from corral_yarn.kwiken.speculation import ESTIMATOR, KWIKEN_ESTIMATOR, TIMEOUT_MS
from corral_yarn.pipeline.planning import Published
from corral_yarn.pipeline.settings import Period, PipelineSettings
from corral_yarn.planner.build import build_plan
from estimator.estimate import EstimateOptions, estimate
from estimator.identity import strip_volatile
from estimator.records import JobRun, TaskSample
from estimator.store import HistoryStore

SATURDAY = datetime(2026, 11, 21, tzinfo=UTC)
DESCRIPTION = {"webhdfs": "http://127.0.0.1:40587", "resourcemanager": "http://127.0.0.1:34599", "jobhistory": "http://127.0.0.1:39883"}


def _connections(env: dict[str, str]) -> dict[str, SimpleNamespace]:
    out = {}
    for name, value in env.items():
        doc = json.loads(value)
        out[name.removeprefix("AIRFLOW_CONN_").lower()] = SimpleNamespace(host=doc["host"], port=doc["port"], password=None, extra_dejson=doc["extra"])
    return out


def test_connections_from_a_cluster_description_give_back_its_endpoints() -> None:
    env = connection_env(DESCRIPTION)
    assert sorted(env) == ["AIRFLOW_CONN_CORRAL_JOBHISTORY", "AIRFLOW_CONN_CORRAL_RESOURCEMANAGER", "AIRFLOW_CONN_CORRAL_WEBHDFS"]
    assert endpoints_from(_connections(env)).model_dump(exclude_none=True) == DESCRIPTION


def test_a_connection_host_given_as_a_url_and_a_missing_address() -> None:
    conns = {k: SimpleNamespace(host=f"https://{k}.example", port=443, password=None, extra_dejson={}) for k in
             ("corral_webhdfs", "corral_resourcemanager", "corral_jobhistory")}
    assert endpoints_from(conns).webhdfs == "https://corral_webhdfs.example:443"
    with pytest.raises(InputError, match="jobhistory"):
        connection_env({**DESCRIPTION, "jobhistory": None})


def _attempt(rack: str, node: str = "") -> TaskAttempt:
    return TaskAttempt("a", "MAP", "SUCCEEDED", rack, node, "c", 0, 0)


def test_locality_counts_containers_and_blocks_in_the_rack_set_case_insensitively() -> None:
    nm = SimpleNamespace(node_id="h1:1", host="h1", http_address="h1:8042", rack="/rack-b")
    topology = Topology(datanodes=(), nodemanagers=(nm,), disagreements=())  # type: ignore[arg-type]
    racks = attempt_racks([_attempt("/rack-a"), _attempt("/RACK-A"), _attempt("", "h1:8042"), _attempt("", "elsewhere:1")], topology)
    assert racks == ["/rack-a", "/RACK-A", "/rack-b", "unknown"]
    blocks = [BlockLocation(0, 1, (), ("/rack-a", "/rack-c", "/rack-c")), BlockLocation(1, 1, (), ("/rack-b", "/rack-c", "/rack-c"))]
    loc = measure(racks, blocks, ["/Rack-A"])
    assert (loc.containers, loc.containers_in_racks, loc.container_share) == (4, 2, 0.5)
    assert (loc.blocks, loc.blocks_with_replica_in_racks, loc.block_share) == (2, 1, 0.5)
    assert (loc.replicas, loc.replicas_in_racks) == (6, 1)
    assert loc.container_racks == {"/RACK-A": 1, "/rack-a": 1, "/rack-b": 1, "unknown": 1}
    assert measure([], [], ["/rack-a"]).to_json()["container_share"] is None


def test_catalog_jobs_become_mapreduce_jobs(tmp_path: Path) -> None:
    catalog = demo_workload.demo_catalog(tmp_path, "/jars/examples.jar")
    catalog.save(tmp_path / "catalog.json")
    assert Catalog.load(tmp_path / "catalog.json") == catalog
    grep = catalog.entry("errors-grep").mapreduce_job("errors-grep-x", catalog.jar, ["/in"], "/out")
    assert grep.mapper.endswith("RegexMapper") and grep.properties["mapreduce.mapper.regex"] == "ERROR|timeout"
    wordcount = catalog.entry("clicks-wordcount").mapreduce_job("n", catalog.jar, ["/in"], "/out")
    assert wordcount.program == "wordcount" and wordcount.reduces == 2
    assert catalog.entry("clicks-wordcount").input_dir(SATURDAY) == tmp_path / "landing" / "clicks-wordcount" / "2026-11-21"
    assert catalog.entry("nope") is None


def _published(tmp_path: Path, scenario: str = "batch") -> tuple[Published, Catalog, PipelineSettings]:
    history = demo_workload.demo_history(SATURDAY)
    result = estimate(history, EstimateOptions(at=SATURDAY, horizon=timedelta(days=1), slack=0.1))
    cluster = ClusterSpec(racks=[Rack(name=f"/rack-{c}", machines=[f"{c}1", f"{c}2"]) for c in "abc"], map_slots_per_machine=4,
                          reduce_slots_per_machine=4, nic_bandwidth_bytes_per_s=1.25e9, disk_bandwidth_bytes_per_s=1e8, oversubscription=5)
    plan = build_plan(result.workload, cluster, scenario)
    period = Period(start=SATURDAY, horizon_s=86400, scenario=scenario, slack=0.1)
    settings = PipelineSettings(home=tmp_path, runs_dir="/r")
    return Published("V1", period, plan, result.workload, cluster), demo_workload.demo_catalog(tmp_path, "/j.jar"), settings


def test_the_bundled_history_predicts_every_bundled_job_at_its_time_of_day(tmp_path: Path) -> None:
    published, _, _ = _published(tmp_path)
    jobs = {j.recurring_key: j for j in published.workload.jobs}
    assert sorted(jobs) == sorted(j.key for j in demo_workload.DEMO_JOBS)
    for job in demo_workload.DEMO_JOBS:
        predicted = jobs[job.key]
        assert abs(predicted.arrival_s - job.time_of_day.total_seconds()) <= 300
        assert predicted.input_bytes == pytest.approx(job.input_bytes * 1.1, rel=0.1)


def test_planned_runs_follow_the_prioritization_order_and_skip_unknown_jobs(tmp_path: Path) -> None:
    published, catalog, settings = _published(tmp_path)
    runs, unknown = planned_runs(published, catalog, settings)
    assert unknown == [] and [r.order for r in runs] == sorted(r.order for r in runs)
    assert [r.priority for r in runs] == sorted((r.priority for r in runs), reverse=True)
    for run in runs:
        assert run.racks == published.plan.job(run.name).racks and run.hdfs_input.startswith("/r/V1/")
        assert strip_volatile(run.app_name) == run.job.key  # the next ingest finds the same recurring job
        assert run.tags == CorralTags(published.plan.plan_id, run.name, tuple(run.racks), key=run.job.key, period=published.period.stamp)
    partial = Catalog(jar="/j.jar", jobs=catalog.jobs[1:])
    runs, unknown = planned_runs(published, partial, settings)
    assert len(runs) == 3 and len(unknown) == 1 and unknown[0].startswith(catalog.jobs[0].key)


def test_planned_runs_carry_the_latency_function_the_plan_gave_into_their_tags(tmp_path: Path) -> None:
    published, catalog, settings = _published(tmp_path)
    sensitive = published.plan.jobs[0].name
    jobs = [j.model_copy(update={"latency_function": "memcached"}) if j.name == sensitive else j for j in published.plan.jobs]
    published = dataclasses.replace(published, plan=published.plan.model_copy(update={"jobs": jobs}))
    runs = {r.name: r for r in planned_runs(published, catalog, settings)[0]}
    assert "corral-latency:memcached" in runs[sensitive].tags.encode()
    assert all(r.tags.latency is None for name, r in runs.items() if name != sensitive)


def test_planned_runs_carry_kwikens_speculation_settings_of_their_recurring_key(tmp_path: Path) -> None:
    published, catalog, settings = _published(tmp_path)
    assert all(r.speculation == {} for r in planned_runs(published, catalog, settings)[0])  # no settings file: the cluster's
    key = catalog.jobs[0].key
    props = {"mapreduce.map.speculative": "false", "mapreduce.reduce.speculative": "false"}
    doc = {"budget": 0.1, "sumvar_budget": 0.0, "planned_cost": 0.0, "planned_extra_fraction": 0.0, "expected_extra_container_s": 0.0, "container_seconds": 10.0, "runs": 3, "jobs": [{"key": key, "properties": props, "stages": [
        {"type": "map", "tasks": 2, "samples": 9, "reissue_fraction": 0.0, "timeout_s": None,
         "cost_share": 1.0, "variance": 1.0, "planned_variance": 1.0}]}]}
    settings.speculation.write_text(json.dumps(doc))
    runs, _ = planned_runs(published, catalog, settings)
    assert {r.job.key: r.speculation for r in runs}[key] == props
    assert all(r.speculation == {} for r in runs if r.job.key != key)
    settings.speculation.write_text(json.dumps({**doc, "budget": 2}))
    with pytest.raises(InputError, match="budget"):
        planned_runs(published, catalog, settings)


def test_yarn_plan_matching_a_measured_spend_feeds_the_planned_runs_of_the_pipeline(tmp_path: Path) -> None:
    published, catalog, settings = _published(tmp_path)
    key = catalog.jobs[0].key
    day = datetime(2026, 11, 1, tzinfo=UTC)
    HistoryStore(tmp_path / "store").append([JobRun(
        run_id=f"{key}-{d}", recurring_key=key, name=f"{key}-{d}", source="test", submit_time=day + timedelta(days=d),
        map_tasks=6, reduce_tasks=1, map_task_samples=tuple(TaskSample(x, 1) for x in [1.0, 1.1, 0.9, 1.0, 1.2, 10.0]),
        reduce_task_samples=(TaskSample(2.0, 1),)) for d in range(4)])
    assert main(["kwiken", "yarn-plan", "--history", str(tmp_path / "store"), "--match-extra-container-s", "4",
                 "--out", str(settings.speculation)]) == 0  # the file the pipeline reads: <home>/kwiken-yarn.json
    speculation = {r.job.key: r.speculation for r in planned_runs(published, catalog, settings)[0]}[key]
    assert speculation[ESTIMATOR] == KWIKEN_ESTIMATOR and float(speculation[TIMEOUT_MS["map"]]) > 0
    assert speculation["mapreduce.map.speculative"] == "true" and speculation["mapreduce.reduce.speculative"] == "false"


def test_a_plan_with_priorities_above_the_clusters_maximum_is_refused(tmp_path: Path) -> None:
    published, catalog, settings = _published(tmp_path)
    runs, _ = planned_runs(published, catalog, settings)
    highest = max(r.priority for r in runs)
    check_priorities(runs, highest)
    with pytest.raises(InputError, match=f"priorities up to {highest} but .*max-application-priority is {highest - 1}:"):
        check_priorities(runs, highest - 1)


@settings(max_examples=100, deadline=None)
@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1)), st.sampled_from(demo_workload.DEMO_JOBS))
def test_the_application_name_strips_back_to_its_recurring_key(arrival: datetime, job: demo_workload.DemoJob) -> None:
    entry = demo_workload.demo_catalog(Path("/h"), "/j.jar").entry(job.key)
    run = PlannedRun(version="v", plan_id="p", scenario="batch", name="n", racks=["/rack-a"], priority=1, order=0,
                     planned_start=arrival, arrival=arrival, period_start=arrival, period_end=arrival + timedelta(days=1),
                     job=entry, jar="/j.jar", hdfs_input="/i", hdfs_output="/o")
    assert strip_volatile(run.app_name) == job.key


def test_online_jobs_start_at_their_planned_start_batch_jobs_at_once(tmp_path: Path) -> None:
    for scenario in ("batch", "online"):
        published, catalog, settings = _published(tmp_path, scenario)
        late = max(planned_runs(published, catalog, settings)[0], key=lambda r: r.planned_start)
        assert start_due(late, now=late.planned_start - timedelta(seconds=1)) is (scenario == "batch")
        assert start_due(late, now=late.planned_start)


def test_period_start_from_the_param_or_the_run() -> None:
    run_time = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    assert tasks.period_start("2026-11-21T06:00:00", run_time) == datetime(2026, 11, 21, 6, tzinfo=UTC)
    assert tasks.period_start("", None, run_time) == run_time
    with pytest.raises(InputError):
        tasks.period_start("yesterday")


def test_a_period_from_airflows_run_time_is_estimated(tmp_path: Path) -> None:
    """Airflow gives run times as pendulum DateTimes (logical date ``+00:00``): the period start is a plain datetime."""
    import pendulum

    from corral_yarn.pipeline.demo import DemoPaths, prepare

    day = datetime(2026, 11, 22, tzinfo=UTC)
    start = tasks.period_start("", None, pendulum.parse(day.isoformat()))
    assert type(start) is datetime and start == day
    home = prepare(DemoPaths(tmp_path / "airflow", tmp_path / "pipeline"), {"examples_jar": "/j.jar"}, day, keys=["errors-grep"])
    directory = planning.estimate_period(home, Period(start=start, horizon_s=86_400, scenario="batch"), 1 << 20)
    assert [j.recurring_key for j in io.load_workload(directory / planning.JOBS).jobs] == ["errors-grep"]


def test_a_catalog_latency_profile_reaches_the_plan_and_the_submitted_tags(tmp_path: Path) -> None:
    """estimate -> plan -> runs: the catalog says errors-grep is latency-sensitive; its run is tagged corral-latency:memcached."""
    from corral_yarn.pipeline.demo import DemoPaths, prepare

    day = datetime(2026, 11, 22, tzinfo=UTC)
    home = prepare(DemoPaths(tmp_path / "airflow", tmp_path / "pipeline"), {"examples_jar": "/j.jar"}, day, keys=["errors-grep", "clicks-wordcount"])
    catalog = Catalog.load(home.catalog)
    sensitive = catalog.entry("errors-grep").model_copy(update={"latency_profile": "memcached"})
    catalog.model_copy(update={"jobs": [sensitive if j.key == "errors-grep" else j for j in catalog.jobs]}).save(home.catalog)
    period = Period(start=day, horizon_s=86_400, scenario="batch")
    directory = planning.estimate_period(home, period, 1 << 20)
    workload = io.load_workload(directory / planning.JOBS)
    assert {j.recurring_key: j.latency_profile for j in workload.jobs} == {"errors-grep": "memcached", "clicks-wordcount": None}
    published, _, _ = _published(tmp_path)
    plan = build_plan(workload, published.cluster, "batch")
    runs = planned_runs(Published("V2", period, plan, workload, published.cluster), Catalog.load(home.catalog), home)[0]
    assert {r.job.key: r.tags.latency for r in runs} == {"errors-grep": "memcached", "clicks-wordcount": None}


def _record(name: str, order: int, containers: tuple[int, int], blocks: tuple[int, int]) -> dict:
    loc = {"containers": containers[1], "containers_in_racks": containers[0], "blocks": blocks[1],
           "blocks_with_replica_in_racks": blocks[0], "replicas": 3 * blocks[1], "replicas_in_racks": blocks[0]}
    return {"job": name, "order": order, "final_status": "SUCCEEDED", "locality": loc}


def test_the_summary_totals_locality_and_fails_the_run_when_a_job_is_missing(tmp_path: Path) -> None:
    jobs = [{"name": n, "version": "V1"} for n in ("a", "b", "c")]
    records = [_record("b", 1, (3, 4), (2, 2)), _record("a", 0, (5, 5), (3, 4))]
    with pytest.raises(tasks.JobsFailedError, match="1 of 3 planned jobs did not finish: c"):
        tasks.summarize({"home": str(tmp_path)}, jobs, [*records, None])
    summary = json.loads((tmp_path / "records" / "V1" / "summary.json").read_text())
    assert [j["job"] for j in summary["jobs"]] == ["a", "b"] and summary["missing"] == ["c"]
    assert (summary["containers_in_racks"], summary["containers"], summary["container_share"]) == (8, 9, 8 / 9)
    assert (summary["block_share"], summary["succeeded"]) == (5 / 6, 2)
    assert tasks.summarize({"home": str(tmp_path)}, jobs[:2], records)["missing"] == []


def test_planned_jobs_without_a_catalog_entry_count_as_planned_and_fail_the_run(tmp_path: Path) -> None:
    jobs = [{"name": n, "version": "V1"} for n in ("a", "b")]
    records = [_record("a", 0, (1, 1), (1, 1)), _record("b", 1, (1, 1), (1, 1))]
    (tmp_path / "records" / "V1").mkdir(parents=True)
    (tmp_path / "records" / "V1" / tasks.NOT_RUN).write_text(json.dumps({"no_catalog_entry": ["z"]}))
    with pytest.raises(tasks.JobsFailedError, match=r"1 of 3 planned jobs did not finish: z \(1 have no catalog entry\)"):
        tasks.summarize({"home": str(tmp_path)}, jobs, records)
    summary = json.loads((tmp_path / "records" / "V1" / "summary.json").read_text())
    assert (summary["planned"], summary["succeeded"], summary["missing"], summary["no_catalog_entry"]) == (3, 2, ["z"], ["z"])
