"""Benchmark of Paragon (paper 003) on generated ground truth (docs/paragon.md). Prints ONE JSON line.

1,000 servers of 14 SCs (the paper's EC2 types, 4,960 cores); workloads arriving one per second in the
paper's three scenarios (low: 2,500; high: 5,000; oversubscribed: 7,500 plus a burst of 1,000), each
classified from two SC and two SoI profiles in batches of arrivals and scheduled by Paragon's greedy
search, its statistical (hash-sampled) variant and the three published baselines, side by side on the
same workloads. Also the classification accuracy against the number of offline-profiled jobs, its ceiling
(`ceiling_*`: the best SC of each job's noise-free speed, i.e. a classifier that knows every latent factor), and
the accuracy on the setup of the paper's Table 1 (the 10-SC local cluster of Table 3, 20 offline jobs).
Also on the low scenario's workloads: the matrices grown by the classified arrivals (§2.2; `grown_matrices`: accuracy
against the jobs seen and QoS, with and without, on the same profiles), and Paragon with the servers' tolerated score
as §3.2's sentence reads literally (the residents' minimum, `tolerated_rule` "min") beside the default (their least
headroom, the reading under which §3.2's D_1 = D_2 = 0 means no negative impact), and the
statistical variant as §3.2 writes its ring (one point per hashed score) beside the default (ties spread, not the paper's).
In every scenario, Paragon with §3.4's monitor (a server holding a job whose measured performance deviates from its
prediction takes no new workloads) and with its migration too (`paragon_monitor_by_scenario`; off by default), and on
the low scenario's exact rows.
Paragon (`paragon`) plans with a guard band of `--guard` sigmas (default 1; ours, beyond the paper: each classified
interference score widened by its SoI's held-out error in a 4-fold cross-validation of the offline rows, simulate.GUARD); the paper's greedy
(k = 0) is `paragon_unguarded` beside it and the baselines (no guard: as published), and `paragon_by_guard` gives
k in 0, 0.5, 1, 2 per scenario (with the arrivals the greedy relaxed QoS for); `paragon_guard` the k and the bands.
Two bands side by side at that k (`paragon_by_band`, and `paragon_<band>_band` in the QoS tables; the same profiles): one
sigma per SoI (`homoscedastic`, session 13) and sigma per tercile of the predicted score (`level_aware`, session 14);
`paragon` plans with simulate.BAND_LEVELS's.
The two profiled SoIs by simulate.SOI_RULE (default "chosen": once, by validation on the offline rows; ours) and by the
other rule of simulate.SOI_RULES ("random": two per job, §2.3) side by side on the same workloads, each with its own band
(`paragon_by_soi_rule`, and `paragon_<rule>_sois` in the QoS tables).
Paragon's greedy under each SC rule of schedule.SC_RULES on the same workloads (`paragon_by_sc_rule`, and `paragon_sc_qos` in
the QoS tables): §3.2's best SC among the survivors (the default) and "sc_qos" (ours, an option: the search starts from the
servers of the SCs on which the job's predicted speed meets QoS; docs/paragon.md "Session 19").
Every figure is measured once per ground-truth model of `--truths` (groundtruth.TRUTHS; `truths.<name>`, with the
published facts each model is checked against, `heterogeneity_facts`): the top-level keys are the first model's, `truths.<name>` the others'.
PNG figures (the first model's) go to --out.
With `--seeds N` (at least 2) the benchmark measures only the headline on seeds `--seed` .. `--seed` + N - 1 instead: per seed, the
low scenario's workloads built, profiled and classified exactly as above, and QoS under `paragon` (default options),
`paragon_unguarded`, the three published baselines and `paragon_profiled_sois_validation` (the option of
simulate.VALIDATIONS beside the default: the interference matrices' eta, lambda and rank validated again on the profiled
SoIs; the same offline rows and profiles; docs/paragon.md "Session 19 (27 Nov): why some seeds fall"); per scheduler the
mean, standard deviation, min, max and the 95 % t interval of the mean over the seeds, and for the unguarded greedy and the
option the same of their per-seed difference from `paragon` (`qos_paired_difference_from_paragon`); the classification per seed and its means; Paragon's decision times pooled; and
per seed the share of the greedy searches' decisions that took at least their timeout (schedule.TIMEOUT_S: every
decision the timeout stopped is among them; §3.2 reports under 0.1 %). The other options apply per seed; --quick, --out
and --grow-every have no effect there.

About 10-12 minutes per model on the shared 2 cores; ``--quick`` (the low scenario only, a shorter accuracy curve)
about a minute per model; ``--seeds N`` about 10 s per seed and model.

Usage: .venv/bin/python benchmarks/bench_paragon.py [--quick] [--seed N] [--offline N] [--noise X] [--second-concept X]
       [--capacity-exponent X] [--excess-slope X] [--grow-every N] [--guard K] [--truths NAME[,NAME]] [--out DIR] [--seeds N]
Sessions 1-10's ground truth: --noise 0.03 --second-concept 0.1 --capacity-exponent 1 --excess-slope 0.5.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy import stats

from corral_yarn.cli.types import non_negative_float, positive_int
from corral_yarn.paragon import classify, groundtruth, schedule, simulate

PAPER = {
    "qos_fraction_2500": {"paragon": 0.91, "heterogeneity_oblivious": 0.14, "interference_oblivious": 0.11, "random": 0.03},
    "classification": {"best_sc": "0.83-0.86", "within_5pct": "0.90-0.91", "exact_ranking": 0.60, "near_exact_ranking": 0.65, "training_best_match": "0.18-0.28",
                       "interference_err": 0.053},
    "decision": "classification and scheduling overheads < 0.1 % of execution time",
}
BATCH = 10


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the low scenario only, accuracy at 20 and 100 offline jobs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=seed_count, default=None,
                   help="N >= 2: the headline only (low scenario, QoS per scheduler, classification) on seeds --seed .. --seed + N - 1, with the spread over them")
    p.add_argument("--offline", type=int, default=50,
                   help="offline-profiled jobs (dense rows) in the utility matrices; §2.2 uses 50 at 1,000 servers")
    p.add_argument("--noise", type=non_negative_float, default=None,
                   help="the generator's per-entry noise of log speed (default: the truth's, groundtruth.NOISE; sessions 1-10: 0.03)")
    p.add_argument("--second-concept", type=non_negative_float, default=groundtruth.SECOND_CONCEPT,
                   help=f"frontier: weight of the second concept (default {groundtruth.SECOND_CONCEPT}; sessions 1-10: 0.1)")
    p.add_argument("--capacity-exponent", type=non_negative_float, default=groundtruth.CAPACITY_EXPONENT,
                   help=f"a server's shared resources max(1, cores / 4) ** X (default {groundtruth.CAPACITY_EXPONENT}; sessions 1-10: 1)")
    p.add_argument("--excess-slope", type=non_negative_float, default=groundtruth.EXCESS_SLOPE,
                   help=f"degradation per unit of pressure beyond the tolerated score (default {groundtruth.EXCESS_SLOPE}; sessions 1-10: 0.5)")
    p.add_argument("--grow-every", type=positive_int, default=250,
                   help="arrivals between re-decompositions of the grown matrices (grown_matrices; §2.2)")
    p.add_argument("--truths", type=truth_list, default=groundtruth.TRUTHS,
                   help=f"ground-truth models, comma-separated, the first one's figures at the top level (default {','.join(groundtruth.TRUTHS)})")
    p.add_argument("--guard", type=non_negative_float, default=simulate.GUARD,
                   help=f"Paragon's guard band in sigmas of the classifier's held-out error (default {simulate.GUARD:g}; 0: the paper's)")
    p.add_argument("--out", default="out/bench_paragon", help="directory of the PNG figures")
    return p.parse_args()


def truth_list(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(","))
    bad = [n for n in names if n not in groundtruth.TRUTHS]
    if bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct names among {', '.join(groundtruth.TRUTHS)}, got {text!r}")
    return names


def seed_count(text: str) -> int:
    """--seeds: a whole number >= 2 (a spread over the seeds needs two)."""
    if not text.isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 2, got {text!r}")
    return int(text)


def pct(values: np.ndarray, q: float) -> float:
    return round(float(np.percentile(values, q)), 4)


def accuracy_curve(w: groundtruth.World, sizes: list[int], seed: int) -> dict[str, dict[str, float]]:
    """Classification accuracy of 1,000 new jobs against the number of offline-profiled jobs."""
    out = {}
    for n in sizes:
        rng = np.random.default_rng(seed + n)
        trained = simulate.models(w, n, rng)
        acc = simulate.classify_workloads(trained, groundtruth.jobs(w, 1000, rng), rng, BATCH).accuracy
        out[str(n)] = {k: round(acc[k], 4) for k in ("best_sc", "within_5pct", "interference_err")}
    return out


def world(args: argparse.Namespace, truth: str, configs: tuple[tuple[str, int, int], ...] = groundtruth.SERVER_CONFIGS) -> groundtruth.World:
    return groundtruth.world(args.seed, configs, args.noise, truth, second_concept=args.second_concept,
                             capacity_exponent=args.capacity_exponent, excess_slope=args.excess_slope)


def trained_world(args: argparse.Namespace, truth: str) -> tuple[groundtruth.World, simulate.Trained, np.random.Generator]:
    """The EC2 world of `args.seed`, its matrices trained on `args.offline` offline rows, and the generator (seed + 1)
    that trained them, from which the scenarios' workloads are then drawn in turn."""
    w = world(args, truth)
    rng = np.random.default_rng(args.seed + 1)
    return w, simulate.models(w, args.offline, rng), rng


