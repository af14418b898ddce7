"""The reproduction of the thesis's Kwiken evaluation (§5.4) on synthetic DAGs: per DAG, then aggregated.

``reissue_dag`` trains every policy on a DAG's training trace and simulates it on the test trace
(§5.4.1), for each budget: the reductions of the end-to-end percentiles against no reissues (the same
test requests and reissue draws for every policy), the budget spent on test and training traces, and
the training p99 reduction (Fig. 5.9). ``reissue_figures`` aggregates them over DAGs (Figs. 5.5, 5.9
and §5.4.2's comparisons).
"""

from __future__ import annotations

import numpy as np

from corral_yarn.kwiken import apportion, catchup
from corral_yarn.kwiken.apportion import spent
from corral_yarn.kwiken.partial import LOSSES, Responders, fit, partial_curve
from corral_yarn.kwiken.partial import POLICIES as PARTIAL_POLICIES
from corral_yarn.kwiken.reissue import PERCENTILES, POLICIES, SEARCHING, ReissueModel, reissue_draws, simulate
from corral_yarn.kwiken.synthetic import Workload

BUDGETS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20, 1.0)
SMALL_BUDGETS = (0.01, 0.02, 0.05, 0.10)  # "budgets from 1 % to 10 %" for the brute-force comparison (§5.4.2)
SMALL_DAGS = 9
COMBINED_BUDGETS = (0.0, 0.01, 0.03, 0.05, 0.10)  # Fig. 5.8b (left): reissues with 0.1 % utility loss
CATCH_UP_BUDGET = 0.03  # Fig. 5.7b: a total reissue budget of 3 %
CATCH_UP_SHARES = (1 / 30, 1 / 6)  # of it to global reissues (Fig. 5.7b's two axes)
EVERYWHERE = tuple(p for p in POLICIES if p not in SEARCHING)


def small_dags(stage_counts: list[int], count: int = SMALL_DAGS, fewest: int = 3) -> set[int]:
    """The ``count`` DAGs with the fewest stages, among those with at least ``fewest`` (with two stages the
    random search of §5.4.2 is a sweep of one line, not a search)."""
    eligible = sorted((n, k) for k, n in enumerate(stage_counts) if n >= fewest)
    return {k for _, k in eligible[:count]}


def _reductions(base: dict[str, float], run: dict[str, float]) -> dict[str, float]:
    return {k: 1.0 - run[k] / base[k] for k in base}


