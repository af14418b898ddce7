"""``corral model fit`` and ``corral model error``: MRCute+ fitted on the runs in a history store, and
each run's predicted latency against its actual one (docs/model.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np

from corral_yarn.cli.estimator import _history
from corral_yarn.cli.types import positive_int
from corral_yarn.contracts import ClusterSpec, MRCutePlus
from corral_yarn.errors import InputError
from corral_yarn.io import load_cluster, save
from estimator.fit import JobError, ObservedRun, fit_cluster, model_errors, observed_runs


def _observed(args: argparse.Namespace, cluster: ClusterSpec) -> tuple[list[ObservedRun], Counter[str]]:
    observed, skipped = observed_runs(_history(args.store).runs(), cluster)
    if not observed:
        raise InputError(f"--store: no run in {args.store} can be used ({dict(skipped) or 'the store is empty'})")
    return observed, skipped


def _model_name(cluster: ClusterSpec) -> str:
    return "paper" if cluster.model == "paper" else "mrcute+"


def _mean_abs(values: list[float]) -> float:
    return float(np.mean(np.abs(values)))


def summary(errors: list[JobError], cluster: ClusterSpec, skipped: Counter[str]) -> dict[str, object]:
    """The figures both commands print: the model, each run's predicted vs actual, mean |error|."""
    return {
        "model": cluster.model if cluster.model == "paper" else cluster.model.model_dump(mode="json"),
        "runs": len(errors),
        "skipped": dict(skipped),
        "mean_abs_error": {"paper": _mean_abs([e.paper_s / e.actual_s - 1 for e in errors]),
                           _model_name(cluster): _mean_abs([e.error for e in errors])},
        "jobs": [{**asdict(e), "error": e.error} for e in errors],
    }


def _print(result: dict[str, object], cluster: ClusterSpec, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    name = _model_name(cluster)
    print(f"model: {json.dumps(result['model'])}")
    print(f"{'run':<28} {'recurring job':<24} {'racks':>5} {'actual s':>10} {'paper s':>10} {name + ' s':>10} {'error':>8}")
    for e in result["jobs"]:  # type: ignore[attr-defined]
        print(f"{e['run_id'][:28]:<28} {e['recurring_key'][:24]:<24} {e['racks']:>5} {e['actual_s']:>10.1f} "
              f"{e['paper_s']:>10.1f} {e['model_s']:>10.1f} {e['error']:>+8.1%}")
    errors = result["mean_abs_error"]
    print(f"{result['runs']} runs; mean |error|: paper {errors['paper']:.1%}, {name} {errors[name]:.1%}"  # type: ignore[index]
          + (f"; skipped {result['skipped']}" if result["skipped"] else ""))


def _fit(args: argparse.Namespace) -> int:
    cluster = load_cluster(args.cluster)
    template = MRCutePlus(replication=args.replication, output_replicas_leave_racks=not args.replicas_in_racks)
    observed, skipped = _observed(args, cluster.model_copy(update={"model": template}))
    fitted = fit_cluster(observed, cluster, template)  # on node classes: a job start-up per class too
    save(fitted, args.out)
    _print(summary(model_errors(observed, fitted), fitted, skipped), fitted, args.json)
    return 0


def _error(args: argparse.Namespace) -> int:
    cluster = load_cluster(args.cluster)
    observed, skipped = _observed(args, cluster)
    _print(summary(model_errors(observed, cluster), cluster, skipped), cluster, args.json)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", required=True, metavar="DIR", help="history store of real runs (corral history ingest --jobhistory)")
    p.add_argument("--cluster", required=True, type=Path, metavar="FILE", help="the cluster spec the runs ran on")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of the table")


def register(subparsers: argparse._SubParsersAction) -> None:
    model = subparsers.add_parser("model", help="the latency model: fit MRCute+ on real runs, show its error per job")
    commands = model.add_subparsers(title="model commands", metavar="COMMAND", required=True)
    fit = commands.add_parser("fit", help="fit MRCute+ by least squares on the runs of a history store; write the cluster spec with it")
    _common(fit)
    fit.add_argument("--out", required=True, type=Path, metavar="FILE", help="the cluster spec with the fitted model (may be --cluster itself)")
    fit.add_argument("--replication", type=positive_int, default=3, metavar="N", help="HDFS replicas of each output block (default 3)")
    fit.add_argument("--replicas-in-racks", action="store_true", help="output replicas 2.. stay inside R_j (default: they leave it, as HDFS places them)")
    fit.set_defaults(func=_fit)
    error = commands.add_parser("error", help="each run's latency predicted by the thesis model and the cluster's model against the actual one")
    _common(error)
    error.set_defaults(func=_error)