def workloads(w: groundtruth.World, trained: simulate.Trained, rng: np.random.Generator,
              scenario: str) -> tuple[groundtruth.Truth, dict, simulate.Classified]:
    """A scenario's workloads drawn from `rng`, the generator's state before their profiling (to replay those draws)
    and their classification in batches of BATCH arrivals."""
    n, burst, _ = simulate.SCENARIOS[scenario]
    truth = groundtruth.jobs(w, n + burst, rng)
    state = rng.bit_generator.state
    return truth, state, simulate.classify_workloads(trained, truth, rng, BATCH)


def run_schedulers(truth: groundtruth.Truth, jobs: list, scenario: str, seed: int, guard: float, schedulers: tuple[str, ...],
                   label: str, start: float) -> dict[str, simulate.Outcome]:
    """Each scheduler on the same workloads (progress to stderr, `label` and the seconds since `start`)."""
    out = {}
    for scheduler in schedulers:
        out[scheduler] = simulate.run(truth, jobs, scenario, scheduler, seed=seed, guard=guard)
        print(f"{label} {scheduler}: qos {out[scheduler].qos_fraction:.3f}, {time.monotonic() - start:.0f} s", file=sys.stderr)
    return out


def table1_setup(args: argparse.Namespace, truth: str) -> dict[str, float]:
    """Classification on the setup of the paper's Table 1 (§2.2): the local cluster of Table 3 (10 SCs), 20 offline
    jobs, 1,000 new jobs; and the published facts on that cluster (two-profile ceiling on the chosen pair)."""
    seed = args.seed
    w = world(args, truth, groundtruth.LOCAL_CLUSTER)
    rng = np.random.default_rng(seed + 1)
    trained = simulate.models(w, 20, rng)
    truth_jobs = groundtruth.jobs(w, 1000, rng)
    state = rng.bit_generator.state
    acc = simulate.classify_workloads(trained, truth_jobs, rng, BATCH).accuracy
    other = simulate.classify_workloads(simulate.with_soi_rule(trained, OTHER_SOI_RULE), truth_jobs, replay(state), BATCH).accuracy
    facts = groundtruth.heterogeneity_facts(w, groundtruth.LOCAL_CLUSTER, FACTS_JOBS, np.random.default_rng(seed + 7), trained.profile_scs)
    return {"facts": {k: round(v, 4) for k, v in facts.items()}, "scs": len(groundtruth.LOCAL_CLUSTER), "offline_jobs": 20, "profile_scs": [groundtruth.LOCAL_CLUSTER[i][0] for i in trained.profile_scs],
            "profile_sois": sois_named(trained), **{k: round(v, 4) for k, v in acc.items()},
            f"{OTHER_SOI_RULE}_sois": {k: round(other[k], 4) for k in ("interference_err", "caused_top_decile_bias")}}


