"""``corral airflow-connections`` and the demo's printed summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from corral_yarn.cli import build_parser, main
from corral_yarn.cli import pipeline as cli_pipeline
from corral_yarn.cli.pipeline import demo_summary
from corral_yarn.errors import InputError
from corral_yarn.io import save
from corral_yarn.planner.build import build_plan
from corral_yarn.workloads import example_cluster, w1_like
from corral_yarn.minicluster.launcher import SCHEMA_VERSION
from corral_yarn.pipeline import demo
from corral_yarn.pipeline.demo import DemoPaths
from corral_yarn.pipeline.settings import PipelineSettings
from corral_yarn.planner.schedule import SHARING


def test_airflow_connections_prints_one_export_per_service(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    description = {"schema_version": SCHEMA_VERSION, "webhdfs": "http://127.0.0.1:1", "resourcemanager": "http://127.0.0.1:2",
                   "jobhistory": "http://127.0.0.1:3"}
    (tmp_path / "c.json").write_text(json.dumps(description))
    assert main(["airflow-connections", "--cluster-json", str(tmp_path / "c.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("=", 1)[0] for line in lines] == ["export AIRFLOW_CONN_CORRAL_WEBHDFS", "export AIRFLOW_CONN_CORRAL_RESOURCEMANAGER",
                                                          "export AIRFLOW_CONN_CORRAL_JOBHISTORY"]
    assert json.loads(lines[1].split("=", 1)[1].strip("'"))["port"] == 2


def test_airflow_connections_without_a_cluster_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["airflow-connections", "--cluster-json", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corral: error: no cluster description at") and err.count("\n") == 1


def test_the_demo_summary_names_the_report_and_each_jobs_locality(tmp_path: Path) -> None:
    loc = {"containers": 6, "containers_in_racks": 6, "container_share": 1.0, "blocks": 4, "blocks_with_replica_in_racks": 3,
           "block_share": 0.75}
    summary = {"version": "20261121T000000Z-abc", "planned": 1, "succeeded": 1, "containers": 6, "containers_in_racks": 6,
               "container_share": 1.0, "blocks": 4, "blocks_with_replica_in_racks": 3, "block_share": 0.75, "replica_share": 0.25,
               "jobs": [{"job": "events-sort@x", "racks": ["/rack-a"], "priority": 1, "locality": loc}]}
    period = tmp_path / "periods" / "20261121T000000Z"
    cluster, workload = example_cluster(racks=2, machines_per_rack=2), w1_like(n_jobs=1, seed=0)
    save(cluster, period / "cluster.json")
    save(build_plan(workload, cluster, "batch"), period / "plan.json")
    text = demo_summary(summary, tmp_path, DemoPaths(tmp_path / "a", tmp_path / "p"), 300.4)
    assert "in 300 s" in text and "Planned 1 jobs on 2 racks (batch scenario" in text
    assert str(tmp_path / "periods" / "20261121T000000Z" / "report" / "index.html") in text
    assert "6/6" in text and "3/4" in text and "75.0 %" in text


def sharing_option(command: str) -> argparse.Action:
    [action] = [a for a in build_parser()._subparsers._group_actions[0].choices[command]._actions if a.dest == "sharing"]
    return action


def test_the_demo_takes_corral_plans_sharing_option_and_refuses_anything_else(capsys: pytest.CaptureFixture[str]) -> None:
    demo, plan = sharing_option("demo"), sharing_option("plan")
    assert (demo.choices, demo.default, demo.help) == (plan.choices, plan.default, plan.help) == (SHARING, "whole-rack", plan.help)
    assert main(["demo", "--sharing", "half"]) == 2
    assert "corral: error: argument --sharing: invalid choice: 'half'" in capsys.readouterr().err


def test_the_demos_sharing_reaches_the_planning_dags_param(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """corral demo --sharing -> run_demo -> run_pipeline -> corral_plan's conf, its Param 'sharing' (no cluster: run_demo and
    Airflow are stand-ins)."""
    asked: list[str] = []

    def run_demo(home: Path, cluster_json: Path | None, scenario: str, step: object, sharing: str) -> None:
        asked.append(sharing)
        raise InputError("stand-in")
    monkeypatch.setattr(cli_pipeline, "run_demo", run_demo)
    assert main(["demo", "--home", str(tmp_path), "--sharing", "slots"]) == 2 and main(["demo", "--home", str(tmp_path)]) == 2
    assert asked == ["slots", "whole-rack"]

    class Airflow:
        confs: dict[str, dict[str, Any]] = {}

        def migrate(self) -> None:
            pass

        def test_dag(self, dag_id: str, conf: dict[str, Any]) -> None:
            self.confs[dag_id] = conf
    monkeypatch.setattr(demo, "latest_summary", lambda settings: {})
    settings = PipelineSettings(home=tmp_path)
    demo.run_pipeline(Airflow(), settings, demo.today(), "batch", sharing="slots")  # type: ignore[arg-type]
    conf = Airflow.confs["corral_plan"]
    assert conf["sharing"] == "slots" and conf["scenario"] == "batch"
