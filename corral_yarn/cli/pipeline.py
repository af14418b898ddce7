"""``corral demo`` (the whole pipeline on the embedded cluster) and ``corral airflow-connections``
(docs/cli.md; design in docs/pipeline.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tqdm import tqdm

from corral_yarn.cli.plan import plan_summary
from corral_yarn.io import load_cluster, load_plan
from corral_yarn.minicluster.launcher import load_description
from corral_yarn.pipeline.connections import connection_env
from corral_yarn.pipeline.demo import DemoPaths, run_demo
from corral_yarn.pipeline.planning import CLUSTER, PLAN
from corral_yarn.report.html import fmt_percent

DEMO_COMMAND = "demo"
DEMO_HOME = Path(".corral")
DEMO_STEPS = ("cluster started", "workload prepared", "airflow database", "corral_plan", "corral_run", "cluster stopped")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the pipeline demo and ``airflow-connections``."""
    p = subparsers.add_parser(DEMO_COMMAND, help="embedded Hadoop cluster + Airflow pipeline end to end on a bundled recurring workload",
                              description="Start the embedded cluster, run the planning and run DAGs with 'airflow dags test' on the "
                                          "bundled workload (two weeks of generated history), print the report's path and the "
                                          "locality figures, and stop the cluster.")
    p.add_argument("--home", type=Path, default=DEMO_HOME, metavar="DIR", help=f"state directory (default {DEMO_HOME})")
    p.add_argument("--scenario", choices=["batch", "online"], default="batch", help="planning scenario (default batch)")
    p.add_argument("--cluster-json", type=Path, metavar="FILE",
                   help="use the running cluster this description names instead of starting one (left running)")
    p.set_defaults(func=_run_demo)

    p = subparsers.add_parser("airflow-connections", help="print the Airflow Connections of a cluster as AIRFLOW_CONN_* exports",
                              description="Print 'export AIRFLOW_CONN_CORRAL_*=...' lines for the WebHDFS, ResourceManager and "
                                          "JobHistory Connections the DAGs read, from a cluster description JSON.")
    p.add_argument("--cluster-json", type=Path, default=DEMO_HOME / "minicluster" / "cluster.json", metavar="FILE",
                   help="cluster description (default %(default)s)")
    p.set_defaults(func=_print_connections)


def _print_connections(args: argparse.Namespace) -> int:
    for name, value in connection_env(load_description(args.cluster_json.resolve())).items():
        print(f"export {name}='{value}'")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    steps = len(DEMO_STEPS) - (0 if args.cluster_json is None else 2)
    with tqdm(total=steps, desc="corral demo", unit="step", disable=None) as bar:
        def step(what: str) -> None:
            bar.set_postfix_str(what)
            bar.update()

        result = run_demo(args.home, args.cluster_json, args.scenario, step)
    print(demo_summary(result.summary, result.settings.home, result.paths, max(result.step_ends.values())))
    return 0


def demo_summary(summary: dict[str, Any], home: Path, paths: DemoPaths, seconds: float) -> str:
    """What the demo did, where its report is, and every job's locality in its racks."""
    version = summary["version"]
    period = home / "periods" / version.split("-")[0]
    plan = load_plan(period / PLAN)
    lines = [
        f"Planned and ran {summary['planned']} recurring jobs ({summary['succeeded']} succeeded) in {seconds:.0f} s.",
        plan_summary(plan, len(load_cluster(period / CLUSTER).racks), "fast"),
        f"Plan: {(period / PLAN).resolve()}",
        f"Plan report: {(period / 'report' / 'index.html').resolve()}",
        f"Published plan (HDFS): {paths.plans_dir}/{version}/",
        f"Run records: {(home / 'records' / version).resolve()}/",
        "",
        f"{'job':40s} {'racks':18s} {'prio':>4s} {'containers in R_j':>18s} {'blocks with a replica in R_j':>29s}",
    ]
    for job in summary["jobs"]:
        loc = job["locality"]
        lines.append(f"{job['job']:40s} {','.join(job['racks']):18s} {job['priority']:4d} "
                     f"{loc['containers_in_racks']:>8d}/{loc['containers']:<3d}{fmt_percent(loc['container_share']):>6s} "
                     f"{loc['blocks_with_replica_in_racks']:>19d}/{loc['blocks']:<3d}{fmt_percent(loc['block_share']):>6s}")
    lines += ["", f"All jobs: {summary['containers_in_racks']}/{summary['containers']} containers "
                  f"({fmt_percent(summary['container_share'])}) and {summary['blocks_with_replica_in_racks']}/{summary['blocks']} "
                  f"blocks ({fmt_percent(summary['block_share'])}) inside their rack sets; "
                  f"{fmt_percent(summary['replica_share'])} of all replicas.",
              f"Airflow logs: {paths.logs.resolve()}/ (AIRFLOW_HOME {paths.airflow_home.resolve()})",
              "Summary: " + json.dumps({k: summary[k] for k in ("planned", "succeeded", "container_share", "block_share", "replica_share")})]
    return "\n".join(lines)