WINDOW = 500  # arrivals per point of the accuracy against the jobs seen


def grown_matrices(trained: simulate.Trained, truth: groundtruth.Truth, every: int, seed: int) -> dict:
    """§2.2's growing matrices on the low scenario's workloads, each variant on the same profiles (one rng seed):
    accuracy against the jobs seen and QoS (Paragon, NI), static against grown (all three matrices, or the two
    interference matrices only; re-decomposed by §2.1's SGD or by ALS-WR, `_als_wr`), and the accuracy with a random SC
    pair per job (§2.2's "any two SCs")."""
    interference, pairs = ("tolerated", "caused"), dataclasses.replace(trained, profile_scs=None)
    variants = {"static": (trained, 0, simulate.MATRICES, "sgd"), "grown_all": (trained, every, simulate.MATRICES, "sgd"),
                "grown_interference_only": (trained, every, interference, "sgd"),
                "grown_all_als_wr": (trained, every, simulate.MATRICES, "als_wr"),
                "grown_interference_only_als_wr": (trained, every, interference, "als_wr"),
                "random_sc_pair_static": (pairs, 0, simulate.MATRICES, "sgd"),
                "random_sc_pair_grown_all": (pairs, every, simulate.MATRICES, "sgd"),
                "random_sc_pair_grown_all_als_wr": (pairs, every, simulate.MATRICES, "als_wr")}
    out: dict = {"cadence_arrivals": every, "sgd_epochs": simulate.GROW_EPOCHS, "als_wr_sweeps": simulate.GROW_EPOCHS,
                 "window_arrivals": WINDOW, "solvers": list(classify.SOLVERS)}
    for name, (tr, grow_every, grown, solver) in variants.items():
        start = time.monotonic()
        c = simulate.classify_workloads(tr, truth, np.random.default_rng(seed + 2), BATCH, grow_every=grow_every, grown=grown,
                                        grow_solver=solver)
        row = {"classification": {k: round(c.accuracy[k], 4) for k in ("best_sc", "within_5pct", "interference_err")},
               "by_jobs_seen": {str(lo): {k: round(v, 4) for k, v in m.items()}
                                for lo, m in simulate.accuracy_by_arrival(c.jobs, truth, WINDOW).items()},
               "classify_seconds": round(time.monotonic() - start, 1)}
        if not name.startswith("random"):
            row["qos_fraction_low"] = {s: round(simulate.run(truth, c.jobs, "low", s, seed=seed).qos_fraction, 4)
                                       for s in ("paragon", "interference_oblivious")}
        out[name] = row
        print(f"grown matrices {name}: {row['classification']}", file=sys.stderr)
    return out


