"""Paragon's EC2 evaluation (paper 003 §4-5) on generated ground truth: 1,000 servers of 14 SCs,
workloads arriving one per second, each scheduled on arrival by Paragon or a baseline.

A job's performance at any moment is its speed on the server's SC over its speed on its best SC (both alone),
times (1 - interference degradation), times the cores it gets over the cores it gets alone there when the
server is oversubscribed. Degradation (docs/paragon.md): with pressure P_k = the summed caused scores of the
other jobs on the server over its shared-resource capacity (groundtruth.capacity),
QOS_LOSS max_k min(1, P_k / t_k) up to tolerance (a tolerated score is the pressure at which the job loses
5 %, §2.3) plus the world's excess slope (groundtruth.EXCESS_SLOPE) times sum_k max(0, P_k - t_k) beyond it.
A job meets QoS when its time-averaged performance is >= 0.95 (within 5 % of alone on the best SC).
Durations are nominal (not stretched by slowdown)."""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from corral_yarn.paragon import classify, groundtruth
from corral_yarn.paragon.schedule import (QOS_LOSS, SC_RULES, Job, Servers, greedy, guarded, heterogeneity_oblivious,
                                          interference_oblivious, random_server, statistical)

# §4: (workloads, burst after the first half, burst size, required cores over the cluster's cores at the peak)
SCENARIOS = {"low": (2500, 0, 0.5), "high": (5000, 0, 0.9), "oversubscribed": (7500, 1000, 1.3)}
SCHEDULERS = ("paragon", "heterogeneity_oblivious", "interference_oblivious", "random", "paragon_statistical")
OPTIONS = ("paragon_statistical_as_written",)  # §3.2's ring with one point per hashed score (the default spreads ties)
MATRICES = ("sc", "tolerated", "caused")
GROW_EPOCHS = 10  # SGD epochs of each re-decomposition of a grown matrix (it starts at the SVD of R; docs/paragon.md)


@dataclass(frozen=True)
class Classified:
    """Predicted rows of the workloads and the time of each batch's classification."""

    jobs: list[Job]
    batch_ms: list[float]
    accuracy: dict[str, float]


@dataclass(frozen=True)
class Trained:
    """The three trained utility matrices and the two SCs (and SoIs) every new job is profiled on."""

    sc: classify.Model
    tolerated: classify.Model
    caused: classify.Model
    profile_scs: tuple[int, ...]
    profile_sois: tuple[int, ...] | None  # None: two random SoIs per job (§2.3)
    offline: tuple[np.ndarray, np.ndarray, np.ndarray]  # the dense offline rows of the three matrices
    band: tuple[classify.Band, classify.Band]  # per SoI: sigma of tolerated scores too high, of caused scores too low (BAND_SIDES)


FITS = ("scaled", "validated_rank", "energy")  # how each matrix is fitted: see `models`
BAND_SIDES = ("over", "under")  # the guard band's side per interference matrix: tolerated too high, caused too low break QoS
GUARD = 1.0  # the default guard band in sigmas (ours, beyond the paper; declared before any measurement, not tuned)
GUARDED = ("paragon",)  # the schedulers that plan with the guard band: the baselines are as published, without
BAND_LEVELS = 1  # the guard band's levels of the predicted score (1: one sigma per SoI, session 13; classify.LEVELS: level-aware)
SOI_RULES = ("chosen", "random")  # a new job's two profiled SoIs: chosen once by validation on the offline rows (ours), or random per job (§2.3)
SOI_RULE = "chosen"  # the default (docs/paragon.md "Session 17")
SC_RULE = "best_present"  # the greedy's SC step (schedule.SC_RULES; docs/paragon.md "Session 19")
VALIDATIONS = ("random_entries", "profiled_sois")  # the interference matrices' eta, lambda, rank: see `models`
VALIDATION = "random_entries"  # the default (docs/paragon.md "Session 19 ... why some seeds fall")


