"""``corral demo`` (the whole pipeline on the embedded cluster), ``corral airflow-connections`` and
``corral pipeline-lock`` (the periods' run locks on HDFS) (docs/cli.md; design in docs/pipeline.md)."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from corral_yarn.cli.cluster import add_cluster_options, cluster_from_args
from corral_yarn.cli.plan import add_sharing_option, plan_summary
from corral_yarn.cluster.tags import period_id
from corral_yarn.errors import InputError
from corral_yarn.io import load_cluster, load_plan, parse_time
from corral_yarn.minicluster.launcher import load_description
from corral_yarn.pipeline import lock
from corral_yarn.pipeline.connections import connection_env
from corral_yarn.pipeline.demo import DemoPaths, run_demo
from corral_yarn.pipeline.planning import CLUSTER, PLAN
from corral_yarn.cli.types import positive_float
from corral_yarn.cluster.connect import Cluster
from corral_yarn.pipeline.demo_workload import DEMO_JOBS, MIB
from corral_yarn.report.html import fmt_bytes, fmt_percent, fmt_seconds
from corral_yarn.testbed import control as testbed
from corral_yarn.testbed import cpu
from corral_yarn.testbed.experiment import SCHEDULERS, TestbedJob, run, write_input
from corral_yarn.testbed.shaping import Network

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
    add_sharing_option(p)
    p.add_argument("--cluster-json", type=Path, metavar="FILE",
                   help="use the running cluster this description names instead of starting one (left running)")
    p.add_argument("--compare", action="store_true",
                   help="instead: run the demo's day on the shaped testbed (root) under Corral's plan and under stock Yarn-CS, "
                        "and print both side by side (docs/testbed.md)")
    p.add_argument("--node-mbit", type=positive_float, default=8.0, help="with --compare: node NIC rate, Mbit/s (default 8)")
    p.add_argument("--oversubscription", type=positive_float, default=5.0, help="with --compare: core oversubscription O (default 5)")
    p.set_defaults(func=_run_demo)

    p = subparsers.add_parser("airflow-connections", help="print the Airflow Connections of a cluster as AIRFLOW_CONN_* exports",
                              description="Print 'export AIRFLOW_CONN_CORRAL_*=...' lines for the WebHDFS, ResourceManager and "
                                          "JobHistory Connections the DAGs read, from a cluster description JSON.")
    p.add_argument("--cluster-json", type=Path, default=DEMO_HOME / "minicluster" / "cluster.json", metavar="FILE",
                   help="cluster description (default %(default)s)")
    p.set_defaults(func=_print_connections)

    p = subparsers.add_parser("pipeline-lock", help="show or break the locks that keep one pipeline run per period (on HDFS)",
                              description="Each pipeline run of a period holds <plans-dir>/locks/<period>.lock on HDFS (docs/pipeline.md, "
                                          "'One run per period'). 'show' lists them with their holder and heartbeat age; 'break' "
                                          "deletes one whose run is gone.")
    commands = p.add_subparsers(dest="lock_command", required=True, metavar="{show,break}")
    for name, help_ in (("show", "list the period locks, their holders and whether they are stale (JSON)"),
                        ("break", "delete a period's lock (its holder is printed); the next run of the period takes it")):
        c = commands.add_parser(name, help=help_)
        add_cluster_options(c)
        c.add_argument("--plans-dir", default="/corral/plans", help="HDFS directory of the published plans (default %(default)s)")
        if name == "break":
            c.add_argument("period", type=_period, help="the period: its id (20261125T000000Z) or its start (ISO 8601)")
            c.add_argument("--run-id", help="break it only if this run holds it (<dag id>/<run id>)")
        c.set_defaults(func=_lock_show if name == "show" else _lock_break)


def _print_connections(args: argparse.Namespace) -> int:
    path = args.cluster_json.resolve()
    for name, value in connection_env(load_description(path), source=str(path)).items():
        print(f"export {name}='{value}'")
    return 0


def _period(text: str) -> str:
    """A period id from the id itself or the period's start time."""
    try:
        return period_id(parse_time(text))
    except InputError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a period id like 20261125T000000Z nor an ISO 8601 time") from None


