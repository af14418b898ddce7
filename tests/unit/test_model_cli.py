"""``corral model fit`` and ``corral model error`` end to end (in process): history store -> fitted cluster
spec -> per-run errors -> a plan that records the model."""

from __future__ import annotations

import json

import pytest

from corral_yarn.cli import main
from corral_yarn.contracts import JobSpec, MRCutePlus, StageSpec, Workload
from corral_yarn.io import load_cluster, load_plan, save
from estimator.store import HistoryStore
from test_estimator_fit import MB, plus_cluster, synthetic_runs

TRUTH = MRCutePlus(scale=1.2, job_startup_s=15.0, task_startup_s=2.0)


@pytest.fixture
def inputs(tmp_path):
    HistoryStore(tmp_path / "store").append(synthetic_runs(TRUTH, n=12))
    save(plus_cluster().model_copy(update={"model": "paper"}), tmp_path / "cluster.json")
    return tmp_path


def test_fit_writes_the_model_into_the_cluster_spec_and_plan_records_it(inputs, capsys):
    d = inputs
    assert main(["model", "fit", "--store", str(d / "store"), "--cluster", str(d / "cluster.json"), "--out", str(d / "fitted.json")]) == 0
    out = capsys.readouterr().out
    assert "12 runs; mean |error|: paper" in out and "mrcute+ 0.0%" in out
    fitted = load_cluster(d / "fitted.json")
    assert fitted.model.scale == pytest.approx(1.2, rel=1e-3) and fitted.model.fitted_runs == 12
    assert main(["model", "error", "--store", str(d / "store"), "--cluster", str(d / "fitted.json"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["runs"] == 12 and result["mean_abs_error"]["mrcute+"] < 1e-3 < result["mean_abs_error"]["paper"]
    assert {"run_id", "actual_s", "paper_s", "model_s", "error"} <= result["jobs"][0].keys()
    stage = StageSpec(name="main", input_bytes=640 * MB, shuffle_bytes=320 * MB, output_bytes=160 * MB, map_tasks=10,
                      reduce_tasks=2, map_rate_bytes_per_s=20 * MB, reduce_rate_bytes_per_s=10 * MB)
    save(Workload(jobs=[JobSpec(name="j", stages=[stage])]), d / "jobs.json")
    assert main(["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "fitted.json"), "--scenario", "batch", "--out", str(d / "plan.json")]) == 0
    assert load_plan(d / "plan.json").model == fitted.model


def test_error_with_the_paper_model_shows_it(inputs, capsys):
    assert main(["model", "error", "--store", str(inputs / "store"), "--cluster", str(inputs / "cluster.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith('model: "paper"') and "12 runs; mean |error|: paper" in out


def test_an_empty_store_is_one_error_line(tmp_path, capsys):
    HistoryStore(tmp_path / "store").append([])
    save(plus_cluster(), tmp_path / "cluster.json")
    assert main(["model", "error", "--store", str(tmp_path / "store"), "--cluster", str(tmp_path / "cluster.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corral: error: --store:") and err.count("\n") == 1


def test_a_missing_store_is_one_error_line(tmp_path, capsys):
    save(plus_cluster(), tmp_path / "cluster.json")
    assert main(["model", "fit", "--store", str(tmp_path / "nope"), "--cluster", str(tmp_path / "cluster.json"), "--out", str(tmp_path / "o.json")]) == 2
    assert "--store: no history store" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()