def models(w: groundtruth.World, offline: int, rng: np.random.Generator, fit: str = "scaled", levels: int = BAND_LEVELS,
           soi_rule: str = SOI_RULE, validation: str = VALIDATION) -> Trained:
    """Train the three utility matrices on `offline` densely profiled jobs, eta and lambda by validation, and choose
    the profiling SCs by validation on the same offline rows. `fit` "energy": the rank by the energy cut (sessions
    1-11); "validated_rank": the rank chosen with eta and lambda by validation; "scaled" (default): as well the
    interference matrices' columns divided by their offline spread (a new job's two random SoIs range over 10x spreads).
    The profiled SoIs by `soi_rule` (SOI_RULES; `profiled_sois`). The guard band of each interference matrix, in `levels`
    of the predicted score: a 4-fold cross-validation over the same offline rows with the validated parameters, each
    held-out row profiled as the rule profiles new jobs (`bands`). `validation` (VALIDATIONS): the interference matrices'
    eta, lambda and rank as validated with the others ("random_entries": one split, held-out rows from random entries), or
    validated again once the SoIs are chosen, on the profiled SoIs (`on_profiled_sois`)."""
    if fit not in FITS:
        raise ValueError(f"fit: unknown {fit!r}, expected one of {', '.join(FITS)}")
    if validation not in VALIDATIONS:
        raise ValueError(f"validation: unknown {validation!r}, expected one of {', '.join(VALIDATIONS)}")
    dense = groundtruth.jobs(w, offline, rng)
    matrices = (groundtruth.per_core_log_speed(dense), dense.tolerated, dense.caused)
    out = []
    for k, matrix in enumerate(matrices):
        scaled = fit == "scaled" and k > 0
        ranks = (0,) if fit == "energy" else classify.validated_ranks(matrix, standardise=scaled)
        eta, lam, rank = classify.choose_sgd(matrix, ranks=ranks, standardise=scaled)
        out.append(classify.train(matrix, eta=eta, lam=lam, rank=rank, standardise=scaled))
    pair = classify.choose_profile_columns(matrices[:1], [classify.fitter(out[0].eta, out[0].lam)], folds=min(5, offline // 2))
    sois = profiled_sois(out[1:], matrices[1:], soi_rule)
    if validation == "profiled_sois" and sois is not None:
        out[1:] = on_profiled_sois(out[1:], matrices[1:], sois)
    return Trained(*out, profile_scs=pair, profile_sois=sois, offline=matrices, band=bands(out[1:], matrices[1:], levels, sois))


def on_profiled_sois(trained: list[classify.Model], offline: tuple[np.ndarray, ...], sois: tuple[int, ...]) -> list[classify.Model]:
    """The tolerated and caused matrices retrained with eta, lambda and rank validated as new jobs are classified
    (classify.choose_sgd_on_profiled: k-fold, each held-out offline row reconstructed from the profiled `sois`), each
    matrix with its own scaling and its ranks (classify.validated_ranks)."""
    out = []
    for model, dense in zip(trained, offline):
        scaled = model.scales is not None
        ranks = classify.validated_ranks(dense, standardise=scaled) if model.rank else (0,)
        eta, lam, rank = classify.choose_sgd_on_profiled(dense, np.array([sois]), ranks=ranks, standardise=scaled)
        out.append(classify.train(dense, eta=eta, lam=lam, rank=rank, standardise=scaled))
    return out


def profiled_sois(trained: list[classify.Model], offline: tuple[np.ndarray, ...], rule: str) -> tuple[int, ...] | None:
    """The two SoIs every new job is profiled against under `rule`: "chosen", by validation of the tolerated and caused
    matrices together on their offline rows (classify.choose_profile_columns; one microbenchmark run gives both of a job's
    scores), or None for "random" (two random SoIs per job, §2.3)."""
    if rule not in SOI_RULES:
        raise ValueError(f"soi_rule: unknown {rule!r}, expected one of {', '.join(SOI_RULES)}")
    if rule == "random":
        return None
    fits = [classify.fitter(m.eta, m.lam, m.rank, m.scales is not None) for m in trained]
    return classify.choose_profile_columns(offline, fits, folds=min(5, offline[0].shape[0] // 2))


def bands(trained: list[classify.Model], offline: tuple[np.ndarray, ...], levels: int,
          sois: tuple[int, ...] | None) -> tuple[classify.Band, classify.Band]:
    """The guard band of the tolerated and caused matrices (BAND_SIDES) in `levels` of the predicted score, from a k-fold
    cross-validation of their offline rows with each model's validated eta, lambda, rank and scaling, each held-out row
    reconstructed from the profiled `sois` (None: from every pair, §2.3's random SoIs)."""
    sets = None if sois is None else np.array([sois])
    tol, cause = (classify.validation_band(dense, m.eta, m.lam, m.rank, side, standardise=m.scales is not None, levels=levels,
                                           sets=sets)
                  for m, dense, side in zip(trained, offline, BAND_SIDES))
    return tol, cause


def rebanded(trained: Trained, levels: int) -> Trained:
    """The same trained matrices with their guard band in `levels` of the predicted score."""
    return dataclasses.replace(trained, band=bands([trained.tolerated, trained.caused], trained.offline[1:], levels, trained.profile_sois))


def with_soi_rule(trained: Trained, rule: str) -> Trained:
    """The same trained matrices with the profiled SoIs of `rule` (SOI_RULES) and their guard band (at the band's levels)."""
    sois = profiled_sois([trained.tolerated, trained.caused], trained.offline[1:], rule)
    levels = trained.band[0].sigma.shape[0]
    return dataclasses.replace(trained, profile_sois=sois,
                               band=bands([trained.tolerated, trained.caused], trained.offline[1:], levels, sois))


def classify_workloads(trained: Trained, truth: groundtruth.Truth, rng: np.random.Generator, batch: int,
                       grow_every: int = 0, grown: tuple[str, ...] = MATRICES, grow_solver: str = "sgd") -> Classified:
    """Classify arrivals in batches of `batch` from their two-SC and two-SoI profiles only (on `trained`'s profiling
    SCs and SoIs). With `grow_every` > 0 the profiled rows of the arrivals so far are added to the `grown` matrices,
    decomposed again every `grow_every` arrivals (§2.2) by `grow_solver` (classify.SOLVERS), before the next batch is
    classified."""
    if set(grown) - set(MATRICES):
        raise ValueError(f"grown: unknown matrices {sorted(set(grown) - set(MATRICES))}, expected some of {', '.join(MATRICES)}")
    if grow_solver not in classify.SOLVERS:
        raise ValueError(f"grow_solver: unknown {grow_solver!r}, expected one of {', '.join(classify.SOLVERS)}")
    seen = groundtruth.profile(truth, rng, sc_cols=trained.profile_scs, soi_cols=trained.profile_sois)
    profiles = (seen.sc, seen.tolerated, seen.caused)
    models = [trained.sc, trained.tolerated, trained.caused]
    rows: list[list[np.ndarray]] = [[], [], []]
    times = []
    for lo in range(0, truth.cores.size, batch):
        if grow_every and lo and lo // grow_every > (lo - batch) // grow_every:
            models = [classify.grow(m, dense, classify.Sparse(cols=k.cols[:lo], values=k.values[:lo]), epochs=GROW_EPOCHS,
                                    solver=grow_solver)
                      if name in grown else m for name, m, dense, k in zip(MATRICES, models, trained.offline, profiles)]
        part = slice(lo, lo + batch)
        start = time.perf_counter()
        for out, model, known in zip(rows, models, profiles):
            out.append(classify.classify(model, classify.Sparse(cols=known.cols[part], values=known.values[part])))
        times.append((time.perf_counter() - start) * 1e3)
    sc, tol, cause = (np.vstack(r) for r in rows)
    sc = sc + np.log(truth.fit)  # the known core-count cut back on the learned per-core speed
    accuracy = {**classify.heterogeneity_metrics(sc, truth.speed, seen.sc.cols),
                **{f"ceiling_{k}": v for k, v in classify.heterogeneity_metrics(np.log(truth.expected), truth.speed).items()
                   if k in ("best_sc", "within_5pct")},
                **classify.interference_metrics(np.hstack([tol, cause]), np.hstack([truth.tolerated, truth.caused])),
                "caused_top_decile_bias": classify.top_decile_bias(cause, truth.caused)}
    tol, cause = np.clip(tol, 0, 1), np.clip(cause, 0, 1)
    widths = [entry_band(b, p, k.cols) for b, p, k in zip(trained.band, (tol, cause), profiles[1:])]
    jobs = [Job(sc_score=sc[j], tolerated=tol[j], caused=cause[j], cores=int(truth.cores[j]),
                band=(widths[0][j], widths[1][j])) for j in range(truth.cores.size)]
    return Classified(jobs=jobs, batch_ms=times, accuracy=accuracy)


def entry_band(band: classify.Band, predicted: np.ndarray, profiled: np.ndarray) -> np.ndarray:
    """Each job's band per SoI: its column's sigma at the job's predicted score, 0 on the SoIs it was profiled on
    (measured, not classified)."""
    out = band.at(predicted)
    np.put_along_axis(out, profiled, 0.0, axis=1)
    return out


def accuracy_by_arrival(jobs: list[Job], truth: groundtruth.Truth, window: int) -> dict[int, dict[str, float]]:
    """Best SC, within 5 % and interference error of the arrivals in each `window`, keyed by the jobs seen before it."""
    sc = np.array([j.sc_score for j in jobs])
    scores = np.array([np.concatenate([j.tolerated, j.caused]) for j in jobs])
    out = {}
    for lo in range(0, len(jobs), window):
        part = slice(lo, lo + window)
        het = classify.heterogeneity_metrics(sc[part], truth.speed[part])
        err = classify.interference_metrics(scores[part], np.hstack([truth.tolerated, truth.caused])[part])
        out[lo] = {"best_sc": het["best_sc"], "within_5pct": het["within_5pct"], "interference_err": err["interference_err"]}
    return out


def exact_jobs(truth: groundtruth.Truth) -> list[Job]:
    """The rows of the truth itself (an oracle classification): a diagnostic of the scheduler alone, never a
    classifier's input."""
    return [Job(sc_score=np.log(truth.speed[j]), tolerated=truth.tolerated[j], caused=truth.caused[j], cores=int(truth.cores[j]))
            for j in range(truth.cores.size)]


def performance(truth: groundtruth.Truth, server_sc: int, server_cores: int, others: list[int], used: int, j: int) -> float:
    """Job j's performance now relative to alone on its best SC (module docstring)."""
    pressure = truth.caused[others].sum(axis=0) / groundtruth.capacity(np.array(server_cores), truth.capacity_exponent) \
        if others else np.zeros(truth.caused.shape[1])
    t = truth.tolerated[j]
    degradation = QOS_LOSS * np.max(np.minimum(1, pressure / t)) + truth.excess_slope * np.sum(np.maximum(0, pressure - t))
    share = core_share(int(truth.cores[j]), server_cores, used)
    return float(truth.speed[j, server_sc] / truth.speed[j].max() * max(0.0, 1 - degradation) * share)


def core_share(want: int, server_cores: int, used: int) -> float:
    """The cores a job of `want` threads gets now over the cores it gets alone on the server (oversubscription)."""
    return min(1.0, want * min(1.0, server_cores / used) / min(server_cores, want))


def deviates(truth: groundtruth.Truth, job: Job, j: int, server_sc: int, server_cores: int, used: int, rate: float) -> bool:
    """§3.4's monitor: job j's measured speed (`rate` times its speed alone on its best SC: what IPS measures) is under
    95 % of the classification's prediction for it alone on this SC at the cores it gets, i.e. the QoS that the
    scheduler's D >= 0 promised (§2.3) is measured as violated."""
    predicted = np.exp(job.sc_score[server_sc]) * core_share(job.cores, server_cores, used)
    return rate * float(truth.speed[j].max()) < (1 - QOS_LOSS) * predicted


@dataclass(frozen=True)
class Outcome:
    performance: np.ndarray  # per job, time-averaged
    decision_ms: np.ndarray  # per job, server selection
    migrations: int = 0  # §3.4's re-scheduling of deviating jobs (run's `migrate`)
    backtracks: np.ndarray | None = None  # per job, Paragon's greedy search's relaxations at arrival (§3.2; 0: other schedulers)
    server_sc: np.ndarray | None = None  # per job, the SC of the server it was placed on at arrival

    @property
    def relaxed(self) -> int:
        """Arrivals no server satisfied with every D >= 0: the greedy search relaxed QoS (backtracked, §3.2)."""
        return int(np.count_nonzero(self.backtracks)) if self.backtracks is not None else 0

    @property
    def meets_qos(self) -> np.ndarray:
        """Per job: within QOS_LOSS of its performance alone on the best SC (§2.3)."""
        return self.performance >= 1 - QOS_LOSS

    @property
    def qos_fraction(self) -> float:
        return float(np.mean(self.meets_qos))


def arrivals(n: int, burst: int) -> np.ndarray:
    """One per second; `burst` more at 0.05 s intervals after the first half (§4's oversubscribed scenario)."""
    steady = np.arange(n, dtype=float)
    return np.sort(np.concatenate([steady, n / 2 + 0.05 * np.arange(burst)]))


def mean_duration(n: int, peak_jobs: float) -> float:
    """D with D (1 - exp(-n / D)) = peak_jobs: exponential durations, one arrival per second, n arrivals."""
    lo, hi = 1.0, 1e7
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid * (1 - np.exp(-n / mid)) < peak_jobs else (lo, mid)
    return (lo + hi) / 2


def run(truth: groundtruth.Truth, jobs: list[Job], scenario: str, scheduler: str, seed: int, tolerated_rule: str = "headroom",
        monitor: bool = False, migrate: bool = False, guard: float = GUARD, sc_rule: str = SC_RULE) -> Outcome:
    """The scenario's arrivals, nominal durations sized so that required cores reach the scenario's load; the servers'
    tolerated score by `tolerated_rule` (schedule.TOLERATED_RULES: "headroom" unless told). With `monitor` (§3.4) every
    running job's measured performance is checked against its prediction whenever its server's load changes, and a
    server holding a job that deviates takes no new workloads while another server has room (`Servers.flag`); with
    `migrate` as well, the deviating job is re-scheduled at once by the greedy search on any server but those it deviated on,
    when one satisfies it without relaxing QoS (§3.4's second remedy, at no cost: an upper bound; `rehome`). The GUARDED
    schedulers plan with each job's classified scores widened by `guard` sigmas (schedule.guarded; 0: the paper's); Paragon's
    greedy takes its SC step by `sc_rule` (schedule.SC_RULES)."""
    check_guard(guard)
    if sc_rule not in SC_RULES:
        raise ValueError(f"sc_rule: unknown {sc_rule!r}, expected one of {', '.join(SC_RULES)}")
    if migrate and not monitor:
        raise ValueError("migrate: needs monitor (§3.4 migrates the workloads the monitor finds deviating)")
    n, burst, load = SCENARIOS[scenario]
    if len(jobs) != n + burst:
        raise ValueError(f"run: scenario {scenario!r} takes {n + burst} workloads, got {len(jobs)}")
    jobs = [guarded(job, guard) for job in jobs] if scheduler in GUARDED else jobs
    sc, cores, cap = groundtruth.servers(truth.capacity_exponent)
    rng = np.random.default_rng(seed)
    at = arrivals(n, burst)
    peak = min(load * cores.sum() / truth.cores.mean(), 0.95 * len(jobs))
    duration = rng.exponential(mean_duration(len(jobs), peak), len(jobs))
    servers = Servers(sc=sc, cores=cores, capacity=cap, n_soi=truth.caused.shape[1], tolerated_rule=tolerated_rule)
    integral = np.zeros(len(jobs))
    last = np.zeros(len(jobs))
    rate = np.zeros(len(jobs))
    where = np.full(len(jobs), -1)
    decision = np.zeros(len(jobs))
    backtracks, server_sc = np.zeros(len(jobs), dtype=int), np.zeros(len(jobs), dtype=int)
    events = [(float(at[j]), 1, j) for j in range(len(jobs))]
    heapq.heapify(events)
    left: dict[int, frozenset[int]] = {}  # job -> the servers it deviated on and was migrated from
    migrations = 0
    while events:
        now, kind, j = heapq.heappop(events)
        settle(servers, where[j] if kind == 0 else -1, now, integral, last, rate)
        if kind == 1:  # arrival
            start = time.perf_counter()
            s, backtracks[j] = choose(servers, jobs[j], scheduler, rng, sc_rule)
            decision[j] = (time.perf_counter() - start) * 1e3
            server_sc[j] = servers.sc[s]
            settle(servers, s, now, integral, last, rate)
            servers.place(s, j, jobs[j].cores, jobs[j].tolerated, jobs[j].caused)
            where[j], last[j] = s, now
            heapq.heappush(events, (now + duration[j], 0, j))
        else:
            servers.remove(where[j], j, jobs[j].cores, jobs[j].caused)
        refresh(truth, servers, where[j], rate)
        deviating = watch(truth, jobs, servers, where[j], rate) if monitor else []
        while migrate and deviating:
            r = deviating.pop()
            avoid = left.get(r, frozenset()) | {int(where[r])}
            found = rehome(truth, jobs, servers, r, avoid, now, (integral, last, rate, where))
            if found is not None:
                left[r], migrations = avoid, migrations + 1
                deviating += found
    return Outcome(performance=integral / np.maximum(duration, 1e-9), decision_ms=decision, migrations=migrations,
                   backtracks=backtracks, server_sc=server_sc)


def check_guard(guard: float) -> None:
    """The guard band in sigmas: a finite number >= 0."""
    if isinstance(guard, bool) or not isinstance(guard, (int, float)) or not 0 <= guard < math.inf:
        raise ValueError(f"guard: expected a finite number of sigmas >= 0, got {guard!r}")


def choose(servers: Servers, job: Job, scheduler: str, rng: np.random.Generator, sc_rule: str = SC_RULE) -> tuple[int, int]:
    """The scheduler's server for the job and its greedy search's backtracking relaxations (0 for the others); `sc_rule`
    applies to Paragon's greedy only."""
    if scheduler == "paragon":
        return greedy(servers, job, sc_rule=sc_rule)
    if scheduler == "heterogeneity_oblivious":
        return heterogeneity_oblivious(servers, job), 0
    if scheduler == "interference_oblivious":
        return interference_oblivious(servers, job, rng), 0
    if scheduler == "random":
        return random_server(servers, job, rng), 0
    if scheduler == "paragon_statistical":
        return statistical(servers, job), 0
    if scheduler == "paragon_statistical_as_written":
        return statistical(servers, job, spread_ties=False), 0
    raise ValueError(f"scheduler: unknown {scheduler!r}, expected one of {', '.join(SCHEDULERS + OPTIONS)}")


def settle(servers: Servers, s: int, now: float, integral: np.ndarray, last: np.ndarray, rate: np.ndarray) -> None:
    """Accumulate the performance of the jobs on server s up to `now` (none for s < 0)."""
    for r in servers.residents[s] if s >= 0 else ():
        integral[r] += rate[r] * (now - last[r])
        last[r] = now


def watch(truth: groundtruth.Truth, jobs: list[Job], servers: Servers, s: int, rate: np.ndarray) -> list[int]:
    """§3.4: flag the residents of server s whose measured performance deviates from the classification's; the newly
    flagged ones."""
    new = [r for r in servers.residents[s] if r not in servers.flagged
           and deviates(truth, jobs[r], r, servers.sc[s], servers.cores[s], servers.used[s], rate[r])]
    for r in new:
        servers.flag(s, r)
    return new


def rehome(truth: groundtruth.Truth, jobs: list[Job], servers: Servers, r: int, avoid: frozenset[int], now: float,
           state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> list[int] | None:
    """§3.4's second remedy: migrate deviating job r when re-scheduling is beneficial, i.e. the greedy search finds a
    server outside `avoid`, with room and no deviating resident, without relaxing QoS; the jobs the monitor newly finds
    deviating there, or None when r stays."""
    integral, last, rate, where = state
    new, backtracks = greedy(servers, jobs[r], avoid=avoid)
    if backtracks or new in avoid or servers.deviating[new] or servers.cores[new] - servers.used[new] < jobs[r].cores:
        return None
    old = int(where[r])
    settle(servers, old, now, integral, last, rate)
    servers.remove(old, r, jobs[r].cores, jobs[r].caused)
    refresh(truth, servers, old, rate)
    settle(servers, new, now, integral, last, rate)
    servers.place(new, r, jobs[r].cores, jobs[r].tolerated, jobs[r].caused)
    where[r], last[r] = new, now
    refresh(truth, servers, new, rate)
    return watch(truth, jobs, servers, new, rate)


def refresh(truth: groundtruth.Truth, servers: Servers, s: int, rate: np.ndarray) -> None:
    """Performance of the jobs on server s after its residents changed."""
    here = list(servers.residents[s])
    for r in here:
        rate[r] = performance(truth, servers.sc[s], servers.cores[s], [o for o in here if o != r], servers.used[s], r)