MONITOR = {"monitor": (True, False), "monitor_migrate": (True, True)}  # §3.4's remedies (simulate.run), not the default


def monitoring(truth: groundtruth.Truth, jobs: list, scenario: str, seed: int) -> dict:
    """Paragon (greedy) with §3.4's monitor, and with its migration too: QoS, mean performance and migrations."""
    out = {}
    for name, (monitor, migrate) in MONITOR.items():
        o = simulate.run(truth, jobs, scenario, "paragon", seed=seed, monitor=monitor, migrate=migrate)
        out[name] = {"qos": round(o.qos_fraction, 4), "mean_performance": round(float(o.performance.mean()), 4),
                     "migrations": o.migrations}
        print(f"{scenario} paragon {name}: {out[name]}", file=sys.stderr)
    return out


GUARDS = (0.0, 0.5, 1.0, 2.0)  # Paragon's guard bands side by side (`paragon_by_guard`); 0 is the paper's greedy


def guards(truth: groundtruth.Truth, jobs: list, scenario: str, seed: int, done: dict[float, simulate.Outcome]) -> dict:
    """Paragon (greedy) under each guard band of GUARDS on the same workloads (`done`: outcomes already run, by k)."""
    return {k: done[k] if k in done else simulate.run(truth, jobs, scenario, "paragon", seed=seed, guard=k) for k in GUARDS}


def guard_row(o: simulate.Outcome, jobs: list) -> dict:
    """QoS and mean performance under one guard band, and where its misses come from: the arrivals the greedy search
    relaxed QoS for (no server passed every banded D >= 0; their QoS), and the share placed on their predicted best SC."""
    relaxed = o.backtracks > 0
    best = np.array([j.sc_score.argmax() for j in jobs])
    return {"qos": round(o.qos_fraction, 4), "mean_performance": round(float(o.performance.mean()), 4), "relaxed": o.relaxed,
            "relaxed_qos": round(float(np.mean(o.meets_qos[relaxed])), 4) if relaxed.any() else None,
            "unrelaxed_qos": round(float(np.mean(o.meets_qos[~relaxed])), 4) if (~relaxed).any() else None,
            "on_predicted_best_sc": round(float(np.mean(o.server_sc == best)), 4)}


BANDS = {1: "homoscedastic", classify.LEVELS: "level_aware"}  # the guard bands side by side: one sigma per SoI, or per level of the predicted score


def band_variants(trained: simulate.Trained, truth: groundtruth.Truth, classified: simulate.Classified, state: dict,
                  scenario: str, seed: int, guard: float, default: simulate.Outcome) -> dict[str, simulate.Outcome]:
    """Paragon at `guard` sigmas under each band of BANDS on the same workloads and profiles (the profiling draws replayed
    from the generator `state`; `default`: the outcome under the trained band, simulate.BAND_LEVELS)."""
    out = {}
    for levels, name in BANDS.items():
        jobs = classified.jobs if levels == simulate.BAND_LEVELS else \
            simulate.classify_workloads(simulate.rebanded(trained, levels), truth, replay(state), BATCH).jobs
        out[name] = default if levels == simulate.BAND_LEVELS else simulate.run(truth, jobs, scenario, "paragon", seed=seed, guard=guard)
    return out


def band_table(band: classify.Band) -> dict:
    """A band's level edges and sigma per SoI, rounded."""
    return {soi: {"edges": np.round(band.edges[:, i], 4).tolist(), "sigma": np.round(band.sigma[:, i], 4).tolist()}
            for i, soi in enumerate(groundtruth.SOURCES_OF_INTERFERENCE)}