def reissue_dag(w: Workload, small: bool, seed: int, budgets: tuple[float, ...] = BUDGETS,
                random_allocations: int = 10_000) -> dict[str, object]:
    """Every policy on one DAG at every budget (searching policies only on small DAGs, at SMALL_BUDGETS)."""
    model = ReissueModel.fit(w.dag, w.train, seed=seed)
    draws = reissue_draws(w.test.latency, np.random.default_rng([seed, 1]))
    none = np.full(len(w.dag.stages), np.inf)
    base = simulate(w.dag, w.test.latency, draws, none).percentiles()
    base_train = simulate(w.dag, w.train.latency, model.draws, none).percentiles()["p99"]
    runs: dict[str, dict[str, dict[str, object]]] = {}
    plan = [(p, b) for p in EVERYWHERE for b in budgets]
    if small:  # SumVar too at every budget the searches run at
        plan += [("sumvar", b) for b in SMALL_BUDGETS if b not in budgets] + [(p, b) for p in SEARCHING for b in SMALL_BUDGETS]
    for policy, budget in plan:
        r = model.allocate(policy, budget, seed=seed, random_allocations=random_allocations)
        t = model.timeouts(r)
        test = simulate(w.dag, w.test.latency, draws, t)
        train = simulate(w.dag, w.train.latency, model.draws, t)
        runs.setdefault(policy, {})[f"{budget:g}"] = {
            "reduction": _reductions(base, test.percentiles()),
            "train_p99_reduction": 1.0 - train.percentiles()["p99"] / base_train,
            "planned": spent(model.costs, r),
            "spent_test": float(model.costs @ test.reissued),
            "spent_train": float(model.costs @ train.reissued),
        }
    return {"dag": w.dag.name, "stages": len(w.dag.stages), "fanout": bool(w.fanout_stages), "small": small, "p99": base["p99"], "runs": runs}


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def reissue_figures(dags: list[dict[str, object]], budgets: tuple[float, ...] = BUDGETS) -> dict[str, object]:
    """Means over DAGs per policy and budget, SumVar's spread (Fig. 5.5a), its other percentiles (Fig. 5.5b),
    train against test (Fig. 5.9) and SumVar against the brute-force searches on small DAGs (§5.4.2)."""
    def cell(d: dict, policy: str, budget: float) -> dict | None:
        return d["runs"].get(policy, {}).get(f"{budget:g}")

    def values(policy: str, budget: float, key: str = "p99", among: list[dict] = dags) -> list[float]:
        cells = [cell(d, policy, budget) for d in among]
        return [c["reduction"][key] if key in c["reduction"] else c[key] for c in cells if c is not None]

    sumvar_p99 = {f"{b:g}": np.array(values("sumvar", b)) for b in budgets}
    small = [d for d in dags if d["small"]]
    ratios = {p: [cell(d, "sumvar", b)["reduction"]["p99"] / other for d in small for b in SMALL_BUDGETS
                  if (other := cell(d, p, b)["reduction"]["p99"]) > 0] for p in SEARCHING}
    return {
        "p99_reduction_mean": {p: {f"{b:g}": _mean(values(p, b)) for b in budgets} for p in EVERYWHERE},
        "sumvar_p99_spread": {k: {q: float(np.percentile(v, q)) for q in (10, 25, 50, 75, 90)} for k, v in sumvar_p99.items()},
        "sumvar_percentiles": {f"p{q:g}": {f"{b:g}": _mean(values("sumvar", b, f"p{q:g}")) for b in budgets} for q in PERCENTILES},
        "train_vs_test": {f"{b:g}": {k: _mean(values("sumvar", b, k)) for k in ("train_p99_reduction", "planned", "spent_train", "spent_test")}
                          | {"test_p99_reduction": _mean(values("sumvar", b))} for b in budgets},
        "fanout_dags_p99_reduction": {f"{b:g}": _mean(values("sumvar", b, among=[d for d in dags if d["fanout"]])) for b in budgets},
        "other_dags_p99_reduction": {f"{b:g}": _mean(values("sumvar", b, among=[d for d in dags if not d["fanout"]])) for b in budgets},
        "small_dags": {
            "dags": len(small), "stages": sorted(d["stages"] for d in small),
            "p99_reduction_mean": {p: {f"{b:g}": _mean(values(p, b, among=small)) for b in SMALL_BUDGETS} for p in ("sumvar", *SEARCHING)},
            "sumvar_over": {p: {"mean": _mean(v), "share_at_least_0_94": _mean([x >= 0.94 for x in v]), "cases": len(v)} for p, v in ratios.items()},
        },
    }


def partial_stage(train: Responders, test: Responders, losses: tuple[float, ...] = LOSSES) -> dict[str, object]:
    """Every termination policy fitted on one fan-out stage's training queries at each loss budget, run on its
    test queries: the p95 and p99 reductions against waiting for every responder, and the loss met (§5.4.3)."""
    base = np.percentile(test.full, (95, 99))
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for policy in PARTIAL_POLICIES:
        for loss in losses:
            latency, met = test.outcome(fit(train, policy, loss).stop(test))
            p95, p99 = np.percentile(latency, (95, 99))
            runs.setdefault(policy, {})[f"{loss:g}"] = {"p95": 1 - p95 / base[0], "p99": 1 - p99 / base[1], "loss": met}
    return {"responders": test.n, "runs": runs}


def partial_figures(stages: list[dict[str, object]], losses: tuple[float, ...] = LOSSES) -> dict[str, object]:
    """Means over fan-out stages (the thesis averages its web, image and video stages, Fig. 5.6)."""
    def mean(policy: str, loss: float, key: str) -> float:
        return _mean([s["runs"][policy][f"{loss:g}"][key] for s in stages])

    return {
        "stages": len(stages),
        "responders": sorted(s["responders"] for s in stages),
        "kwiken": {k: {f"{r:g}": mean("kwiken", r, k) for r in losses} for k in ("p95", "p99", "loss")},
        "p99_by_policy": {p: {f"{r:g}": mean(p, r, "p99") for r in losses} for p in PARTIAL_POLICIES},
        "p95_by_policy": {p: {f"{r:g}": mean(p, r, "p95") for r in losses} for p in PARTIAL_POLICIES},
    }


