"""``corral testbed up|down|status|exec|latency``: the embedded cluster on an emulated oversubscribed network
(a private network namespace shaped with tc; docs/testbed.md)."""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from pathlib import Path

from corral_yarn.cli.types import non_negative_float, options_for_fields, positive_float, positive_int
from corral_yarn.errors import InputError
from corral_yarn.io import write_atomic
from corral_yarn.nomora import latency
from corral_yarn.testbed import control, cpu, experiment
from corral_yarn.testbed.shaping import Network


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("testbed", help="the embedded cluster on a shaped, oversubscribed two-tier network (root)",
                              description="Bring up, inspect, use and bring down the shaped testbed: the embedded cluster in "
                                          "the network namespace 'corral-testbed' (another --home gets a namespace of its own), whose racks' uplinks to the core are held "
                                          "to (nodes x node rate) / O by tc (docs/testbed.md).")
    sub = p.add_subparsers(dest="testbed_command", metavar="ACTION", required=True)
    up = sub.add_parser("up", help="create the namespace, shape it, measure the shaping, start the cluster inside")
    up.add_argument("--racks", type=positive_int, default=3, help="racks (default 3)")
    up.add_argument("--nodes-per-rack", type=positive_int, default=2, help="workers per rack (default 2)")
    up.add_argument("--node-mbit", type=positive_float, default=100.0, help="NIC rate of a node in Mbit/s (default 100)")
    up.add_argument("--oversubscription", type=positive_float, default=5.0, help="core oversubscription O >= 1 (default 5, the thesis testbed)")
    up.add_argument("--node-cpus", type=non_negative_float, default=None, metavar="CORES",
                    help="cores each node's containers may use (a CFS quota per node; default: this machine's cores / nodes; "
                         "0: no per-node quota, all nodes share the machine's cores)")
    up.add_argument("--rack-cpus", metavar="RACK=CORES,...",
                    help="instead of --node-cpus: the cores of each rack's nodes, every rack named, e.g. a=0.6,b=0.2,c=0.2; racks of "
                         "equal cores form a node class, and HOME/cluster-spec.json tells the planner the classes (docs/testbed.md)")
    up.add_argument("--timeout", type=positive_float, default=300.0, help="seconds to wait for a healthy cluster (default 300)")
    up.set_defaults(func=_up)
    down = sub.add_parser("down", help="stop the cluster and delete the namespace with its shaping")
    down.set_defaults(func=_down)
    status = sub.add_parser("status", help="JSON: the shaping, the cluster's health, bytes per rack pair so far")
    status.set_defaults(func=_status)
    run = sub.add_parser("exec", help="run a command inside the namespace (CORRAL_CLUSTER_JSON names its cluster)")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    run.set_defaults(func=_exec)
    mesh = sub.add_parser("latency", help="measure the round trips between the workers (a probe mesh) as a latency matrix")
    mesh.add_argument("--by", choices=("host", "rack"), default="rack",
                         help="host pairs (NodeManager addresses) or rack pairs (the largest between their hosts; default)")
    mesh.add_argument("--rounds", type=positive_int, default=20, help="TCP handshakes per pair, the median counts (default 20)")
    mesh.add_argument("--out", type=Path, help="write it as .csv (what corral plan --latency and the RM's latency file read) or .json")
    mesh.set_defaults(func=_latency)
    for action in (up, down, status, run, mesh):
        action.add_argument("--home", type=Path, default=control.DEFAULT_HOME, metavar="DIR",
                            help=f"testbed state directory (default {control.DEFAULT_HOME})")


def _up(args: argparse.Namespace) -> int:
    net = Network(args.racks, args.nodes_per_rack, args.node_mbit, args.oversubscription)
    rack_cpus = None
    if args.rack_cpus is not None:
        if args.node_cpus is not None:
            raise InputError("give --rack-cpus or --node-cpus, not both")
        with options_for_fields({"rack_cpus": "--rack-cpus"}):
            rack_cpus = cpu.parse_rack_cpus(args.rack_cpus, net.racks)
    node_cpus = None if rack_cpus else cpu.even_share(net.racks * net.nodes_per_rack) if args.node_cpus is None else args.node_cpus or None
    state = control.up(net, args.home, control.namespace_of(args.home), timeout_s=args.timeout, node_cpus=node_cpus, rack_cpus=rack_cpus)
    description = json.loads(Path(state["cluster_json"]).read_text())
    spec_path = args.home / "cluster-spec.json"
    write_atomic(spec_path, experiment.cluster_spec(description, net, rack_cpus).model_dump_json(indent=2) + "\n")
    shaping = state["shaping"]
    cores = (f"{node_cpus:g} cores" if node_cpus else "shared") if rack_cpus is None else \
        ", ".join(f"rack {rack} {c:g} cores (class {state['node_classes'][rack]})" for rack, c in rack_cpus.items())
    print(f"testbed up: {net.racks} racks x {net.nodes_per_rack} nodes, node {net.node_mbit_s:g} Mbit/s, O={net.oversubscription:g}, "
          f"uplink {net.uplink_mbit_s:g} Mbit/s configured; measured cross-rack {shaping['measured_cross_rack_mbit_s']:g} Mbit/s, "
          f"in-rack {shaping.get('measured_in_rack_mbit_s', float('nan')):g} Mbit/s; "
          f"CPU per node: {cores}; cluster: {state['cluster_json']}; planner's cluster spec: {spec_path}")
    return 0


def _on_testbed(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command on a testbed that is up: without one, the error names --home (where it looked)."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except control.NoTestbedState as exc:
            raise InputError(str(exc), field="--home") from None
    return run


@_on_testbed
def _latency(args: argparse.Namespace) -> int:
    if args.out and args.out.suffix.lower() not in (".csv", ".json"):
        raise InputError(f"--out must end in .csv or .json, got {args.out.name!r}")
    state = control.load_state(args.home)
    net = Network(**state["network"])
    matrix = control.measure_latency(net, state["namespace"], args.rounds)
    matrix = latency.by_rack(matrix, net.rack_of()) if args.by == "rack" else matrix
    if args.out:
        write_atomic(args.out, latency.to_csv(matrix) if args.out.suffix.lower() == ".csv" else latency.to_json(matrix) + "\n")
    print(latency.to_json(matrix))
    return 0


def _down(args: argparse.Namespace) -> int:
    existed = control.down(args.home, control.namespace_of(args.home))
    print("testbed down" if existed else "no testbed was up; cleaned up")
    return 0


@_on_testbed
def _status(args: argparse.Namespace) -> int:
    print(json.dumps(control.status(args.home), indent=2))
    return 0


@_on_testbed
def _exec(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise InputError("testbed exec: no command given (corral testbed exec -- CMD ...)")
    return control.exec_command(command, args.home)