def _lock_show(args: argparse.Namespace) -> int:
    print(json.dumps(lock.list_locks(cluster_from_args(args).hdfs, args.plans_dir), indent=2, default=str))
    return 0


def _lock_break(args: argparse.Namespace) -> int:
    holder = lock.break_lock(cluster_from_args(args).hdfs, args.plans_dir, args.period, args.run_id)
    print(json.dumps({"broken": lock.lock_path(args.plans_dir, args.period), "holder": json.loads(holder.model_dump_json())}, indent=2))
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    if args.compare:
        return _compare(args)
    steps = len(DEMO_STEPS) - (0 if args.cluster_json is None else 2)
    with tqdm(total=steps, desc="corral demo", unit="step", disable=None) as bar:
        def step(what: str) -> None:
            bar.set_postfix_str(what)
            bar.update()

        result = run_demo(args.home, args.cluster_json, args.scenario, step, args.sharing)
    print(demo_summary(result.summary, result.settings.home, result.paths, max(result.step_ends.values())))
    return 0


def _compare(args: argparse.Namespace) -> int:
    """The demo's four jobs (their true sizes, batch) on the testbed, Corral then Yarn-CS; one table."""
    jobs = [TestbedJob(j.key, j.program, j.input_bytes, MIB, j.reduces, 0.0) for j in DEMO_JOBS]  # type: ignore[arg-type]
    net = Network(node_mbit_s=args.node_mbit, oversubscription=args.oversubscription)
    home = args.home / "testbed"
    node_cpus = cpu.even_share(net.racks * net.nodes_per_rack)  # every node its own share of the cores
    results = []
    with tqdm(total=2 + len(SCHEDULERS), desc="corral demo --compare", unit="step", disable=None) as bar:
        state = testbed.up(net, home, node_cpus=node_cpus)
        bar.update()
        try:
            description = json.loads(Path(state["cluster_json"]).read_text())
            with tempfile.TemporaryDirectory() as tmp:
                inputs = {j.name: write_input(j, Path(tmp), 0) for j in jobs}
                for scheduler in SCHEDULERS:
                    bar.set_postfix_str(scheduler)
                    results.append(testbed.in_namespace(state["namespace"], lambda: run(  # noqa: B023
                        Cluster.from_description(description, progress=False), description, net, state["namespace"], jobs,
                        scheduler, "batch", inputs, f"demo-compare-{scheduler}-{int(time.time())}", node_cpus=node_cpus)))
                    bar.update()
        finally:
            testbed.down(home)
            bar.update()
    print(compare_summary(results, net))
    return 0


def compare_summary(results: list[dict[str, Any]], net: Network) -> str:
    """Makespan, median JCT and cross-rack bytes per scheduler, side by side, and Corral's ratios."""
    by = {r["scheduler"]: r for r in results}
    lines = [f"The demo's day on the testbed: {net.racks} racks x {net.nodes_per_rack} nodes, node {net.node_mbit_s:g} Mbit/s, "
             f"O={net.oversubscription:g} (uplink {net.uplink_mbit_s:g} Mbit/s); batch, all jobs at t=0.", "",
             f"{'':22s} {'makespan':>10s} {'median JCT':>11s} {'cross-rack':>12s}"]
    for scheduler, r in by.items():
        lines.append(f"{scheduler:22s} {fmt_seconds(r['makespan_s']):>10s} {fmt_seconds(r['median_jct_s']):>11s} "
                     f"{fmt_bytes(r['cross_rack_bytes']):>12s}")
    if {"corral", "yarn-cs"} <= by.keys():
        c, y = by["corral"], by["yarn-cs"]
        lines.append(f"{'corral / yarn-cs':22s} {c['makespan_s'] / y['makespan_s']:>10.2f} {c['median_jct_s'] / y['median_jct_s']:>11.2f} "
                     f"{c['cross_rack_bytes'] / max(y['cross_rack_bytes'], 1):>12.2f}")
    return "\n".join(lines)


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