def combined_dag(w: Workload, seed: int, budgets: tuple[float, ...] = COMBINED_BUDGETS, loss: float = 0.001) -> dict[str, object]:
    """Reissues alone (SumVar over every stage) against partial answers at the fan-out stages, the loss budget
    apportioned by SumVar over their V(r), plus reissues apportioned over the other stages (§5.3.4, Fig. 5.8b)."""
    model = ReissueModel.fit(w.dag, w.train, seed=seed)
    draws = reissue_draws(w.test.latency, np.random.default_rng([seed, 1]))
    fan = w.fanout_stages
    queries = {s: (Responders.of(w.responders[w.dag.names[s]][0]), Responders.of(w.responders[w.dag.names[s]][1])) for s in fan}
    curves = [partial_curve(queries[s][0])[0] for s in fan]
    share = apportion.sumvar(curves, np.ones(len(fan)), loss)  # independent stages of equal utility (§5.3.2)
    partial_latency = w.test.latency.copy()
    for s, r_s in zip(fan, share):
        train_q, test_q = queries[s]
        stop = test_q.outcome(fit(train_q, "kwiken", float(r_s)).stop(test_q))[0]
        partial_latency[:, s] *= stop / test_q.full
    base = np.percentile(w.dag.latency(w.test.latency), 99)
    rest = np.array([0.0 if s in fan else 1.0 for s in range(len(w.dag.stages))])  # w_s = 0: no reissues at fan-out stages
    out: dict[str, dict[str, float]] = {"reissues_only": {}, "reissues_and_partial": {}}
    for budget in budgets:
        alone = model.timeouts(apportion.sumvar(model.curves, model.costs, budget))
        both = model.timeouts(apportion.sumvar(model.curves, model.costs, budget, weights=rest))
        out["reissues_only"][f"{budget:g}"] = 1 - np.percentile(simulate(w.dag, w.test.latency, draws, alone).latency, 99) / base
        out["reissues_and_partial"][f"{budget:g}"] = 1 - np.percentile(simulate(w.dag, partial_latency, draws, both).latency, 99) / base
    return out


def combined_figures(dags: list[dict[str, object]]) -> dict[str, object]:
    """Mean p99 reductions over the DAGs with fan-out stages, per reissue budget, with and without 0.1 % partial answers."""
    return {"dags": len(dags)} | {k: {b: _mean([d[k][b] for d in dags]) for b in dags[0][k]} for k in ("reissues_only", "reissues_and_partial")} \
        if dags else {"dags": 0}


def catchup_dag(w: Workload, seed: int, budget: float = CATCH_UP_BUDGET, shares: tuple[float, ...] = CATCH_UP_SHARES) -> dict[str, object]:
    """Fig. 5.7b on one DAG: the p99 reduction from giving a share of the budget to global reissues (catch-up,
    §5.3.3), relative to spending all of it on local reissues (SumVar), on the test trace."""
    model = ReissueModel.fit(w.dag, w.train, seed=seed)
    draws = reissue_draws(w.test.latency, np.random.default_rng([seed, 1]))
    local_only = simulate(w.dag, w.test.latency, draws, model.timeouts(apportion.sumvar(model.curves, model.costs, budget)))
    base = float(np.percentile(local_only.latency, 99))
    out: dict[str, object] = {"dag": w.dag.name, "local_spent": float(apportion.normalised(model.costs) @ local_only.reissued)}
    for share in shares:
        test = catchup.simulate(model, w.test.latency, draws, *catchup.plan(model, budget, share))
        out[f"{share:.4f}"] = {"p99_reduction": 1.0 - float(np.percentile(test.latency, 99)) / base,
                               "spent": float(apportion.normalised(model.costs) @ test.reissued)}
    return out


def catchup_figures(dags: list[dict[str, object]], shares: tuple[float, ...] = CATCH_UP_SHARES) -> dict[str, object]:
    """Mean marginal p99 reduction over the DAGs per catch-up share, and how many DAGs gained or lost."""
    figures: dict[str, object] = {"dags": len(dags), "budget": CATCH_UP_BUDGET}
    for share in shares:
        runs = [d[f"{share:.4f}"] for d in dags]  # type: ignore[index]
        reductions = [r["p99_reduction"] for r in runs]  # type: ignore[index]
        figures[f"share_{share:.4f}"] = {"p99_marginal_reduction_mean": _mean(reductions),
                                         "dags_gaining": sum(x > 0 for x in reductions), "dags_losing": sum(x < 0 for x in reductions),
                                         "spent_mean": _mean([r["spent"] for r in runs])}  # type: ignore[index]
    return figures