def fits(trained: simulate.Trained, others: dict[str, simulate.Trained], truth: groundtruth.Truth,
         classified: simulate.Classified, state: dict, scenario: str, seed: int) -> dict:
    """Paragon with each fit of the matrices (simulate.FITS; the first is the default) on the same workloads and the
    same profiles (the profiling draws replayed from the generator `state`)."""
    keys = ("best_sc", "within_5pct", "interference_err", "caused_top_decile_bias")
    out = {}
    for name, t in ((f"{simulate.FITS[0]} (default)", trained), *others.items()):
        c = classified if t is trained else simulate.classify_workloads(t, truth, replay(state), BATCH)
        out[name] = {"sgd": [{"eta": m.eta, "lambda": m.lam, "rank": int(m.confidence.size)} for m in (t.sc, t.tolerated, t.caused)],
                     "classification": {k: round(c.accuracy[k], 4) for k in keys},
                     "qos": round(simulate.run(truth, c.jobs, scenario, "paragon", seed=seed).qos_fraction, 4)}
    return out


OTHER_SOI_RULE = next(r for r in simulate.SOI_RULES if r != simulate.SOI_RULE)  # reported beside the default


def soi_rules(trained: simulate.Trained, other: simulate.Trained, truth: groundtruth.Truth, classified: simulate.Classified,
              state: dict, scenario: str, seed: int, guard: float, done: dict[float, simulate.Outcome]) -> dict:
    """Paragon under each rule of the profiled SoIs (simulate.SOI_RULES; `other`: the non-default rule's trained matrices
    and band) on the same workloads, the profiling draws replayed from the generator `state`: classification, QoS at
    `guard` and unguarded, each with its own band (`done`: the default rule's outcomes by k)."""
    keys = ("best_sc", "within_5pct", "interference_err", "caused_top_decile_bias")
    again = simulate.classify_workloads(other, truth, replay(state), BATCH)
    out = {}
    for name, t, c in ((f"{simulate.SOI_RULE} (default)", trained, classified), (OTHER_SOI_RULE, other, again)):
        runs = done if t is trained else {k: simulate.run(truth, c.jobs, scenario, "paragon", seed=seed, guard=k) for k in {guard, 0.0}}
        out[name] = {"profile_sois": sois_named(t), "classification": {k: round(c.accuracy[k], 4) for k in keys},
                     **guard_row(runs[guard], c.jobs), "qos_unguarded": round(runs[0.0].qos_fraction, 4)}
    return out


OTHER_SC_RULE = next(r for r in schedule.SC_RULES if r != simulate.SC_RULE)  # reported beside the default


def sc_rules(truth: groundtruth.Truth, jobs: list, scenario: str, seed: int, guard: float, default: simulate.Outcome) -> dict:
    """Paragon's greedy under each SC rule (schedule.SC_RULES) at `guard` on the same workloads (`default`: the outcome
    under simulate.SC_RULE)."""
    other = simulate.run(truth, jobs, scenario, "paragon", seed=seed, guard=guard, sc_rule=OTHER_SC_RULE)
    return {f"{simulate.SC_RULE} (default)": guard_row(default, jobs), OTHER_SC_RULE: guard_row(other, jobs)}


def sois_named(trained: simulate.Trained) -> list[str] | str:
    """The SoIs every job is profiled against, or "random" (two per job, §2.3)."""
    if trained.profile_sois is None:
        return "random"
    return [groundtruth.SOURCES_OF_INTERFERENCE[i] for i in trained.profile_sois]


def replay(state: dict) -> np.random.Generator:
    """A generator at a saved `state`."""
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


def figures(out: str, perf: dict[str, np.ndarray], curve: dict[str, dict[str, float]]) -> list[str]:
    os.makedirs(out, exist_ok=True)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for name, p in perf.items():
        ax.plot(np.sort(p)[::-1], label=name)
    ax.axhline(0.95, color="grey", linestyle=":")
    ax.set(xlabel="workloads, best to worst", ylabel="performance / alone on best SC", title="Low load, 2,500 workloads (cf. Fig. 9)")
    ax.legend(fontsize=8)
    FigureCanvasAgg(fig).print_png(os.path.join(out, "paragon_performance.png"))
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    sizes = [int(n) for n in curve]
    for key in ("best_sc", "within_5pct", "interference_err"):
        ax.plot(sizes, [curve[str(n)][key] for n in sizes], marker="o", label=key)
    ax.set(xscale="log", xlabel="offline-profiled jobs", ylabel="fraction / mean abs. error", title="Classification accuracy")
    ax.legend(fontsize=8)
    FigureCanvasAgg(fig).print_png(os.path.join(out, "paragon_accuracy.png"))
    return ["paragon_performance.png", "paragon_accuracy.png"]


