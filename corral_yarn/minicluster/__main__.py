"""``python -m corral_yarn.minicluster start|status|stop|control`` (see docs/minicluster.md)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from corral_yarn.errors import InputError
from corral_yarn.minicluster.control import control
from corral_yarn.minicluster.launcher import (
    DEFAULT_BASE_DIR,
    DEFAULT_TARGET,
    SCHEDULERS,
    MiniClusterError,
    StartOptions,
    cluster_status,
    load_description,
    start_cluster,
    stop_cluster,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m corral_yarn.minicluster", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="start the cluster in the background; returns once it is healthy")
    start.add_argument("--racks", type=int, default=3, help="number of racks (default 3)")
    start.add_argument("--nodes-per-rack", type=int, default=2, help="workers per rack (default 2)")
    start.add_argument("--base-dir", type=Path, default=DEFAULT_BASE_DIR, help="state and logs (default %(default)s)")
    start.add_argument("--out", type=Path, default=None, help="description JSON (default BASE_DIR/cluster.json)")
    start.add_argument("--java-patch-target", type=Path, default=DEFAULT_TARGET, help="java_patch/target of a built java_patch")
    start.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for health (default 300)")
    start.add_argument("--container-preload", type=Path, default=None, help="a shared library every container preloads (LD_PRELOAD; the testbed's shim)")
    start.add_argument("--scheduler", choices=sorted(SCHEDULERS), default="corral",
                       help="the ResourceManager's scheduler: corral (default) or capacity, stock YARN's, for comparisons")
    start.add_argument("--secure", action="store_true",
                       help="Kerberos: a KDC, keytabs for every daemon, SPNEGO on WebHDFS and the REST APIs (docs/minicluster.md)")
    for name in ("status", "stop"):
        command = sub.add_parser(name, help=f"{name} the cluster described by --out")
        command.add_argument("--out", type=Path, default=DEFAULT_BASE_DIR / "cluster.json", help="description JSON (default %(default)s)")
    channel = sub.add_parser("control", help="send one command to a running cluster's control channel (e.g. stop-datanode HOST)")
    channel.add_argument("--description", type=Path, default=DEFAULT_BASE_DIR / "cluster.json", help="description JSON (default %(default)s)")
    channel.add_argument("words", nargs="+", metavar="COMMAND [ARG ...]",
                         help="stop-nodemanager|start-nodemanager|stop-datanode|start-datanode HOST, restart-resourcemanager, restart-namenode")
    return parser


def _control(description_path: Path, words: list[str]) -> int:
    try:
        description = load_description(description_path.resolve())
    except MiniClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        detail = control(description, words[0], *words[1:])
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"ok {detail}".rstrip())
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    args = _parser().parse_args(argv)
    try:
        if args.command == "control":
            return _control(args.description, args.words)
        if args.command == "start":
            options = StartOptions(
                args.racks, args.nodes_per_rack, args.base_dir, args.out, args.java_patch_target, args.timeout,
                container_preload=args.container_preload, scheduler=args.scheduler, secure=args.secure,
            )
            description = start_cluster(options)
            print(f"cluster healthy in {description['startup_ms'] / 1000:.1f} s; description: {options.description_path}")
        elif args.command == "status":
            print(json.dumps(cluster_status(args.out.resolve()), indent=2))
        else:
            stopped = stop_cluster(args.out.resolve())
            print("cluster stopped" if stopped else "cluster was not running; cleaned up")
    except MiniClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
