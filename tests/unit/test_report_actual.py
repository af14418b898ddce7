"""Planned against actual (issue 13 item 6): runs join their plan entry by tags, never by name; the edge
cases (planned but never ran, ad hoc runs, retries, another period of the same plan id); the report and
``corral report --history`` on a real history store; bad inputs exit 2 naming the option."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from corral_yarn import io
from corral_yarn.cli import main
from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError
from corral_yarn.planner.build import build_plan
from corral_yarn.report import render_plan_report
from corral_yarn.report.actual import ActualRun, RunLocality, compare
from corral_yarn.report.plan import SCHEDULE_PNG
from corral_yarn.report.versus import actual_bars
from corral_yarn.workloads import example_cluster, w1_like
from estimator.records import JobRun, SkewPolicy
from estimator.store import HistoryStore

T0 = datetime(2026, 11, 24, tzinfo=UTC)
DAY = timedelta(days=1)
PERIOD = "20261124T000000Z"


@pytest.fixture(scope="module")
def online() -> Plan:
    return build_plan(w1_like(n_jobs=5, seed=3, arrival_span_s=100.0), example_cluster(racks=3, machines_per_rack=4), "online")


@pytest.fixture(scope="module")
def batch() -> Plan:
    return build_plan(w1_like(n_jobs=4, seed=1), example_cluster(racks=3, machines_per_rack=4), "batch")


def ran(plan: Plan, name: str, start_s: float, latency_s: float, *, origin: datetime = T0, period: str = PERIOD.lower(),
        outcome: str = "SUCCEEDED", run_id: str | None = None, run_name: str = "renamed-by-someone") -> ActualRun:
    """A run of planned job ``name`` as the history store gives it back: the plan entry lower-cased, the name anything."""
    start = origin + timedelta(seconds=start_s)
    return ActualRun(run_id or f"jobhistory:{name}-{start_s}", run_name, start - timedelta(seconds=1), start, start + timedelta(seconds=latency_s),
                     outcome, tuple(plan.job(name).racks), plan.plan_id.lower(), period, name.lower())


def test_every_planned_job_joins_its_run_by_plan_entry_and_the_objective_is_measured(online: Plan) -> None:
    runs = [ran(online, j.name, j.planned_start_s + 2.0, j.predicted_duration_s * 1.25) for j in online.jobs]
    result = compare(online, PERIOD, T0, T0 + DAY, runs)
    assert [o.run for o in result.jobs] == runs and result.never_ran == [] and result.ad_hoc == []
    for o in result.jobs:
        assert o.start_s == pytest.approx(o.planned.planned_start_s + 2.0)
        assert o.latency_s == pytest.approx(o.planned.predicted_duration_s * 1.25)
        assert o.model_error == pytest.approx(1 / 1.25 - 1)  # the model predicted 80 % of the latency
    assert result.mean_abs_model_error() == pytest.approx(0.2)
    expected = sum(o.finish_s - o.planned.arrival_s for o in result.jobs) / len(online.jobs)
    assert result.actual_objective_s() == pytest.approx(expected)


def test_a_job_planned_but_never_ran_and_an_ad_hoc_run(online: Plan) -> None:
    first, *rest = online.jobs
    adhoc = ActualRun("rm:application_9_0001", first.name, T0 + timedelta(seconds=30), T0 + timedelta(seconds=31),
                      T0 + timedelta(seconds=90), "SUCCEEDED")  # named like a planned job, but carries no plan entry
    yesterday = ActualRun("rm:application_9_0000", "old", T0 - timedelta(hours=2), None, None, "SUCCEEDED")
    runs = [ran(online, j.name, j.planned_start_s, 10.0) for j in rest] + [adhoc, yesterday]
    result = compare(online, PERIOD, T0, T0 + DAY, runs)
    assert result.never_ran == [first.name] and result.ad_hoc == [adhoc]
    missing = result.jobs[0]
    assert (missing.run, missing.attempts, missing.start_s, missing.latency_s, missing.model_error) == (None, 0, None, None, None)
    assert result.actual_objective_s() is None and not missing.finished


def test_the_same_plan_id_in_another_period_is_not_this_periods_run(online: Plan) -> None:
    job = online.jobs[0]
    tomorrow = ran(online, job.name, 5.0, 10.0, origin=T0 + DAY, period="20261125t000000z")
    today = compare(online, PERIOD, T0, T0 + DAY, [tomorrow])
    assert today.jobs[0].run is None and today.ad_hoc == []  # outside today's window and another period
    assert compare(online, "20261125T000000Z", T0 + DAY, T0 + 2 * DAY, [tomorrow]).jobs[0].run == tomorrow


def test_a_retried_job_counts_its_last_success_and_a_failed_run_has_no_model_error(online: Plan) -> None:
    a, b = online.jobs[0].name, online.jobs[1].name
    runs = [ran(online, a, 1.0, 5.0, outcome="FAILED", run_id="r1"), ran(online, a, 20.0, 30.0, run_id="r2"),
            ran(online, a, 40.0, 5.0, outcome="KILLED", run_id="r3"), ran(online, b, 3.0, 7.0, outcome="FAILED", run_id="r4")]
    result = compare(online, PERIOD, T0, T0 + DAY, runs)
    assert (result.jobs[0].run.run_id, result.jobs[0].attempts) == ("r2", 3)
    failed = result.jobs[1]
    assert failed.run.run_id == "r4" and failed.model_error is None and failed.latency_s is None and failed.finish_s is not None


def test_a_batch_plans_time_zero_is_its_first_submission(batch: Plan) -> None:
    release = T0 + timedelta(hours=17, minutes=3)
    runs = [ran(batch, j.name, j.planned_start_s + 4.0, j.predicted_duration_s, origin=release) for j in batch.jobs]
    result = compare(batch, PERIOD, T0, T0 + DAY, runs)
    assert result.origin == release - timedelta(seconds=1) + timedelta(seconds=min(j.planned_start_s for j in batch.jobs) + 4.0)
    assert result.actual_objective_s() == pytest.approx(max(o.finish_s for o in result.jobs))


def test_locality_shares_sum_over_the_recorded_jobs_and_records_of_other_jobs_are_refused(online: Plan) -> None:
    a, b = online.jobs[0].name, online.jobs[1].name
    result = compare(online, PERIOD, T0, T0 + DAY, [], {a: RunLocality(4, 4, 2, 2), b: RunLocality(6, 3, 2, 1)})
    assert result.shares() == (pytest.approx(0.7), pytest.approx(0.75))
    assert compare(online, PERIOD, T0, T0 + DAY, []).shares() == (None, None)
    with pytest.raises(InputError, match=r"--records: run records of jobs plan .* does not have: \['nope'\]"):
        compare(online, PERIOD, T0, T0 + DAY, [], {"nope": RunLocality(1, 1, 1, 1)})
    with pytest.raises(InputError, match="--horizon: the period must end after it starts"):
        compare(online, PERIOD, T0, T0, [])


def test_actual_bars_go_on_the_racks_the_tasks_ran_on(online: Plan) -> None:
    job = online.jobs[0]
    lanes = ["/rack-00", "/rack-01", "/rack-02"]
    spilled = ActualRun("r", "x", T0, T0 + timedelta(seconds=1), T0 + timedelta(seconds=9), "SUCCEEDED", ("/RACK-02", "/default-rack"),
                        online.plan_id, PERIOD.lower(), job.name)
    bars = actual_bars(compare(online, PERIOD, T0, T0 + DAY, [spilled]), lanes)
    assert [(b.lanes, b.start, b.finish) for b in bars] == [((2,), 1.0, 9.0)]


def test_the_report_gains_the_section_and_the_online_gantt_its_bound_line(online: Plan) -> None:
    runs = [ran(online, j.name, j.planned_start_s, j.predicted_duration_s) for j in online.jobs[1:]]
    files = render_plan_report(online, actual=compare(online, PERIOD, T0, T0 + DAY, runs))
    page = files["index.html"].decode()
    assert "Planned vs actual" in page and "never ran" in page and online.jobs[0].name in page
    assert "online bound is on the mean completion time" in page and files[SCHEDULE_PNG] != render_plan_report(online)[SCHEDULE_PNG]
    assert "Planned vs actual" not in render_plan_report(online)["index.html"].decode()


# --- corral report --history on a history store --------------------------------------------------

@pytest.fixture
def period_dir(tmp_path: Path, online: Plan) -> Path:
    """A pipeline-like period directory: plan.json and period.json, a history store and one run record."""
    io.save(online, tmp_path / "plan.json")
    (tmp_path / "period.json").write_text(json.dumps({"start": T0.isoformat(), "horizon_s": 86400, "scenario": "online"}))
    runs = [JobRun(run_id=f"jobhistory:job_1_{k}", recurring_key="k", name=f"app-{k}", source="test", submit_time=T0 + timedelta(seconds=j.planned_start_s),
                   start_time=T0 + timedelta(seconds=j.planned_start_s + 1), finish_time=T0 + timedelta(seconds=j.planned_start_s + 1 + j.predicted_duration_s),
                   plan_id=online.plan_id.lower(), plan_period=PERIOD.lower(), planned_job=j.name.lower())
            for k, j in enumerate(online.jobs[:-1])]
    HistoryStore(tmp_path / "history").append(runs, skew=SkewPolicy(now=T0 + DAY))
    (tmp_path / "records").mkdir()
    record = {"job": online.jobs[0].name, "locality": {"containers": 4, "containers_in_racks": 3, "blocks": 2, "blocks_with_replica_in_racks": 2}}
    (tmp_path / "records" / "a.json").write_text(json.dumps(record))
    (tmp_path / "records" / "summary.json").write_text("{}")
    return tmp_path


def test_corral_report_with_history_prints_the_comparison(period_dir: Path, online: Plan, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", str(period_dir / "plan.json"), "--out", str(period_dir / "out"), "--history", str(period_dir / "history"),
                 "--records", str(period_dir / "records")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{len(online.jobs) - 1} of {len(online.jobs)} planned jobs ran (never ran: {online.jobs[-1].name}), 0 ad hoc runs" in out
    assert "mean |model error| 0.0 %; containers inside R_j 75.0 %, input blocks 100.0 %" in out
    assert (period_dir / "out" / "index.html").is_file()


@pytest.mark.parametrize(("extra", "message"), [
    (["--records", "R"], "--records: needs --history"),
    (["--horizon", "1d"], "--horizon: needs --history"),
    (["--history", "H", "--period-start", "2026-11-24"], "--horizon: give --period-start and --horizon together"),
    (["--history", "H", "--horizon", "0"], "--horizon: .*not a positive duration"),
    (["--history", "H", "--period-start", "yesterday", "--horizon", "1d"], "--period-start: .*not an ISO 8601 time"),
    (["--history", "nowhere"], "--history: .*nowhere is not a history store"),
    (["--history", "H", "--records", "nowhere"], "--records: no such directory"),
])
def test_bad_report_options_exit_2_naming_the_option(period_dir: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    where = {"H": str(period_dir / "history"), "R": str(period_dir / "records")}
    assert main(["report", str(period_dir / "plan.json"), "--out", str(period_dir / "out"), *[where.get(a, a) for a in extra]]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (period_dir / "out").exists()


def test_a_period_file_of_another_scenario_or_none_at_all_is_refused(period_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["report", str(period_dir / "plan.json"), "--out", str(period_dir / "out"), "--history", str(period_dir / "history")]
    (period_dir / "period.json").write_text(json.dumps({"start": T0.isoformat(), "horizon_s": 86400, "scenario": "batch"}))
    assert main(args) == 2 and "period.json: scenario: the period was planned batch, the plan is online" in capsys.readouterr().err
    (period_dir / "period.json").unlink()
    assert main(args) == 2 and "--period-start: no period.json beside" in capsys.readouterr().err
    (period_dir / "records" / "b.json").write_text(json.dumps({"job": "x", "locality": {"containers": 1, "containers_in_racks": 2, "blocks": 0,
                                                                                         "blocks_with_replica_in_racks": 0}}))
    assert main([*args, "--period-start", T0.isoformat(), "--horizon", "1d", "--records", str(period_dir / "records")]) == 2
    assert "b.json: locality: more containers or blocks inside R_j than in all" in capsys.readouterr().err
    assert not (period_dir / "out").exists()