FACTS_JOBS = 5000  # generated jobs per model for its published-fact checks


def measure(args: argparse.Namespace, truth_model: str, out: str | None) -> dict:
    """Every figure of the benchmark on one ground-truth model (figures to `out` when given)."""
    start = time.monotonic()
    w, trained, rng = trained_world(args, truth_model)
    facts = {"ec2": groundtruth.heterogeneity_facts(w, groundtruth.SERVER_CONFIGS, FACTS_JOBS, np.random.default_rng(args.seed + 7),
                                                    trained.profile_scs)}
    scenarios = ["low"] if args.quick else list(simulate.SCENARIOS)
    qos, mean_perf, decision, batch_ms, accuracy, low_perf, exact, literal, grown, ties = {}, {}, {}, [], None, {}, {}, {}, {}, {}
    oblivious_high, monitored, by_fit, by_guard, by_band, by_soi_rule, by_sc_rule = {}, {}, {}, {}, {}, {}, {}
    other_sois = simulate.with_soi_rule(trained, OTHER_SOI_RULE)
    others = {f: simulate.models(w, args.offline, np.random.default_rng(args.seed + 1), fit=f)  # the same offline rows
              for f in simulate.FITS[1:]}
    for scenario in scenarios:
        truth, state, classified = workloads(w, trained, rng, scenario)
        by_fit[scenario] = fits(trained, others, truth, classified, state, scenario, args.seed)
        batch_ms += classified.batch_ms
        accuracy = accuracy or classified.accuracy
        qos[scenario], mean_perf[scenario] = {}, {}
        outcomes = run_schedulers(truth, classified.jobs, scenario, args.seed, args.guard, simulate.SCHEDULERS, f"{truth_model} {scenario}", start)
        for scheduler, outcome in outcomes.items():
            qos[scenario][scheduler] = round(outcome.qos_fraction, 4)
            mean_perf[scenario][scheduler] = round(float(outcome.performance.mean()), 4)
            decision.setdefault(scheduler, []).append(outcome.decision_ms)
            if scenario == "low":
                low_perf[scheduler] = outcome.performance
            if scenario == "high" and scheduler == "heterogeneity_oblivious":  # Fig. 1: 5,000 applications
                oblivious_high = {"mean": round(float(outcome.performance.mean()), 4), "p1": pct(outcome.performance, 1)}
        guarded = guards(truth, classified.jobs, scenario, args.seed, {args.guard: outcomes["paragon"]})
        by_guard[scenario] = {f"{k:g}": guard_row(o, classified.jobs) for k, o in guarded.items()}
        qos[scenario]["paragon_unguarded"] = by_guard[scenario]["0"]["qos"]  # the paper's greedy (k = 0) beside the default
        mean_perf[scenario]["paragon_unguarded"] = by_guard[scenario]["0"]["mean_performance"]
        banded = band_variants(trained, truth, classified, state, scenario, args.seed, args.guard, outcomes["paragon"])
        by_band[scenario] = {name: guard_row(o, classified.jobs) for name, o in banded.items()}
        for name, row in by_band[scenario].items():
            qos[scenario][f"paragon_{name}_band"], mean_perf[scenario][f"paragon_{name}_band"] = row["qos"], row["mean_performance"]
        by_soi_rule[scenario] = soi_rules(trained, other_sois, truth, classified, state, scenario, args.seed, args.guard, guarded)
        other_row = by_soi_rule[scenario][OTHER_SOI_RULE]
        qos[scenario][f"paragon_{OTHER_SOI_RULE}_sois"] = other_row["qos"]
        mean_perf[scenario][f"paragon_{OTHER_SOI_RULE}_sois"] = other_row["mean_performance"]
        by_sc_rule[scenario] = sc_rules(truth, classified.jobs, scenario, args.seed, args.guard, outcomes["paragon"])
        qos[scenario][f"paragon_{OTHER_SC_RULE}"] = by_sc_rule[scenario][OTHER_SC_RULE]["qos"]
        mean_perf[scenario][f"paragon_{OTHER_SC_RULE}"] = by_sc_rule[scenario][OTHER_SC_RULE]["mean_performance"]
        if scenario == "low":
            low_perf["paragon_unguarded"] = guarded[0.0].performance
        monitored[scenario] = monitoring(truth, classified.jobs, scenario, args.seed)
        if scenario == "low":  # the scheduler alone: the same workloads with their exact rows (oracle classification)
            exact = {s: round(simulate.run(truth, simulate.exact_jobs(truth), scenario, s, seed=args.seed).qos_fraction, 4)
                     for s in ("paragon", "interference_oblivious")}
            literal = {"classified": round(simulate.run(truth, classified.jobs, scenario, "paragon", args.seed, "min").qos_fraction, 4),
                       "exact_rows": round(simulate.run(truth, simulate.exact_jobs(truth), scenario, "paragon", args.seed,
                                                        "min").qos_fraction, 4)}
            written = simulate.run(truth, classified.jobs, scenario, "paragon_statistical_as_written", seed=args.seed)
            ties = {"spread (default)": qos["low"]["paragon_statistical"], "as_written": round(written.qos_fraction, 4),
                    "as_written_decision_ms_median": pct(written.decision_ms, 50)}
            grown = grown_matrices(trained, truth, args.grow_every, args.seed)
            monitored["low_exact_rows"] = monitoring(truth, simulate.exact_jobs(truth), scenario, args.seed)
    curve = accuracy_curve(w, [20, 100] if args.quick else [10, 20, 50, 100, 200], args.seed)
    table1 = table1_setup(args, truth_model)
    facts["table1_setup"] = table1.pop("facts")
    pngs = figures(out, low_perf, curve) if out else []
    paragon_ms = np.concatenate(decision["paragon"])
    return {
        "truth": truth_model, "constants": {"noise": w.noise, "second_concept": w.second_concept, "capacity_exponent": w.capacity_exponent,
                                            "excess_slope": w.excess_slope},
        "heterogeneity_facts": {k: {m: round(v, 4) for m, v in f.items()} for k, f in facts.items()},
        "heterogeneity_oblivious_high_performance": oblivious_high,
        "qos_fraction": qos["low"], "qos_fraction_exact_rows_low": exact, "qos_fraction_by_scenario": qos, "mean_performance_by_scenario": mean_perf,
        "paragon_low_by_tolerated_rule": {"headroom (default)": {"classified": qos["low"]["paragon"], "exact_rows": exact["paragon"]},
                                         "min": literal},
        "paragon_statistical_low_by_ties": ties, "grown_matrices": grown, "paragon_monitor_by_scenario": monitored,
        "paragon_by_fit": by_fit, "paragon_by_guard": by_guard, "paragon_by_band": by_band, "paragon_by_soi_rule": by_soi_rule,
        "paragon_by_sc_rule": by_sc_rule,
        "paragon_guard": {"k": args.guard, "applies_to": list(simulate.GUARDED), "unguarded_key": "paragon_unguarded",
                          "band": "per SoI, RMS of the held-out offline rows' reconstruction error on the side that breaks QoS "
                                  "(tolerated too high, caused too low; the other side counts 0), on classified entries only",
                          "band_folds": classify.FOLDS, "band_levels": simulate.BAND_LEVELS,
                          "bands": {name: dict(zip(("tolerated", "caused"),
                                                   map(band_table, simulate.rebanded(trained, levels).band)))
                                    for levels, name in BANDS.items()}},
        "classification": {k: round(v, 4) for k, v in accuracy.items()},
        "accuracy_vs_offline_jobs": curve, "classification_table1_setup": table1,
        "profile_scs": [groundtruth.SERVER_CONFIGS[i][0] for i in trained.profile_scs], "profile_sois": sois_named(trained),
        "soi_rule": simulate.SOI_RULE,
        "sgd": [{"eta": m.eta, "lambda": m.lam, "rank": int(m.confidence.size), "confidence": [round(c, 3) for c in m.confidence]}
                for m in (trained.sc, trained.tolerated, trained.caused)],
        "decision_ms": {"median": pct(paragon_ms, 50), "p99": pct(paragon_ms, 99),
                        **{f"{k}_median": pct(np.concatenate(v), 50) for k, v in decision.items() if k != "paragon"}},
        "classify_batch_ms": {"batch": BATCH, "median": pct(np.array(batch_ms), 50), "p99": pct(np.array(batch_ms), 99)},
        "figures": [os.path.join(out, p) for p in pngs] if out else [], "seconds": round(time.monotonic() - start, 1),
    }


