"""The Kwiken reproduction's figures (thesis Figs. 5.5, 5.6, 5.8b, 5.9 and §5.4.2's comparisons) as PNGs
and one HTML page, from the figures ``corral_yarn.kwiken.experiments`` computes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corral_yarn.report.charts import Line, lines_png, scatter_png
from corral_yarn.report.html import INDEX, figure, page, paragraph, section


def _pct(v: float) -> str:
    return f"{100 * v:.0f} %"


def _pct1(v: float) -> str:
    return f"{100 * v:.1f} %"


def _curve(by_budget: Mapping[str, float], budgets: list[str]) -> list[float]:
    return [by_budget[b] for b in budgets]


def reissue_pngs(reissue: Mapping[str, Any], dags: list[Mapping[str, Any]], at: str = "0.05") -> dict[str, bytes]:
    """Fig. 5.5a (p99 reduction against budget, spread over DAGs), 5.5b (other percentiles), the
    baselines of §5.4.2, and Fig. 5.9 (training against test) at budget ``at``."""
    budgets = [b for b in reissue["sumvar_p99_spread"] if float(b) < 1]
    x = [float(b) for b in budgets]
    spread = reissue["sumvar_p99_spread"]
    at_100 = {q: spread["1"][q] for q in spread["1"]} if "1" in spread else {}
    lines = [Line(f"mean (100 %: {_pct(reissue['p99_reduction_mean']['sumvar'].get('1', float('nan')))})",
                  _curve(reissue["p99_reduction_mean"]["sumvar"], budgets), marker="o")]
    for low, high, style in ((25, 75, "--"), (10, 90, ":")):
        for q in (low, high):
            lines.append(Line(f"p{q} of DAGs (100 %: {_pct(at_100.get(q, float('nan')))})", [spread[b][q] for b in budgets], style))
    files = {"fig_5_5a_reissue_p99.png": lines_png(x, lines, "Fig. 5.5a: p99 reduction by per-stage reissues (SumVar)",
                                                   "reissue budget", "p99 reduction", _pct, _pct)}
    files["fig_5_5b_percentiles.png"] = lines_png(
        x, [Line(q, _curve(v, budgets), marker="o") for q, v in reissue["sumvar_percentiles"].items()],
        "Fig. 5.5b: reduction at other percentiles (mean over DAGs)", "reissue budget", "reduction", _pct, _pct)
    files["baselines.png"] = lines_png(
        x, [Line(p, _curve(v, budgets), marker="o") for p, v in reissue["p99_reduction_mean"].items()],
        "§5.4.2: SumVar against the baselines (mean p99 reduction over DAGs)", "reissue budget", "p99 reduction", _pct, _pct)
    cells = [d["runs"]["sumvar"][at] for d in dags if at in d["runs"]["sumvar"]]
    files["fig_5_9_train_test.png"] = scatter_png(
        [(f"p99 reduction at {_pct(float(at))}", [c["train_p99_reduction"] for c in cells], [c["reduction"]["p99"] for c in cells]),
         ("budget used", [c["spent_train"] for c in cells], [c["spent_test"] for c in cells])],
        "training trace", "test trace", _pct1)
    return files


def partial_pngs(partial: Mapping[str, Any]) -> dict[str, bytes]:
    """Fig. 5.6a (reduction against utility loss) and 5.6b (Kwiken against the other termination policies)."""
    losses = list(partial["kwiken"]["p99"])
    x = [float(v) for v in losses]
    files = {"fig_5_6a_partial.png": lines_png(
        x, [Line(q, _curve(partial["kwiken"][q], losses), marker="o") for q in ("p95", "p99")],
        "Fig. 5.6a: fan-out stages, reduction by partial answers (Kwiken's policy)", "utility loss", "reduction", _pct1, _pct)}
    files["fig_5_6b_policies.png"] = lines_png(
        x, [Line(p, _curve(v, losses), marker="o") for p, v in partial["p99_by_policy"].items()],
        "Fig. 5.6b: p99 reduction of fan-out stages by termination policy", "utility loss", "p99 reduction", _pct1, _pct)
    return files


def combined_pngs(combined: Mapping[str, Any]) -> dict[str, bytes]:
    """Fig. 5.8b (left): reissues alone against reissues with 0.1 % partial answers."""
    budgets = list(combined["reissues_only"])
    return {"fig_5_8b_combined.png": lines_png(
        [float(b) for b in budgets], [Line(k, _curve(v, budgets), marker="o") for k, v in combined.items() if isinstance(v, dict)],
        "Fig. 5.8b: reissues and partial answers together (mean p99 reduction, DAGs with fan-out stages)",
        "reissue budget", "p99 reduction", _pct, _pct)}


def render(pngs: dict[str, bytes], notes: list[str]) -> dict[str, bytes]:
    """The report directory's files: the PNGs and an index.html embedding them."""
    sections = [section(name, figure(png, name, name)) for name, png in pngs.items()]
    html = page("Kwiken on synthetic DAGs", "corral-yarn's reproduction of thesis ch. 5 (docs/kwiken.md)",
                [section("Notes", *[paragraph(n) for n in notes]), *sections])
    return {**pngs, INDEX: html.encode()}
