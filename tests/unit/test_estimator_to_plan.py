"""The estimator feeds the planner: ``corral history ingest`` -> ``corral estimate`` -> ``corral plan`` on the
bundled SWIM FB-2009 trace, through the command line (in process; no Hadoop). The trace holds map-only
and zero-input jobs, so this is the test that the jobs file ``corral estimate`` writes is one ``corral
plan`` accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral_yarn.cli import main
from corral_yarn.io import load_workload

TRACE = Path(__file__).resolve().parents[1] / "data/swim/FB-2009_samples_24_times_1hr_0.tsv"  # a copy of shared/data/swim (New BSD)


def test_ingest_estimate_plan_on_the_bundled_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, jobs, plan = tmp_path / "S", tmp_path / "jobs.json", tmp_path / "plan.json"
    assert main(["history", "ingest", "--swim", str(TRACE), "--swim-start", "2009-10-01T00:00:00Z", "--store", str(store)]) == 0
    assert main(["estimate", "--store", str(store), "--at", "2009-10-02T00:00:00Z", "--horizon", "1h", "--period", "1h",
                 "--window", "1h", "--no-weekend-split", "--out", str(jobs)]) == 0
    stages = [s for j in load_workload(jobs).jobs for s in j.stages]
    assert any(s.reduce_tasks == 0 and s.shuffle_bytes == 0 for s in stages), "the trace's map-only jobs are predicted"
    assert main(["example", "--out", str(tmp_path / "in")]) == 0
    capsys.readouterr()
    assert main(["plan", "--jobs", str(jobs), "--cluster", str(tmp_path / "in" / "cluster.json"), "--scenario", "online",
                 "--out", str(plan)]) == 0, capsys.readouterr().err
    planned = json.loads(plan.read_text())["jobs"]
    assert {j["name"] for j in planned} == {j.name for j in load_workload(jobs).jobs}