SEEDS_SCHEDULERS = ("paragon", "heterogeneity_oblivious", "interference_oblivious", "random")  # --seeds: the headline and the published baselines
SEEDS_CLASSIFICATION = ("best_sc", "within_5pct", "interference_err")
GREEDY = ("paragon", "paragon_unguarded", "heterogeneity_oblivious")  # the schedulers whose search the timeout bounds (§3.2, §4)
CONFIDENCE = 0.95
OTHER_VALIDATION = next(v for v in simulate.VALIDATIONS if v != simulate.VALIDATION)  # --seeds: reported beside the default
OTHER_VALIDATION_KEY = f"paragon_{OTHER_VALIDATION}_validation"
PAIRED = ("paragon_unguarded", OTHER_VALIDATION_KEY)  # --seeds: each one's per-seed difference from `paragon`, and its spread


def seed_row(args: argparse.Namespace, truth_model: str, start: float) -> dict:
    """One seed of --seeds: the low scenario's workloads classified as `measure` classifies them, each scheduler's
    QoS, the classification, Paragon's decision times and the share of each greedy search's decisions at its timeout."""
    w, trained, rng = trained_world(args, truth_model)
    truth, state, classified = workloads(w, trained, rng, "low")
    outcomes = run_schedulers(truth, classified.jobs, "low", args.seed, args.guard, SEEDS_SCHEDULERS, f"{truth_model} seed {args.seed} low", start)
    outcomes["paragon_unguarded"] = simulate.run(truth, classified.jobs, "low", "paragon", seed=args.seed, guard=0.0)  # the paper's greedy
    other = simulate.models(w, args.offline, np.random.default_rng(args.seed + 1), validation=OTHER_VALIDATION)  # the same offline rows
    again = simulate.classify_workloads(other, truth, replay(state), BATCH)  # the same profiles
    outcomes[OTHER_VALIDATION_KEY] = simulate.run(truth, again.jobs, "low", "paragon", seed=args.seed, guard=args.guard)
    return {"qos": {s: round(o.qos_fraction, 4) for s, o in outcomes.items()},
            "classification": {k: round(classified.accuracy[k], 4) for k in SEEDS_CLASSIFICATION},
            "at_timeout": {s: round(float(np.mean(outcomes[s].decision_ms >= schedule.TIMEOUT_S * 1e3)), 4) for s in GREEDY},
            "decision_ms": outcomes["paragon"].decision_ms}


