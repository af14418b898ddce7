"""Corral against Yarn-CS on real Hadoop, on the shaped testbed (issue 12; docs/testbed.md).

Brings the testbed up (root: a private network namespace shaped by tc), runs the same W1/W3-shaped
MapReduce workload (same jobs, bytes, arrivals and seeds) under Yarn-CS and under Corral's plan, batch
and online, at the oversubscription O and again at O=1 (the control: a non-blocking core), runs the
same workload through the simulator, writes an HTML report with its charts, brings the testbed down,
and prints one JSON line. Ratios are Corral / Yarn-CS, medians over seeds.

    .venv/bin/python benchmarks/bench_testbed.py --quick     # 1 seed, a smaller workload: ~25 min
    .venv/bin/python benchmarks/bench_testbed.py             # 3 seeds
    .venv/bin/python benchmarks/bench_testbed.py --quick --ablation --seeds 3   # each planner change alone

``--ablation`` (docs/planner.md "Ablation on the testbed") runs, on the same jobs and seeds, Yarn-CS and Corral
planned as the thesis does (paper MRCute, whole racks, thesis order), then with one change added at a time:
MRCute+ (fitted first on runs of a training seed outside the measured ones), slot-aware sharing, the
shortest-work online order.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from corral_yarn.cluster.connect import Cluster
from corral_yarn.contracts import ClusterSpec, LatencyModel, Workload
from corral_yarn.report import charts, html
from corral_yarn.sim.experiments import run_all
from corral_yarn.sim.run import RunSpec
from corral_yarn.errors import InputError
from corral_yarn.testbed import control, cpu, experiment
from corral_yarn.testbed.experiment import PlanChoice, Profile
from corral_yarn.testbed.shaping import Network
from estimator.fit import fit_job
from estimator.records import JobRun
from estimator.store import HistoryStore

SCENARIOS = ("batch", "online")
# Corral as the thesis plans (§3.1.2 MRCute, whole racks §4.3, thesis order), then one change added at a time.
ABLATION = ("corral-thesis", "+mrcute+", "+sharing", "+online-order")
TRAINING_SEED = 1000  # the ablation's MRCute+ is fitted on runs of this seed, never one it is measured on
LOG = logging.getLogger("bench_testbed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 seed and a smaller workload (~25 min)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds (default 3, or 1 with --quick)")
    parser.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0); seeds are consecutive")
    parser.add_argument("--node-mbit", type=float, default=8.0, help="NIC rate of a node, Mbit/s (default 8; see docs/testbed.md)")
    parser.add_argument("--oversubscription", type=float, default=5.0, help="O of the main runs (default 5)")
    parser.add_argument("--node-cpus", type=float, default=None, metavar="CORES",
                        help="cores of each node (a CFS quota per node; default: this machine's cores / nodes; 0: shared cores)")
    parser.add_argument("--no-control", action="store_true", help="skip the O=1 control runs")
    parser.add_argument("--output-replication", type=int, default=1, choices=(1, 2, 3), help="replication of job outputs (default 1)")
    parser.add_argument("--schedulers", nargs="+", default=list(experiment.SCHEDULERS),
                        choices=[*experiment.SCHEDULERS, *experiment.BASELINES],
                        help="schedulers to run (default yarn-cs corral; also localshuffle, shufflewatcher); yarn-cs is always run")
    parser.add_argument("--home", type=Path, default=Path(".corral/bench-testbed"), help="testbed state (default .corral/bench-testbed)")
    parser.add_argument("--report", type=Path, default=Path("out/bench_testbed"), help="HTML report directory (default out/bench_testbed)")
    parser.add_argument("--namespace", default=None, help="network namespace and CPU group name (default: corral-bench- and a digest of --home)")
    parser.add_argument("--ablation", action="store_true",
                        help="Yarn-CS, Corral as in the thesis, then + MRCute+, + slot sharing, + the new online order (no control, no report)")
    parser.add_argument("--model-spec", type=Path, default=None, metavar="FILE",
                        help="--ablation: take MRCute+ from this cluster spec instead of fitting it on a training seed's runs")
    parser.add_argument("--runs-out", type=Path, default=None, metavar="FILE", help="--ablation: write every run's figures and jobs (JSON) here")
    parser.add_argument("--profile-store", type=Path, default=None, metavar="STORE",
                        help="--ablation: Corral plans each recurring job from its profile in this history store (selectivities "
                             "and task rates of its earlier runs, thesis §3.1.2) instead of the workload's sizes and rates")
    parser.add_argument("--variants", nargs="+", default=list(ABLATION), choices=ABLATION, metavar="VARIANT",
                        help=f"--ablation: the Corral variants to run besides Yarn-CS (default all: {' '.join(ABLATION)})")
    args = parser.parse_args()
    args.variants = [v for v in ABLATION if v in args.variants]  # in the ablation's order
    if "+online-order" in args.variants and "+sharing" not in args.variants:
        parser.error("--variants: +online-order needs +sharing (its batch plan is the +sharing one)")
    try:
        args.profiles = profiles(args.profile_store) if args.profile_store else None
    except InputError as e:
        parser.error(str(e))
    args.namespace = args.namespace or control.namespace_for(args.home, "corral-bench")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    for noisy in ("hdfs", "corral_yarn.cluster", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    seeds = list(range(args.first_seed, args.first_seed + (args.seeds if args.seeds is not None else (1 if args.quick else 3))))
    args.schedulers = ["yarn-cs", *dict.fromkeys(s for s in args.schedulers if s != "yarn-cs")]
    started = time.perf_counter()
    main_net = Network(node_mbit_s=args.node_mbit, oversubscription=args.oversubscription)
    args.node_cpus = cpu.even_share(main_net.racks * main_net.nodes_per_rack) if args.node_cpus is None else args.node_cpus or None
    if args.ablation:
        print(json.dumps(_ablation(main_net, seeds, args, started)))
        return
    state = control.up(main_net, args.home, args.namespace, node_cpus=args.node_cpus)
    try:
        description = json.loads(Path(state["cluster_json"]).read_text())
        runs = {"main": _all_runs(main_net, main_net, state, description, seeds, args)}
        model_fit = _model_fit(description, main_net, args)
        throttled = cpu.throttled(args.namespace)
        if not args.no_control:
            control_net = Network(node_mbit_s=args.node_mbit, oversubscription=1.0)
            # The same plans on a non-blocking core (MRCute at O = 1 gives in-rack traffic no bandwidth, §3.1.2).
            runs["control_o1"] = _all_runs(control_net, main_net, state, description, seeds, args)
    finally:
        control.down(args.home, args.namespace)
    calibration = _calibration(description, main_net, seeds, args.quick, runs["main"], args.node_cpus,
                               args.home / "testbed-cluster-fitted.json")
    result = _summary(runs, state["shaping"], calibration, seeds, args, time.perf_counter() - started)
    result["model_fit"] = model_fit
    result["node_cpu_throttled_s"] = {node: t["throttled_s"] for node, t in throttled.items()}
    result["report"] = str(_report(runs, main_net, args.report, result))
    print(json.dumps(result))


def _all_runs(net: Network, plan_net: Network, state: dict[str, Any], description: dict[str, Any], seeds: list[int],
              args: argparse.Namespace) -> list[dict[str, Any]]:
    control.reshape(net, state["namespace"])
    variants = [(s, s, PlanChoice()) for s in args.schedulers]
    return [r for seed in seeds for scenario in SCENARIOS
            for r in _seed_runs(net, plan_net, state, description, seed, scenario, variants, args)]


Variant = tuple[str, str, PlanChoice]  # (name, scheduler, how Corral plans)


def _seed_runs(net: Network, plan_net: Network, state: dict[str, Any], description: dict[str, Any], seed: int, scenario: str,
               variants: list[Variant], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every variant on one seed's workload of ``scenario``, in alternating order over seeds."""
    namespace, results = state["namespace"], []
    jobs = experiment.workload(seed, scenario, quick=args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {j.name: experiment.write_input(j, Path(tmp), seed) for j in jobs}
        for name, scheduler, choice in variants if seed % 2 == 0 else list(reversed(variants)):
            tag = f"bench-o{net.oversubscription:g}-s{seed}-{scenario}-{name.strip('+')}-{int(time.time())}"
            LOG.info("O=%g seed %d %s %s ...", net.oversubscription, seed, scenario, name)
            figures = control.in_namespace(namespace, lambda: experiment.run(  # noqa: B023
                Cluster.from_description(description, progress=False), description, net, namespace, jobs,
                scheduler, scenario, inputs, tag, args.output_replication, plan_net, args.node_cpus, choice))  # noqa: B023
            figures.update(seed=seed, oversubscription=net.oversubscription, variant=name)
            LOG.info("  makespan %.1f s, median JCT %.1f s, mean JCT %.1f s, cross-rack %.1f MB", figures["makespan_s"],
                     figures["median_jct_s"], figures["mean_jct_s"], figures["cross_rack_bytes"] / 1e6)
            results.append(figures)
    return results


def _ablation_variants(model: LatencyModel, scenario: str, names: Sequence[str] = ABLATION,
                       profiles: Mapping[str, Profile] | None = None) -> list[Variant]:
    """Yarn-CS, then Corral with one change added at a time (those in ``names``); the online order changes nothing in batch."""
    steps = [("corral-thesis", PlanChoice("paper", "whole-rack", "thesis", profiles)), ("+mrcute+", PlanChoice(model, "whole-rack", "thesis", profiles)),
             ("+sharing", PlanChoice(model, "slots", "thesis", profiles)), ("+online-order", PlanChoice(model, "slots", "shortest-work", profiles))]
    return [("yarn-cs", "yarn-cs", PlanChoice()),
            *[(n, "corral", c) for n, c in steps if n in names and (scenario == "online" or n != "+online-order")]]


def _ablation(net: Network, seeds: list[int], args: argparse.Namespace, started: float) -> dict[str, Any]:
    """One testbed, every variant side by side on each seed; ratios to Yarn-CS seed by seed, medians over seeds."""
    state = control.up(net, args.home, args.namespace, node_cpus=args.node_cpus)
    try:
        description = json.loads(Path(state["cluster_json"]).read_text())
        control.reshape(net, args.namespace)
        model, fit = _ablation_model(net, state, description, args)
        runs = [r for seed in seeds for scenario in SCENARIOS
                for r in _seed_runs(net, net, state, description, seed, scenario, _ablation_variants(model, scenario, args.variants, args.profiles), args)]
    finally:
        control.down(args.home, args.namespace)
    table = {}
    for name in args.variants:
        batch_name = "+sharing" if name == "+online-order" else name  # the same plan in batch
        table[name] = {"batch_makespan": _variant_ratio(runs, batch_name, "batch", "makespan_s"),
                       "online_median_jct": _variant_ratio(runs, name, "online", "median_jct_s"),
                       "online_mean_jct": _variant_ratio(runs, name, "online", "mean_jct_s"),
                       "batch_cross_rack_bytes": _variant_ratio(runs, batch_name, "batch", "cross_rack_bytes"),
                       "online_cross_rack_bytes": _variant_ratio(runs, name, "online", "cross_rack_bytes")}
    absolute = {v: {sc: {k: round(statistics.median(r[k] for r in runs if r["variant"] == v and r["scenario"] == sc), 2)
                         for k in ("makespan_s", "median_jct_s", "mean_jct_s", "cross_rack_bytes")}
                    for sc in SCENARIOS if any(r["variant"] == v and r["scenario"] == sc for r in runs)}
                for v in ("yarn-cs", *args.variants)}
    if args.runs_out:
        args.runs_out.write_text(json.dumps({"runs": runs}))
    return {"benchmark": "testbed-ablation", "quick": args.quick, "seeds": seeds, "training_seed": None if args.model_spec else TRAINING_SEED,
            "job_specs": f"profiled from {args.profile_store}" if args.profile_store else "workload",
            "oversubscription": args.oversubscription, "node_mbit_s": args.node_mbit, "node_cpus": args.node_cpus,
            "ratios_vs_yarn_cs": table, "same_plan_as_previous": _same_plans(description, net, seeds, model, args), "absolute": absolute, "model_fit": fit, "shaping": state["shaping"],
            "goal": {"batch_makespan": "<= 0.85", "online_median_jct": "<= 0.65"},
            "wall_s": round(time.perf_counter() - started, 1), "load_average_1min_at_end": round(os.getloadavg()[0], 2)}


def _same_plans(description: dict[str, Any], net: Network, seeds: list[int], model: LatencyModel,
                args: argparse.Namespace) -> dict[str, dict[str, list[bool]]]:
    """Per Corral variant and scenario, per seed: whether its plan (racks and priorities) is the previous variant's,
    so a difference between the two rows is run-to-run noise."""
    spec = experiment.cluster_spec(description, net)
    same: dict[str, dict[str, list[bool]]] = {}
    for scenario in SCENARIOS:
        variants = [v for v in _ablation_variants(model, scenario, args.variants, args.profiles) if v[1] == "corral"]
        for seed in seeds:
            jobs = experiment.workload(seed, scenario, quick=args.quick)
            plans = [{k: (p.racks, p.priority) for k, p in experiment.placements(jobs, "corral", scenario, spec, args.node_cpus, choice)[0].items()}
                     for _, _, choice in variants]
            for (name, _, _), before, after in zip(variants[1:], plans, plans[1:]):
                same.setdefault(name, {}).setdefault(scenario, []).append(before == after)
    return same


def profiles(store: Path) -> dict[str, Profile]:
    """Each recurring job's profile fitted on its runs in ``store`` (estimator.fit.fit_job: the runs' selectivities
    and the median rate of their task samples), as the pipeline plans a job from its history."""
    if not store.is_dir():
        raise InputError(f"no history store at {store}", field="--profile-store")
    runs: dict[str, list[JobRun]] = {}
    for run in HistoryStore(store).runs():
        runs.setdefault(run.recurring_key, []).append(run)
    found = {key: fit_job(job_runs) for key, job_runs in runs.items()}
    return {key: Profile(p.map_selectivity, p.reduce_selectivity, p.map_rate_bytes_per_s, p.reduce_rate_bytes_per_s)
            for key, p in found.items() if None not in (p.map_selectivity, p.reduce_selectivity, p.map_rate_bytes_per_s, p.reduce_rate_bytes_per_s)}


def _variant_ratio(runs: list[dict[str, Any]], variant: str, scenario: str, key: str) -> float:
    """Median over seeds of the variant / Yarn-CS, seed by seed."""
    def pick(name: str) -> list[float]:
        return [r[key] for r in sorted(runs, key=lambda r: r["seed"]) if r["variant"] == name and r["scenario"] == scenario]
    return round(statistics.median(v / y for v, y in zip(pick(variant), pick("yarn-cs"))), 3)


def _ablation_model(net: Network, state: dict[str, Any], description: dict[str, Any],
                    args: argparse.Namespace) -> tuple[LatencyModel, dict[str, Any]]:
    """MRCute+ from --model-spec, or fitted on the training seed's Yarn-CS and thesis-Corral batch runs."""
    if args.model_spec:
        model = ClusterSpec.model_validate_json(args.model_spec.read_text()).model
        return model, {"from": str(args.model_spec), "model": model if model == "paper" else model.model_dump(mode="json")}
    variants = _ablation_variants("paper", "batch")[:2]
    LOG.info("fitting MRCute+ on seed %d's batch runs (%s)", TRAINING_SEED, ", ".join(v[0] for v in variants))
    _seed_runs(net, net, state, description, TRAINING_SEED, "batch", variants, args)
    shutil.rmtree(args.home / "history", ignore_errors=True)
    fit = _model_fit(description, net, args)
    if "error" in fit:
        raise SystemExit(f"bench_testbed: fitting MRCute+ failed: {fit['error']}")
    model = ClusterSpec.model_validate_json((args.home / "testbed-cluster-fitted.json").read_text()).model
    LOG.info("MRCute+: %s", fit)
    return model, fit


def _model_fit(description: dict[str, Any], net: Network, args: argparse.Namespace) -> dict[str, Any]:
    """MRCute+ fitted on the main runs' JobHistory records (in-sample), against the thesis model."""
    store, spec_path = args.home / "history", args.home / "testbed-cluster.json"
    (args.home / "testbed-cluster-fitted.json").unlink(missing_ok=True)  # never calibrate with an earlier run's fit
    spec_path.write_text(experiment.cluster_spec(description, net).model_dump_json(indent=2))
    cli = [sys.executable, "-m", "corral_yarn.cli"]
    control.run([*cli, "history", "ingest", "--jobhistory", description["jobhistory"], "--store", str(store)], args.namespace)
    fitted = control.run([*cli, "model", "fit", "--store", str(store), "--cluster", str(spec_path), "--out",
                          str(args.home / "testbed-cluster-fitted.json"), "--replication", str(args.output_replication), "--json"],
                         args.namespace, check=False)
    if fitted.returncode != 0:
        return {"error": fitted.stderr.strip()}
    doc = json.loads(fitted.stdout)
    return {"runs": doc.get("runs"), "mean_abs_error": doc.get("mean_abs_error"), "model": doc.get("model"), "in_sample": True}


def _pick(runs: list[dict[str, Any]], scheduler: str, scenario: str, key: str) -> list[float]:
    return [r[key] for r in runs if r["scheduler"] == scheduler and r["scenario"] == scenario]


def _ratio(runs: list[dict[str, Any]], scheduler: str, scenario: str, key: str) -> float:
    """Median over seeds of scheduler / Yarn-CS (seed by seed)."""
    mine, yarn = _pick(runs, scheduler, scenario, key), _pick(runs, "yarn-cs", scenario, key)
    return round(statistics.median(c / y for c, y in zip(mine, yarn)), 3)


def _ratios(runs: list[dict[str, Any]], scheduler: str = "corral") -> dict[str, float]:
    cross = [c / y for scenario in SCENARIOS for c, y in zip(_pick(runs, scheduler, scenario, "cross_rack_bytes"),
                                                               _pick(runs, "yarn-cs", scenario, "cross_rack_bytes"))]
    return {"batch_makespan": _ratio(runs, scheduler, "batch", "makespan_s"),
            "online_median_jct": _ratio(runs, scheduler, "online", "median_jct_s"),
            "online_mean_jct": _ratio(runs, scheduler, "online", "mean_jct_s"),
            "batch_median_jct": _ratio(runs, scheduler, "batch", "median_jct_s"),
            "cross_rack_bytes": round(statistics.median(cross), 3)}


def _all_ratios(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {f"{s}_vs_yarn_cs": _ratios(runs, s) for s in dict.fromkeys(r["scheduler"] for r in runs) if s != "yarn-cs"}


def _absolute(runs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    keys = ("makespan_s", "median_jct_s", "mean_jct_s", "cross_rack_bytes", "peak_link_mbit_s")
    return {s: {scenario: {k: round(statistics.median(_pick(runs, s, scenario, k)), 2) for k in keys} for scenario in SCENARIOS}
            for s in dict.fromkeys(r["scheduler"] for r in runs)}


def _calibration(description: dict[str, Any], net: Network, seeds: list[int], quick: bool, runs: list[dict[str, Any]],
                 node_cpus: float | None, fitted: Path) -> dict[str, Any]:
    """The recurring jobs through the flow-level simulator on the same racks and rates: sim / testbed median JCT,
    with the cluster spec the model fit wrote (MRCute+, in sample) and with the thesis model."""
    paper = experiment.cluster_spec(description, net)
    result: dict[str, Any] = {"note": "recurring jobs only; MRCute+ fitted on these runs (in sample)"}
    if fitted.exists():
        result["sim_over_testbed_median_jct"] = _sim_ratios(ClusterSpec.model_validate_json(fitted.read_text()), seeds, quick, runs, node_cpus)
    result["sim_over_testbed_median_jct_paper_model"] = _sim_ratios(paper, seeds, quick, runs, node_cpus)
    return result


def _sim_ratios(spec: ClusterSpec, seeds: list[int], quick: bool, runs: list[dict[str, Any]], node_cpus: float | None) -> dict[str, float]:
    ran = list(dict.fromkeys(r["scheduler"] for r in runs))
    ratios: dict[str, list[float]] = {s: [] for s in ran}
    for seed in seeds:
        for scenario in SCENARIOS:
            recurring = [j for j in experiment.workload(seed, scenario, quick=quick) if j.recurring]
            workload = Workload(jobs=[experiment.job_spec(j, node_cpus) for j in recurring])
            specs = [RunSpec(s, network="tcp", scenario=scenario, seed=seed, output_replication=1) for s in ran]
            for sim in run_all(spec, workload, specs):
                tested = next(r for r in runs if r["seed"] == seed and r["scenario"] == scenario and r["scheduler"] == sim.scheduler)
                actual = statistics.median(j["jct_s"] for j in tested["jobs"] if j["recurring"])
                ratios[sim.scheduler].append(sim.summary.median_completion_s / actual)
    return {s: round(statistics.median(v), 3) for s, v in ratios.items()}


def _summary(runs: dict[str, list[dict[str, Any]]], shaping: dict[str, float], calibration: dict[str, Any], seeds: list[int],
             args: argparse.Namespace, wall_s: float) -> dict[str, Any]:
    result: dict[str, Any] = {
        "benchmark": "testbed", "quick": args.quick, "seeds": seeds, "oversubscription": args.oversubscription,
        "node_mbit_s": args.node_mbit, "node_cpus": args.node_cpus, "output_replication": args.output_replication,
        "ratios": _all_ratios(runs["main"]),
        "shaping": {"configured_uplink_mbit_s": shaping["configured_uplink_mbit_s"],
                    "measured_cross_rack_mbit_s": shaping["measured_cross_rack_mbit_s"],
                    "measured_in_rack_mbit_s": shaping.get("measured_in_rack_mbit_s")},
        "absolute": {"main": _absolute(runs["main"])},
        "calibration": calibration,
        "paper": {"batch_makespan": "0.67-0.90", "online_median_jct": "0.44-0.70", "cross_rack_bytes": "0.10-0.80"},
    }
    if "control_o1" in runs:
        result["control_o1"] = _all_ratios(runs["control_o1"])
        result["absolute"]["control_o1"] = _absolute(runs["control_o1"])
    result["wall_s"] = round(wall_s, 1)
    result["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    return result


def _report(runs: dict[str, list[dict[str, Any]]], net: Network, out: Path, result: dict[str, Any]) -> Path:
    main_runs = runs["main"]
    files: dict[str, bytes] = {}
    sections = [html.section("Figures", html.paragraph(html.escape(json.dumps(result["ratios"]))),
                             html.key_values([("shaping", json.dumps(result["shaping"])), ("seeds", result["seeds"])]))]
    for scenario in SCENARIOS:
        png = charts.cdf_png({s: [j["jct_s"] for r in main_runs if r["scheduler"] == s and r["scenario"] == scenario for j in r["jobs"]]
                              for s in dict.fromkeys(r["scheduler"] for r in main_runs)}, f"Job completion time CDF, {scenario}, O={net.oversubscription:g}",
                             "job completion time (s)")
        files[f"jct_cdf_{scenario}.png"] = png
        sections.append(html.section(f"JCT CDF ({scenario})", html.figure(png, f"jct_cdf_{scenario}.png", "per scheduler, all seeds")))
    labels = [f"{r['scheduler']} {r['scenario']} s{r['seed']}" for r in main_runs]
    png = charts.lane_bars_png(labels, [r["cross_rack_bytes"] for r in main_runs], "Cross-rack bytes per run", "bytes", html.fmt_bytes)
    files["cross_rack_bytes.png"] = png
    sections.append(html.section("Cross-rack bytes", html.figure(png, "cross_rack_bytes.png", "from the tc class counters")))
    for r in main_runs:
        if r["seed"] == main_runs[0]["seed"]:
            name = f"uplinks_{r['scheduler']}_{r['scenario']}.png"
            files[name] = _utilisation_png(r["uplink_utilisation"], f"Uplink utilisation: {r['scheduler']}, {r['scenario']}")
            sections.append(html.section(name.removesuffix(".png"), html.figure(files[name], name, "share of the configured uplink rate")))
    rows = [(r["scenario"], r["seed"], j["name"], html.fmt_seconds(j["planned_finish_s"]), html.fmt_seconds(j["finish_s"]))
            for r in main_runs if r["scheduler"] == "corral" for j in r["jobs"] if j["planned_finish_s"] is not None]
    sections.append(html.section("Corral: planned vs actual finish", html.table(["scenario", "seed", "job", "planned", "actual"], rows)))
    files["index.html"] = html.page("corral-yarn testbed benchmark", "Corral vs Yarn-CS on the shaped testbed", sections).encode()
    return html.publish(out, files)


def _utilisation_png(series: list[dict[str, Any]], title: str) -> bytes:
    racks = len(series[0]["uplink"]) if series else 0
    lines = {f"rack {r} {side}": [s["uplink" if side == "up" else "downlink"][r] for s in series]
             for r in range(racks) for side in ("up", "down")}
    return charts.series_png([s["t"] for s in series], lines, title, "share of the configured rate")


if __name__ == "__main__":
    main()
