"""``corral topology``, ``corral upload``, ``corral submit``, ``corral status`` and ``corral kill``:
carrying out a plan on a Hadoop cluster over its HTTP interfaces (docs/cli.md; design in
docs/cluster-adapters.md)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from corral_yarn.cli.types import positive_float, positive_int
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.connect import Cluster, Endpoints
from corral_yarn.cluster.grants import period_from_now, read_secret
from corral_yarn.cluster.rm import GRANT_HOURS
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.cluster.tags import CorralTags, check_tag_value, plan_hints
from corral_yarn.cluster.upload import local_files
from corral_yarn.contracts import MAX_OVERSUBSCRIPTION
from corral_yarn.errors import InputError
from corral_yarn.io import load, load_plan, save, write_atomic

DEFAULT_CLUSTER_JSON = ".corral/minicluster/cluster.json"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("topology", help="racks, DataNodes and NodeManagers of a cluster, and a ClusterSpec for the planner")
    add_cluster_options(p)
    p.add_argument("--out", type=Path, help="write the ClusterSpec JSON here")
    p.add_argument("--nic-gbps", type=positive_float, default=10.0, help="NIC bandwidth per machine in Gbit/s (default 10)")
    p.add_argument("--disk-mbps", type=positive_float, default=100.0, help="disk bandwidth per machine in MB/s (default 100)")
    p.add_argument("--oversubscription", type=positive_float, default=5.0, help="rack-to-core oversubscription O > 1 (default 5)")
    p.add_argument("--task-memory-mb", type=positive_int, default=1024, help="memory of one task container, for slots per machine (default 1024)")
    p.set_defaults(func=_topology)

    p = subparsers.add_parser("upload", help="upload a job's input with one replica of every block in its racks R_j")
    add_cluster_options(p)
    _add_hints_options(p)
    p.add_argument("local", type=Path, help="local file or directory")
    p.add_argument("target", help="HDFS path to create (must not exist unless --overwrite)")
    p.add_argument("--block-size", type=positive_int, help="HDFS block size in bytes (default: the NameNode's dfs.blocksize)")
    p.add_argument("--replication", type=positive_int, help="replication factor (default: the NameNode's dfs.replication)")
    p.add_argument("--threads", type=positive_int, default=4, help="files written in parallel (default 4)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing target")
    p.add_argument("--report", type=Path, help="also write the placement report JSON here")
    p.set_defaults(func=_upload)

    p = subparsers.add_parser("submit", help="submit a MapReduce job or a YARN application tagged with R_j at priority p_j")
    add_cluster_options(p)
    _add_hints_options(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--mapreduce", type=Path, help="MapReduce job description JSON (docs/cluster-adapters.md)")
    what.add_argument("--yarn-app", type=Path, help="YARN application description JSON (AM container spec)")
    p.add_argument("--priority", type=int, help="YARN priority (default: the plan's p_j, or 0)")
    p.add_argument("--queue", default="default", help="YARN queue (default 'default')")
    p.add_argument("--latency", metavar="FUNCTION",
                   help="tag it latency-sensitive, corral-latency:FUNCTION (e.g. memcached; default: the plan's latency_function): "
                        "with a latency file on the RM, R_j's nodes nearest its AM go first (docs/rack-tags.md)")
    p.add_argument("--wait", action="store_true", help="wait until the application ends; exit 2 unless it succeeded")
    p.add_argument("--timeout", type=positive_float, default=3600.0, help="seconds to wait with --wait (default 3600)")
    p.add_argument("--grant-hours", type=positive_float, default=GRANT_HOURS,
                   help=f"with a grant secret: the planner grant is valid for this many hours from now (default {GRANT_HOURS:g})")
    p.set_defaults(func=_submit)

    p = subparsers.add_parser("status", help="state of a YARN application; --wait to wait for its end")
    add_cluster_options(p)
    p.add_argument("app_id", help="application id, e.g. application_1700000000000_0001")
    p.add_argument("--wait", action="store_true", help="wait until it ends; exit 2 unless it succeeded")
    p.add_argument("--timeout", type=positive_float, default=3600.0, help="seconds to wait with --wait (default 3600)")
    p.set_defaults(func=_status)

    p = subparsers.add_parser("kill", help="kill a YARN application and wait until it has ended")
    add_cluster_options(p)
    p.add_argument("app_id", help="application id")
    p.set_defaults(func=_kill)


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cluster (a cluster description JSON, or the addresses)")
    g.add_argument("--cluster", type=Path, help=f"cluster description JSON (default $CORRAL_CLUSTER_JSON or {DEFAULT_CLUSTER_JSON})")
    g.add_argument("--rm", help="ResourceManager web address, e.g. http://rm:8088")
    g.add_argument("--webhdfs", help="NameNode web address, e.g. http://nn:9870")
    g.add_argument("--jobhistory", help="JobHistory server web address, e.g. http://jhs:19888")
    g.add_argument("--user", help="Hadoop user for requests (default: whom the ResourceManager takes us for)")
    g.add_argument("--grant-secret-file", type=Path,
                   help="file with the secret the RM checks planner grants with (default: the description's grant_secret_file; none: unsigned)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_hints_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Corral hints (thesis §4.1): from a plan, or given by hand")
    g.add_argument("--plan", type=Path, help="plan JSON from 'corral plan'")
    g.add_argument("--job", help="the job's name in the plan (with --plan), or the name for the tags")
    g.add_argument("--racks", help="rack set R_j by hand, comma-separated, e.g. /rack-a,/rack-c")
    g.add_argument("--plan-id", default="adhoc", help="plan id for the tags when no --plan is given (default 'adhoc')")


def cluster_from_args(args: argparse.Namespace) -> Cluster:
    if args.rm or args.webhdfs:
        if not (args.rm and args.webhdfs):
            raise InputError("give both --rm and --webhdfs (or a --cluster description)")
        endpoints = Endpoints(webhdfs=args.webhdfs, resourcemanager=args.rm, jobhistory=args.jobhistory)
    else:
        path = args.cluster or Path(os.environ.get("CORRAL_CLUSTER_JSON") or DEFAULT_CLUSTER_JSON)
        endpoints = Endpoints.from_cluster_json(path)
    threads = getattr(args, "threads", 4)
    secret = read_secret(args.grant_secret_file) if args.grant_secret_file else None
    return Cluster(endpoints, user=args.user, threads=threads, progress=not args.no_progress, grant_secret=secret)


def _hints(args: argparse.Namespace) -> tuple[CorralTags, int]:
    if args.plan:
        if not args.job:
            raise InputError("--plan needs --job, the job's name in the plan")
        if args.racks:
            raise InputError("give --plan or --racks, not both")
        return plan_hints(load_plan(args.plan), args.job)
    if not (args.racks and args.job):
        raise InputError("give --plan and --job, or --racks and --job")
    return CorralTags(args.plan_id, args.job, tuple(r.strip() for r in args.racks.split(",") if r.strip())), 0


def _print(doc: Any) -> None:
    print(json.dumps(doc, indent=2, default=str))


def _topology(args: argparse.Namespace) -> int:
    if not 1 < args.oversubscription <= MAX_OVERSUBSCRIPTION:  # ClusterSpec's range of O, checked before the cluster is asked
        raise InputError(f"must be > 1 and <= {MAX_OVERSUBSCRIPTION:g}, got {args.oversubscription:g}", field="--oversubscription")
    topo = cluster_from_args(args).topology()
    spec = topo.cluster_spec("discovered", args.nic_gbps * 1.25e8, args.disk_mbps * 1e6, args.oversubscription, args.task_memory_mb)
    for d in topo.disagreements:
        print(f"corral: warning: {d}", file=sys.stderr)
    if args.out:
        save(spec, args.out)
    _print({"racks": {r.name: r.machines for r in spec.racks}, "datanodes": len(topo.datanodes),
            "nodemanagers": len(topo.nodemanagers), "disagreements": list(topo.disagreements)})
    return 0


def _upload(args: argparse.Namespace) -> int:
    tags, _ = _hints(args)
    cluster = cluster_from_args(args)
    try:
        local_files(args.local)  # a missing LOCAL fails before the cluster is asked
    except InputError as exc:
        raise InputError(str(exc), field="local") from None
    topo = cluster.topology()
    report = cluster.uploader(topo).upload(args.local, args.target, topo.canonical_racks(list(tags.racks)),
                                           block_bytes=args.block_size, replication=args.replication, overwrite=args.overwrite)
    doc = {**dataclasses.asdict(report), "share_in_rack_set": report.share_in_rack_set, "racks_spanned": report.racks_spanned}
    if args.report:
        write_atomic(args.report, json.dumps(doc, indent=2) + "\n")
    _print(doc)
    return 0


def _submit(args: argparse.Namespace) -> int:
    tags, planned_priority = _hints(args)
    if args.latency is not None:
        check_tag_value("--latency", args.latency)
        tags = dataclasses.replace(tags, latency=args.latency)
    priority = planned_priority if args.priority is None else args.priority
    job = load(MapReduceJob, args.mapreduce) if args.mapreduce else load(YarnApp, args.yarn_app)  # a bad file fails before the cluster is asked
    cluster = cluster_from_args(args)
    period = period_from_now(datetime.now(UTC), args.grant_hours)
    if isinstance(job, MapReduceJob):
        report = cluster.mapreduce().submit(job, tags, priority, args.queue, grant_period=period)
    else:
        default_fs = cluster.rm.configuration().get("fs.defaultFS", ("", ""))[0]
        submission = job.submission(cluster.hdfs, default_fs, tags, priority, args.queue)
        report = cluster.rm.submit(dataclasses.replace(submission, grant_period=period))
    if args.wait:
        report = cluster.rm.wait(report.app_id, timeout_s=args.timeout)
    _print(dataclasses.asdict(report))
    return 0


def _status(args: argparse.Namespace) -> int:
    rm = cluster_from_args(args).rm
    report = rm.wait(args.app_id, timeout_s=args.timeout) if args.wait else rm.application(args.app_id)
    _print(dataclasses.asdict(report))
    return 0


def _kill(args: argparse.Namespace) -> int:
    rm = cluster_from_args(args).rm
    _print(dataclasses.asdict(rm.kill(args.app_id)))
    return 0
