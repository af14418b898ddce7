"""Kwiken for YARN speculative execution (issue 17 item 4, beyond the thesis): one cluster budget of extra
container-seconds apportioned over the map and reduce stages of recurring MapReduce jobs by SumVar
(§5.3.1), carried out through each job's own speculation settings (docs/kwiken.md).

A stage is one task type of one recurring job: N tasks whose durations the history holds. It completes
when its slowest task does, so its latency is max_i X_i over N task durations drawn from its history,
and a speculative copy launched at T (the (1 - r) quantile of task durations, as Kwiken's reissues,
§3.2.2) makes a task take min(X, T + L' + X') (L': the copy's seconds before its timed part, a reduce copy's own
shuffle and sort). V_s(r) is the variance of that maximum, by offline
resampling. The cost c_s is the stage's container-seconds per run (N x mean task container duration, a
reduce's shuffle and sort included), which SumVar apportions (eq. 5.3). Its linear cost (a copy costs a
mean task) is not what copies spend: a copy at T that loses runs X - T, one that wins leaves the
original's container behind (L + T + L' + X', L its seconds before the timed part: a reduce copy shuffles
again), and only tasks past T are copied. So the budget B is what a cluster measures, the container-seconds of attempts that did not
succeed, as a fraction of the stages' container-seconds without copies, estimated by the same
resampling (``copy_spend``), and SumVar apportions B over each stage's curve drawn against that spend
(``spend_curve``; ``plan_speculation``), each stage's share rounded to one of its measured points (one point: one T_s).

Hadoop's DefaultSpeculator (3.5) has no timeout of its own: with its default estimator a task gets a copy
once every task of its type has a container, one (and 5 %) of them finished, and its projected end is
later than now + the mean duration of the finished ones, so a budget maps onto copies only loosely.
Kwiken's settings therefore name our TaskRuntimeEstimator (java_patch, ``KwikenTaskRuntimeEstimator``,
on the MR AM's classpath), which makes DefaultSpeculator copy the tasks that will run past T_s, with
the caps and the rescan interval set so that T_s, not a cap or a timer, decides (``settings``).

Two rules see "will run past T_s" (``Rule``, a per-job property read by the estimator): ``timeout``, the thesis's
(§5.3.1): once the attempt has run T_s; and ``progress`` (ours, beyond the thesis): also once its projected runtime,
elapsed / progress at its last status of progress > 0, exceeds T_s, judged from max(``MIN_ELAPSED_FRACTION`` x T_s,
one status interval) on. An attempt that has reported no progress is judged on its time run, as under the timeout
rule; measured, map attempts of the benchmark's jobs send no progress before their last second (their JVM's start
is most of their time), so their copies start at T under either rule. JobHistory keeps no status times, so the
planner cannot foresee which attempts report progress early: it prices every copy at T under both rules (curves
and spend); a copy the projection starts earlier, at D < T, runs X - D rather than X - T if it loses.

Two scales say what T_s is measured against (``Scale``, a per-job property read by the estimator): ``absolute``,
T_s in ms, a quantile of the history's durations (the planner's default); and ``relative`` (ours, beyond the thesis):
T_s over the mean of the stage's past durations (``StageSpeculation.timeout_ratio``), which the estimator multiplies
by the mean duration of the job's own succeeded tasks of that type once one has succeeded (the absolute T_s before),
so that T_s follows the run's load as DefaultSpeculator's judgement against finished tasks does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from corral_yarn.contracts import Name
from corral_yarn.kwiken.apportion import spent, sumvar
from corral_yarn.kwiken.curves import CURVE_POINTS, VarianceCurve, reissued, timeout

SETTINGS_SCHEMA = "corral-yarn/kwiken-yarn/v3"
DRAWS = 4000  # resampled runs of a stage per point of its curve
MAX_RAISE = 4.0  # the most ``spend_calibration`` raises a plan that underspent: one quiet round cannot blow it up
MIN_SAMPLES = 8  # fewer task durations give no usable tail: the stage gets no budget
MAX_REISSUE = 0.5  # a copy is for a straggler: T_s is never below the stage's median duration (r_s <= 0.5)
TaskType = Literal["map", "reduce"]
Rule = Literal["progress", "timeout"]
Scale = Literal["relative", "absolute"]
MIN_ELAPSED_FRACTION = 0.25  # the progress rule judges an attempt's projection once it has run this share of T_s

# Hadoop's keys (MRJobConfig; defaults in mapred-default.xml) that a Kwiken plan sets per job.
SPECULATIVE = {"map": "mapreduce.map.speculative", "reduce": "mapreduce.reduce.speculative"}
CAP_RUNNING = "mapreduce.job.speculative.speculative-cap-running-tasks"  # default 0.1
CAP_TOTAL = "mapreduce.job.speculative.speculative-cap-total-tasks"  # default 0.01
MINIMUM_ALLOWED = "mapreduce.job.speculative.minimum-allowed-tasks"  # default 10
RETRY_AFTER_SPECULATE = "mapreduce.job.speculative.retry-after-speculate"  # default 15000 ms
RETRY_AFTER_NO_SPECULATE = "mapreduce.job.speculative.retry-after-no-speculate"  # default 1000 ms
SCAN_MS = 1000  # Kwiken's jobs rescan at the default no-speculation interval after a copy too
ESTIMATOR = "yarn.app.mapreduce.am.job.task.estimator.class"  # MRJobConfig.MR_AM_TASK_ESTIMATOR, per job
KWIKEN_ESTIMATOR = "io.corralyarn.mapreduce.KwikenTaskRuntimeEstimator"
SPECULATOR = "yarn.app.mapreduce.am.job.speculator.class"  # MRJobConfig.MR_AM_JOB_SPECULATOR, per job
DISTINCT_NODE_SPECULATOR = "io.corralyarn.mapreduce.DistinctNodeSpeculator"  # DefaultSpeculator; a copy never stays on its original's node
TIMEOUT_MS = {"map": "corral.kwiken.map.timeout-ms", "reduce": "corral.kwiken.reduce.timeout-ms"}  # T_s, read by it
RULE = "corral.kwiken.rule"  # progress | timeout, read by it
SCALE = "corral.kwiken.timeout-scale"  # relative | absolute, read by it
TIMEOUT_RATIO = {"map": "corral.kwiken.map.timeout-ratio", "reduce": "corral.kwiken.reduce.timeout-ratio"}  # T_s / mean, read by it
MIN_ELAPSED = "corral.kwiken.progress.min-elapsed-fraction"  # read by it


@dataclass(frozen=True)
class TaskStage:
    """One stage: a task type of a recurring job, its tasks per run and its tasks' past durations (s), timed as
    Kwiken's estimator times them (a reduce from its reduce phase), and beside each the seconds its container
    ran before that (a reduce's shuffle and sort; None: none, as a map)."""

    job: str
    type: TaskType
    tasks: int
    durations: NDArray[np.float64]
    before: NDArray[np.float64] | None = None

    @property
    def lead(self) -> NDArray[np.float64]:
        """Per duration, the container's seconds before the timed part."""
        return np.zeros_like(self.durations, dtype=np.float64) if self.before is None else np.asarray(self.before, dtype=np.float64)

    @property
    def name(self) -> str:
        return f"{self.job}/{self.type}"

    @property
    def speculatable(self) -> bool:
        """A stage with too few past durations has no usable tail (Kwiken's estimator copies even a lone task)."""
        return self.durations.size >= MIN_SAMPLES

    def attempts(self, picked: NDArray[np.intp]) -> NDArray[np.float64]:
        """L + X of the picked past attempts: a whole container's seconds, what a copy costs and takes (a reduce copy shuffles again)."""
        return self.lead[picked] + np.asarray(self.durations, dtype=np.float64)[picked]

    @property
    def container_seconds(self) -> float:
        """c_s before normalising: the stage's task container-seconds per run (whole containers)."""
        return self.tasks * float(self.durations.mean() + self.lead.mean())


def makespan_curve(stage: TaskStage, rng: np.random.Generator, points: int = CURVE_POINTS, draws: int = DRAWS) -> VarianceCurve:
    """V_s(r): the variance of max_i X_i over the stage's N tasks, X_i > T (the (1 - r) quantile, §3.2.2) made
    min(X_i, T + L'_i + X'_i) by a copy started at T that runs a whole attempt (``TaskStage.attempts``); r up to
    MAX_REISSUE, so SumVar never times a stage out below its median (at r = 1 every task was copied at launch)."""
    x = np.sort(np.asarray(stage.durations, dtype=np.float64))
    runs, copies = rng.choice(x, size=(draws, stage.tasks)), stage.attempts(rng.integers(0, x.size, size=(draws, stage.tasks)))
    if not stage.speculatable:
        v0 = float(runs.max(axis=1).var())
        return VarianceCurve.of(np.array([0.0, 1.0]), np.array([v0, v0]))
    r = np.unique(np.concatenate([[0.0], np.geomspace(1.0 / x.size, MAX_REISSUE, points)]))
    v = np.array([reissued(runs, copies, t).max(axis=1).var() for t in (timeout(x, f) for f in r)])
    return VarianceCurve.of(r, v)


def apportion(stages: Sequence[TaskStage], budget: float, seed: int = 0) -> tuple[NDArray[np.float64], list[VarianceCurve]]:
    """r_s per stage by SumVar over the stages' curves, with c_s their container-seconds (§5.3.1, eq. 5.3)."""
    rng = np.random.default_rng(seed)
    curves = [makespan_curve(s, rng) for s in stages]
    r = sumvar(curves, [s.container_seconds for s in stages], budget)
    return r, curves


def copy_spend(stage: TaskStage, r: float, rng: np.random.Generator, draws: int = DRAWS) -> tuple[float, float]:
    """Expected (extra, kept) container-seconds of one run of the stage with copies of the tasks past T = the
    (1 - r) quantile, each started at T.

    A task X > T gets a copy at T (§3.2.2) that runs a whole attempt L' + X' (``TaskStage.attempts``: a reduce
    copy shuffles again); if the original ends first (X <= T + L' + X') the copy ran X - T, else the original's
    container ran L + T + L' + X' (L: its seconds before the timed part, a reduce's shuffle) and is killed:
    that is the extra; the winner's container (L + X, or the copy's L' + X') is kept.
    """
    order = np.argsort(stage.durations, kind="stable")
    x, lead = np.asarray(stage.durations, dtype=np.float64)[order], stage.lead[order]
    picked = rng.integers(0, x.size, size=(draws, stage.tasks))
    runs, copies = x[picked], stage.attempts(rng.integers(0, x.size, size=(draws, stage.tasks)))
    t = float(timeout(x, r)) if stage.speculatable else np.inf
    copied, wins = runs > t, runs > t + copies
    extra = np.where(copied, np.where(wins, lead[picked] + t + copies, runs - t), 0.0)
    return float(extra.sum(axis=1).mean()), float(np.where(copied & wins, copies, lead[picked] + runs).sum(axis=1).mean())


def expected_spend(stages: Sequence[TaskStage], r: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """The allocation's expected (extra, kept) container-seconds per run of every job (``copy_spend`` summed)."""
    rng = np.random.default_rng(seed)
    spends = [copy_spend(s, float(r_s), rng) for s, r_s in zip(stages, r)]
    return sum(e for e, _ in spends), sum(k for _, k in spends)


def budget_matching(extra_container_s: float, stages: Sequence[TaskStage]) -> float:
    """The budget B whose copies are expected to spend ``extra_container_s`` per run of every job (another
    policy's measured spend, say): over the container-seconds the history's stages keep without copies."""
    return min(1.0, max(0.0, extra_container_s) / sum(s.container_seconds for s in stages))


def spend_calibration(spent: float, expected: float, max_raise: float = MAX_RAISE) -> float:
    """The factor to divide the next plan's target extra container-seconds by: the copies' measured spend so far
    over what their plans expected (the plan then expects target / factor, which at the measured factor spends
    the target, never more); at least 1 / ``max_raise``, so a plan that underspent is raised at most that much;
    1 when nothing was expected (no evidence)."""
    return max(1.0 / max_raise, spent / expected) if expected > 0 else 1.0


@dataclass(frozen=True)
class SpendCurve:
    """V_s against u, the stage's expected extra container-seconds per run (``copy_spend``) over its container-seconds:
    eq. 5.3's cost axis measured as a cluster measures a copy, not c_s r_s. ``variance`` is its hull, for SumVar; ``u``,
    ``v``, ``r`` are the measured points that no cheaper point beats (u ascending, v descending), which a plan is
    rounded to, since one T_s is one point."""

    variance: VarianceCurve
    u: NDArray[np.float64]
    v: NDArray[np.float64]
    r: NDArray[np.float64]

    def at_most(self, u: float) -> int:
        """The point of lowest variance that spends at most ``u``."""
        return int(np.searchsorted(self.u, u + 1e-12, side="right")) - 1


def spend_curve(stage: TaskStage, rng: np.random.Generator, points: int = CURVE_POINTS, draws: int = DRAWS) -> SpendCurve:
    """The stage's makespan curve (``makespan_curve``) on the spend axis u(r) = E[extra container-seconds] / c_s. The
    spend is not monotone in r where the durations have a gap: copies at a late T mostly lose within seconds, while
    moving T below the gap copies the stragglers early and their killed originals count, so u jumps there."""
    by_r = makespan_curve(stage, rng, points, draws)
    u = np.array([copy_spend(stage, float(f), rng, draws)[0] for f in by_r.r]) / max(stage.container_seconds, 1e-12)
    order = np.lexsort((by_r.r, by_r.v, u))  # by spend, then variance, then the lower r
    kept = [k for n, k in enumerate(order) if n == 0 or by_r.v[k] < by_r.v[order[:n]].min()]
    return SpendCurve(VarianceCurve.of(u, by_r.v), u[kept], by_r.v[kept], by_r.r[kept])


def rounded(curves: Sequence[SpendCurve], shares: NDArray[np.float64], u: NDArray[np.float64], budget: float) -> list[int]:
    """SumVar's u_s rounded to measured points: each stage to its best point within u_s, then, while budget is left,
    the move to a costlier point of one stage that drops its variance most per unit spend and still fits (§5.3.1's
    greedy, on whole points)."""
    k = [c.at_most(u_s) for c, u_s in zip(curves, u)]
    left = budget - sum(float(c_s * c.u[k_s]) for c, c_s, k_s in zip(curves, shares, k))
    while True:
        moves = [((c.v[k[s]] - c.v[j]) / (shares[s] * (c.u[j] - c.u[k[s]])), s, j) for s, c in enumerate(curves)
                 for j in range(k[s] + 1, c.u.size) if shares[s] * (c.u[j] - c.u[k[s]]) <= left + 1e-12 and c.u[j] > c.u[k[s]]]
        if not moves:
            return k
        _, s, j = max(moves)
        left -= float(shares[s] * (curves[s].u[j] - curves[s].u[k[s]]))
        k[s] = j


def settings(stages: Sequence[tuple[TaskType, float, int, float | None]], rule: Rule = "progress",
             ratios: Mapping[TaskType, float | None] | None = None) -> dict[str, str]:
    """One job's speculation settings for its stages' (type, r_s, N_s, T_s in s or None) under ``rule``; with
    ``ratios`` (per type, T_s over the stage's mean past duration) on the relative scale, else the absolute.

    A type speculates iff r_s > 0, through Kwiken's estimator with T_s in ms and the rule: DefaultSpeculator
    then copies a task once it runs past T_s (§3.2.2), or once it is projected to. It lets max(minimum-allowed-tasks, cap-total x N,
    cap-running x running) copies of a type run at once: both caps 0 and the minimum the job's largest
    N_s leave every overdue task its copy; it rescans 1 s after a copy rather than 15 s. Its speculator kills a copy
    that starts on the node of its task's running attempt (it would meet the same slow node), and may copy again.
    """
    props = {SPECULATIVE[t]: "true" if r > 0 else "false" for t, r, _, _ in stages}
    timed = [(t, n, timeout_s) for t, r, n, timeout_s in stages if r > 0 and timeout_s is not None]
    if timed:
        props |= {ESTIMATOR: KWIKEN_ESTIMATOR, SPECULATOR: DISTINCT_NODE_SPECULATOR, CAP_RUNNING: "0", CAP_TOTAL: "0", MINIMUM_ALLOWED: str(max(n for _, n, _ in timed)),
                  RETRY_AFTER_SPECULATE: str(SCAN_MS), RETRY_AFTER_NO_SPECULATE: str(SCAN_MS), RULE: rule}
        if rule == "progress":
            props[MIN_ELAPSED] = str(MIN_ELAPSED_FRACTION)
        props |= {TIMEOUT_MS[t]: str(round(timeout_s * 1000)) for t, _, timeout_s in timed}
        if ratios is not None:
            props[SCALE] = "relative"
            props |= {TIMEOUT_RATIO[t]: f"{ratios[t]:.6g}" for t, _, _ in timed if ratios.get(t) is not None}
    return props


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class StageSpeculation(_Strict):
    """One stage's share of the budget."""

    type: TaskType
    tasks: int = Field(ge=1, description="N_s: tasks per run (median over the history's runs)")
    samples: int = Field(ge=1, description="task durations the curve was learned from")
    reissue_fraction: float = Field(ge=0.0, le=1.0, description="r_s: the share of its tasks that may get a speculative copy")
    timeout_s: float | None = Field(ge=0.0, description="T_s, the (1 - r_s) quantile of task durations; null: no copies")
    timeout_ratio: float | None = Field(default=None, ge=0.0, description="T_s over the mean of the task durations (the relative scale's); null: no copies, or a file from before session 10")
    cost_share: float = Field(ge=0.0, le=1.0, description="c_s: the stage's share of the task container-seconds")
    variance: float = Field(ge=0.0, description="V_s(0): variance of the stage's completion (s^2), no copies")
    planned_variance: float = Field(ge=0.0, description="V̄_s(r_s), from the curve's hull")


class JobSpeculation(_Strict):
    """One recurring job's stages and the settings its submission carries."""

    key: str = Name
    stages: list[StageSpeculation] = Field(min_length=1)
    properties: dict[str, str]


class SpeculationSettings(_Strict):
    """The settings file: per recurring job, the speculation settings of its next submissions."""

    schema_version: Literal["corral-yarn/kwiken-yarn/v3"] = SETTINGS_SCHEMA
    rule: Rule = Field(default="timeout", description="how the estimator sees a task that will run past T_s (files without it: timeout)")
    scale: Scale = Field(default="absolute", description="what T_s is measured against: relative, the job's own succeeded tasks; absolute (files without it), the history's")
    budget: float = Field(ge=0.0, le=1.0, description="B: container-seconds of attempts that do not succeed, a fraction of the stages' without copies")
    sumvar_budget: float = Field(ge=0.0, le=1.0, description="SumVar's budget: B itself since SumVar runs on the spend axis (before session 13, eq. 5.3's units fitted to B)")
    planned_cost: float = Field(ge=0.0, le=1.0, description="sum_s c_s u_s, SumVar's allocation on the spend axis (u_s: a stage's expected extra over its container-seconds) <= sumvar_budget")
    planned_extra_fraction: float = Field(ge=0.0, le=1.0, description="the allocation's expected spend in B's units, by resampling (its curves' points); <= B")
    expected_extra_container_s: float = Field(ge=0.0, description="the allocation's expected extra container-seconds per run of every job")
    container_seconds: float = Field(ge=0.0, description="sum of c_s before normalising: task container-seconds of one run of every job")
    runs: int = Field(ge=1, description="history runs the curves were learned from")
    jobs: list[JobSpeculation]

    @model_validator(mode="after")
    def _checked(self) -> SpeculationSettings:
        if self.planned_cost > self.sumvar_budget + 1e-9:
            raise ValueError(f"planned_cost {self.planned_cost} is over the sumvar_budget {self.sumvar_budget}")
        if self.planned_extra_fraction > self.budget + 1e-9:
            raise ValueError(f"planned_extra_fraction {self.planned_extra_fraction} is over the budget {self.budget}")
        keys = [j.key for j in self.jobs]
        if dupes := sorted({k for k in keys if keys.count(k) > 1}):
            raise ValueError(f"jobs {dupes} appear more than once")
        return self

    def properties(self, key: str) -> dict[str, str]:
        """The job configuration for recurring job ``key``; none (the cluster's defaults) for a job not planned."""
        return next((j.properties for j in self.jobs if j.key == key), {})


def plan_speculation(stages: Sequence[TaskStage], budget: float, runs: int, seed: int = 0, rule: Rule = "progress",
                     scale: Scale = "absolute") -> SpeculationSettings:
    """Apportion ``budget`` (extra container-seconds, as a cluster measures them) over ``stages`` (from ``runs``
    history runs) by SumVar on the spend axis (``spend_curve``, eq. 5.3 with u_s for r_s), each stage's share rounded
    to one of its measured points (``rounded``), and turn each job's r_s into its settings under ``rule`` on ``scale``."""
    rng = np.random.default_rng(seed)
    curves = [spend_curve(s, rng) for s in stages]
    cost = np.array([s.container_seconds for s in stages])
    share = cost / cost.sum()
    k = rounded(curves, share, sumvar([c.variance for c in curves], cost, budget), budget)
    u = np.array([c.u[k_s] for c, k_s in zip(curves, k)])
    jobs: dict[str, list[tuple[TaskStage, StageSpeculation]]] = {}
    for stage, curve, k_s, c in zip(stages, curves, k, share):
        r_s = float(curve.r[k_s])
        t = timeout(np.sort(stage.durations), r_s)
        jobs.setdefault(stage.job, []).append((stage, StageSpeculation(
            type=stage.type, tasks=stage.tasks, samples=int(stage.durations.size), reissue_fraction=r_s,
            timeout_s=None if np.isinf(t) else float(t), timeout_ratio=None if np.isinf(t) else float(t / stage.durations.mean()),
            cost_share=float(c), variance=float(curve.v[0]), planned_variance=float(curve.v[k_s]))))
    planned = [JobSpeculation(key=key, stages=[s for _, s in pairs],
                              properties=settings([(s.type, s.reissue_fraction, s.tasks, s.timeout_s) for _, s in pairs], rule,
                                                  {s.type: s.timeout_ratio for _, s in pairs} if scale == "relative" else None))
               for key, pairs in jobs.items()]
    expected = min(budget, float(share @ u))  # <= budget by construction; min only absorbs float rounding
    return SpeculationSettings(rule=rule, scale=scale, budget=budget, sumvar_budget=budget, planned_cost=expected,
                               planned_extra_fraction=expected, expected_extra_container_s=float(cost @ u), runs=runs,
                               container_seconds=float(cost.sum()), jobs=planned)