def spread(values: list[float]) -> dict:
    """Mean, sample standard deviation, min, max and the CONFIDENCE t interval of the mean of per-seed values."""
    v = np.asarray(values, dtype=float)
    sd = float(v.std(ddof=1))
    lo, hi = stats.t.interval(CONFIDENCE, v.size - 1, loc=v.mean(), scale=sd / np.sqrt(v.size)) if sd > 0 else (v.mean(), v.mean())
    return {"mean": round(float(v.mean()), 4), "std": round(sd, 4), "min": round(float(v.min()), 4), "max": round(float(v.max()), 4),
            "ci95": [round(float(lo), 4), round(float(hi), 4)]}


def measure_seeds(args: argparse.Namespace, truth_model: str) -> dict:
    """--seeds: the headline on seeds --seed .. --seed + N - 1 (seed_row each), per seed and its spread over them."""
    start = time.monotonic()
    rows = [seed_row(argparse.Namespace(**{**vars(args), "seed": s}), truth_model, start) for s in seed_range(args)]
    qos = {s: [r["qos"][s] for r in rows] for s in rows[0]["qos"]}
    accuracy = {k: [r["classification"][k] for r in rows] for k in SEEDS_CLASSIFICATION}
    decision = np.concatenate([r["decision_ms"] for r in rows])
    return {"truth": truth_model, "scenario": "low", "guard": args.guard, "sc_rule": simulate.SC_RULE, "soi_rule": simulate.SOI_RULE,
            "validation": simulate.VALIDATION, "qos_fraction_by_seed": qos, "qos_fraction": {s: spread(v) for s, v in qos.items()},
            "qos_paired_difference_from_paragon": {s: spread(list(np.subtract(qos[s], qos["paragon"]))) for s in PAIRED},
            "classification_by_seed": accuracy, "classification": {k: round(float(np.mean(v)), 4) for k, v in accuracy.items()},
            "greedy_timeout_ms": schedule.TIMEOUT_S * 1e3,
            "decisions_at_timeout_by_seed": {s: [r["at_timeout"][s] for r in rows] for s in GREEDY},
            "decision_ms": {"median": pct(decision, 50), "p99": pct(decision, 99)}, "seconds": round(time.monotonic() - start, 1)}


def seed_range(args: argparse.Namespace) -> list[int]:
    return list(range(args.seed, args.seed + args.seeds))


def main() -> None:
    args = _args()
    start = time.monotonic()
    truths = {name: measure_seeds(args, name) if args.seeds else measure(args, name, args.out if i == 0 else None)
              for i, name in enumerate(args.truths)}
    mode = {"seeds": seed_range(args)} if args.seeds else {"quick": args.quick, "seed": args.seed}
    print(json.dumps({
        "benchmark": "paragon", **mode, "servers": 1000, "scs": len(groundtruth.SERVER_CONFIGS),
        "cores": int(groundtruth.servers()[1].sum()), "offline_jobs": args.offline,
        **truths[args.truths[0]], "truths": {k: v for k, v in truths.items() if k != args.truths[0]}, "paper": PAPER, "seconds": round(time.monotonic() - start, 1),
    }))


if __name__ == "__main__":
    main()
