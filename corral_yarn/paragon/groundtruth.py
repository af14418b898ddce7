"""Generated ground truth for Paragon's evaluation (docs/paragon.md "The model").

14 server configurations (SCs) named after the paper's EC2 types (§4), 10 sources of interference
(SoIs). Heterogeneity, two models (TRUTHS, `world(truth=)`):
* "frontier": log speed(j, s) = a_j + SPREAD (x_j y_s - y_s^2 / 2 + SECOND_CONCEPT v_j w_s) + noise: a_j the job's
  own level, x_j ~ N(0, 1) its position on one dominant trade-off (say compute- against memory-bound) along which the
  SCs sit on a smooth concave frontier (y_s: the SC is fastest for the jobs of x near y_s, for a share of jobs
  equal to its share of the cores: provisioned for demand), v_j w_s a second concept (off since session 11) and the
  per-entry noise NOISE["frontier"]: both fixed by Table 1 as a two-profile ceiling (docs/paragon.md "Session 11").
* "classes": each SC is the sweet spot y_s (a point in CLASS_DIMENSIONS hardware characteristics) of a class of
  workloads, provisioned for demand (a job's class drawn by the SC's share of the cores); a job sits near its
  class's spot, x_j = y_c + CLASS_SCATTER N(0, I), and log speed(j, s) = a_j + CLASS_SPREAD (x_j . y_s - |y_s|^2 / 2)
  + noise, i.e. it runs best on the SC nearest its needs. Its constants are fixed by the paper's published facts
  only (docs/paragon.md "The model"): Fig. 1's heterogeneity-oblivious loss and Table 1 as a lower bound on the
  noise-free accuracy ceiling.
A job of more threads than an SC has cores runs at cores / threads there (§1: SCs differ in core counts).
Interference: tolerated and caused scores of j on SoI k are logistic in a shared latent z_j (2 factors,
the second weaker) with SoI loadings, plus noise; on network and storage bandwidth tolerance is very high and
caused interference low (§3.4: the workloads "do not saturate these shared resources"). Jobs are 1/3
single-threaded (1 core), 1/3 multithreaded (2, 4 or 8 threads, SPECjbb's warehouses), 1/3 multi-programmed
mixes of 4 applications (4 cores) (§4, Workloads). Only `profile` hands entries to the classifier: the offline
jobs' full rows and, for each new job, two SCs and two SoIs chosen at random (§3.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from corral_yarn.paragon.classify import Sparse, hide

# (name, cores, servers out of 1,000) — 4,960 cores as the paper's EC2 cluster (Fig. 11)
SERVER_CONFIGS = (
    ("t1.micro", 1, 40), ("m1.small", 1, 92), ("m1.medium", 1, 100), ("c1.medium", 2, 100), ("m1.large", 2, 120),
    ("m2.xlarge", 2, 80), ("m1.xlarge", 4, 100), ("m2.2xlarge", 4, 80), ("c1.xlarge", 8, 80), ("m2.4xlarge", 8, 60),
    ("cc1.4xlarge", 8, 50), ("cg1.4xlarge", 8, 30), ("hi1.4xlarge", 16, 33), ("cc2.8xlarge", 32, 35),
)
# Table 3: the paper's local cluster (10 SCs, 40 servers, 178 cores), where Table 1's accuracy was measured (§2.2)
LOCAL_CLUSTER = (
    ("Xeon L5609", 8, 1), ("Xeon X5650", 12, 2), ("Xeon X5670", 12, 2), ("Xeon L5640", 12, 1), ("Xeon MP", 4, 5),
    ("Xeon E5345", 4, 8), ("Xeon E5335", 4, 8), ("Opteron 240", 2, 7), ("Atom 330", 2, 5), ("Atom D510", 2, 1),
)
SOURCES_OF_INTERFERENCE = ("memory_capacity", "memory_bandwidth", "l1_instruction", "l2", "llc", "cpu", "prefetch",
                           "tlb", "network", "storage")
FACTORS = 2
SPREAD = 0.25
STRENGTH = np.array([1.0, 0.4])  # the first similarity concept dominates, the second refines it
UNSATURATED = ("network", "storage")  # §3.4: tolerated "in most cases very high" on these SoIs
UNSATURATED_LOGIT = 3.0
SOI_NOISE = 0.09  # per-entry noise of the SoI logits  # tolerated about 0.95, caused about 0.05
TRUTHS = ("frontier", "classes")  # heterogeneity models, the default first (module docstring); docs/paragon.md "The model"
# "classes" (docs/paragon.md): 3 = the fewest characteristics in which 14 SCs can each be the clear best of their class at
# Fig. 1's spread (1 and 2 give a ceiling below Table 1); the spread gives the frontier's heterogeneity-oblivious loss
# (Fig. 1: 22 %); the scatter is the largest (0.05 steps) keeping the ceiling at or above Table 1 (0.86 / 0.91, noise 0.03)
CLASS_DIMENSIONS = 3
CLASS_SPREAD = 0.25
CLASS_SCATTER = 0.15
# per-entry noise of log speed by truth. "frontier": Table 1 read as a two-profile ceiling (two profiles find the best SC
# for >= 0.86 of jobs) on the smooth frontier, whose median best/second gap is 0.6 %: the largest noise on a 0.0005 grid
# whose two-profile Bayes ceiling is >= 0.86 (0.875; 0.003 gives 0.853); sessions 1-10: 0.03 (docs/paragon.md "Session 11").
# "classes": its scatter was fixed at 0.03, kept
NOISE = {"frontier": 0.0025, "classes": 0.03}
# "frontier": weight of the second concept v_j w_s against the first; any weight lowers the two-profile ceiling below
# Table 1 (0.01 with noise 0.002: 0.859); sessions 1-10: 0.1
SECOND_CONCEPT = 0.0
# Interference, fixed together by Fig. 1 / §5.2's interference-oblivious loss (34 % at 5,000 applications on 1,000 EC2
# servers; docs/paragon.md "Session 11"). A server's shared-resource capacity is max(1, cores / 4) ** CAPACITY_EXPONENT
# times the 4-core reference's: 0 = caused scores summed as they are (§3.2's server state), 1 = linear in the cores
# (sessions 1-10). EXCESS_SLOPE: degradation per unit of pressure beyond the tolerated score (sessions 1-10: 0.5)
CAPACITY_EXPONENT = 0.0
EXCESS_SLOPE = 1.0


@dataclass(frozen=True)
class Truth:
    """Per job: speed on every SC, tolerated and caused interference on every SoI (all in the job's row)."""

    speed: np.ndarray  # jobs x SCs
    expected: np.ndarray  # jobs x SCs: speed without the per-entry noise (only for the accuracy ceiling)
    fit: np.ndarray  # jobs x SCs: the known core-count cut, min(1, SC cores / threads)
    tolerated: np.ndarray  # jobs x SoIs, in [0, 1]
    caused: np.ndarray  # jobs x SoIs, in [0, 1]
    cores: np.ndarray  # jobs
    capacity_exponent: float = CAPACITY_EXPONENT  # the world's (capacity)
    excess_slope: float = EXCESS_SLOPE  # the world's (simulate.performance)


@dataclass(frozen=True)
class World:
    """The latent structure shared by all jobs: SC and SoI loadings, the SCs' cores."""

    sc_cores: np.ndarray
    y: np.ndarray  # SCs x characteristics: each SC's place (frontier: one column; classes: its class's sweet spot)
    w: np.ndarray
    tol_load: np.ndarray
    tol_bias: np.ndarray
    cause_load: np.ndarray
    cause_bias: np.ndarray
    noise: float  # per-entry noise of a job's log speed: what no latent factor explains
    truth: str = "frontier"  # the heterogeneity model (TRUTHS)
    share: np.ndarray | None = None  # each SC's share of the cluster's cores (classes: the share of jobs of its class)
    second_concept: float = SECOND_CONCEPT  # "frontier": the weight of v_j w_s
    capacity_exponent: float = CAPACITY_EXPONENT
    excess_slope: float = EXCESS_SLOPE


def world(seed: int, configs: tuple[tuple[str, int, int], ...] = SERVER_CONFIGS, noise: float | None = None,
          truth: str = TRUTHS[0], second_concept: float = SECOND_CONCEPT, capacity_exponent: float = CAPACITY_EXPONENT,
          excess_slope: float = EXCESS_SLOPE) -> World:
    """The shared latent structure; `noise` None takes the truth's NOISE. Sessions 1-10's model: noise=0.03,
    second_concept=0.1, capacity_exponent=1.0, excess_slope=0.5."""
    if truth not in TRUTHS:
        raise ValueError(f"truth: unknown {truth!r}, expected one of {', '.join(TRUTHS)}")
    noise = NOISE[truth] if noise is None else noise
    rng = np.random.default_rng(seed)
    n_sc, n_soi = len(configs), len(SOURCES_OF_INTERFERENCE)
    y = frontier(configs)[:, None] if truth == "frontier" else sweet_spots(n_sc)
    cores = np.array([c[1] * c[2] for c in configs], dtype=float)
    w = World(sc_cores=np.array([c[1] for c in configs]), y=y, w=rng.normal(0, 1, n_sc), tol_load=rng.normal(0, 0.8, (n_soi, FACTORS)) * STRENGTH,
              tol_bias=rng.normal(0.6, 0.3, n_soi), cause_load=rng.normal(0, 0.8, (n_soi, FACTORS)) * STRENGTH,
              cause_bias=rng.normal(-1.8, 0.3, n_soi), noise=noise, truth=truth, share=cores / cores.sum(),
              second_concept=second_concept, capacity_exponent=capacity_exponent, excess_slope=excess_slope)
    io = [SOURCES_OF_INTERFERENCE.index(k) for k in UNSATURATED]
    w.tol_bias[io], w.cause_bias[io] = UNSATURATED_LOGIT, -UNSATURATED_LOGIT  # §3.4
    return w


def frontier(configs: tuple[tuple[str, int, int], ...] = SERVER_CONFIGS) -> np.ndarray:
    """y_s: the normal quantile at the middle of the SC's share of the cluster's cores, SCs in list order."""
    cores = np.array([c[1] * c[2] for c in configs], dtype=float)
    share = np.cumsum(cores) / cores.sum()
    middle = share - cores / cores.sum() / 2
    return np.sqrt(2) * _erfinv(2 * middle - 1)


def sweet_spots(n: int, dimensions: int = CLASS_DIMENSIONS) -> np.ndarray:
    """n points spread evenly on the unit sphere of 3 characteristics (Fibonacci lattice; no SC nearer its neighbours
    than another), one per SC in list order: the "classes" model's sweet spots."""
    if dimensions != 3:
        raise ValueError(f"sweet_spots: the lattice is for 3 characteristics, got {dimensions}")
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    phi = i * np.pi * (3 - np.sqrt(5))  # the golden angle
    return np.stack([np.sqrt(1 - z**2) * np.cos(phi), np.sqrt(1 - z**2) * np.sin(phi), z], axis=1)


def _erfinv(y: np.ndarray) -> np.ndarray:
    """Inverse error function by Newton steps (numpy has none)."""
    x = np.zeros_like(y)
    for _ in range(60):
        x -= (np.vectorize(math.erf)(x) - y) / (2 / np.sqrt(np.pi) * np.exp(-(x**2)))
    return x


def jobs(w: World, n: int, rng: np.random.Generator) -> Truth:
    """n jobs drawn from the shared latent structure plus independent noise (the world's on log speed, SOI_NOISE
    on the SoI logits)."""
    if w.truth == "frontier":
        a, x, v = rng.normal(0, 0.5, (n, 1)), rng.normal(0, 1, (n, 1)), rng.normal(0, 1, (n, 1))
        log_speed = a + SPREAD * (x * w.y.T - (w.y**2).T / 2 + w.second_concept * v * w.w)
    else:  # classes: a job near its class's sweet spot runs best on the SC nearest its needs
        a, c = rng.normal(0, 0.5, (n, 1)), rng.choice(w.y.shape[0], size=n, p=w.share)
        x = w.y[c] + rng.normal(0, CLASS_SCATTER, (n, w.y.shape[1]))
        log_speed = a + CLASS_SPREAD * (x @ w.y.T - np.sum(w.y**2, axis=1) / 2)
    z = rng.normal(0, 1, (n, FACTORS))
    cores = threads(n, rng)
    cut = fit(cores, w.sc_cores)
    expected = np.exp(log_speed) * cut
    speed = expected * np.exp(rng.normal(0, w.noise, (n, w.y.shape[0])))
    sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    tol = sig(w.tol_bias + z @ w.tol_load.T + rng.normal(0, SOI_NOISE, (n, w.tol_bias.size)))
    cause = sig(w.cause_bias + 0.6 * z @ w.cause_load.T + rng.normal(0, SOI_NOISE, (n, w.cause_bias.size)))
    return Truth(speed=speed, expected=expected, fit=cut, tolerated=tol, caused=cause, cores=cores,
                 capacity_exponent=w.capacity_exponent, excess_slope=w.excess_slope)


def fit(cores: np.ndarray, sc_cores: np.ndarray | None = None) -> np.ndarray:
    """Jobs x SCs: the share of its threads a job runs at once on the SC alone, min(1, SC cores / threads).
    Known to the scheduler (the job's request, the SC's cores), so it is not learned by classification."""
    sc_cores = np.array([c[1] for c in SERVER_CONFIGS]) if sc_cores is None else sc_cores
    return np.minimum(1.0, sc_cores[None, :] / np.asarray(cores)[:, None])


def per_core_log_speed(t: Truth) -> np.ndarray:
    """The jobs x SCs utility matrix of classification: log speed with the known core-count cut taken out."""
    return np.log(t.speed / t.fit)


def threads(n: int, rng: np.random.Generator) -> np.ndarray:
    """Cores wanted (§4 Workloads): 1/3 single-threaded (1), 1/3 multithreaded (2, 4, 8), 1/3 mixes of 4 apps (4)."""
    kind = rng.integers(0, 3, n)
    return np.where(kind == 0, 1, np.where(kind == 1, rng.choice([2, 4, 8], size=n), 4))


@dataclass(frozen=True)
class Profiled:
    """What the classifier may see of new jobs: two SCs (log speed) and two SoIs of each matrix."""

    sc: Sparse
    tolerated: Sparse
    caused: Sparse


def profile(t: Truth, rng: np.random.Generator, per_row: int = 2, sc_cols: tuple[int, ...] | None = None,
            soi_cols: tuple[int, ...] | None = None) -> Profiled:
    """About a minute of profiling per new job: on the SCs `sc_cols` (`per_row` random SCs when None) and against the
    SoIs `soi_cols` (`per_row` random SoIs when None), one microbenchmark run per SoI giving both its tolerated and its
    caused score (§2.2: "any two server configurations"; §2.3: "two randomly chosen microbenchmarks"). The random SoIs
    are drawn under either rule, so that the generator's later draws (and the workloads they make) do not depend on it."""
    drawn = hide(t.tolerated, per_row, rng)
    soi = drawn if soi_cols is None else at_columns(t.tolerated, soi_cols)
    speed = per_core_log_speed(t)
    sc = hide(speed, per_row, rng) if sc_cols is None else at_columns(speed, sc_cols)
    return Profiled(sc=sc, tolerated=soi,
                    caused=Sparse(cols=soi.cols, values=np.take_along_axis(t.caused, soi.cols, axis=1)))


def at_columns(dense: np.ndarray, cols: tuple[int, ...]) -> Sparse:
    """Every row's entries on the same columns `cols`."""
    idx = np.tile(np.asarray(cols), (dense.shape[0], 1))
    return Sparse(cols=idx, values=np.take_along_axis(dense, idx, axis=1))


def servers(capacity_exponent: float = CAPACITY_EXPONENT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SC index, cores and shared-resource capacity of each of the 1,000 servers."""
    sc = np.repeat(np.arange(len(SERVER_CONFIGS)), [c[2] for c in SERVER_CONFIGS])
    cores = np.array([c[1] for c in SERVER_CONFIGS])[sc]
    return sc, cores, capacity(cores, capacity_exponent)


def capacity(cores: np.ndarray, exponent: float = CAPACITY_EXPONENT) -> np.ndarray:
    """Shared resources (caches, memory and I/O bandwidth) relative to the 4-core reference server the SoI
    scores are measured on, max(1, cores / 4) ** exponent: at 0 every server feels the plain sum of its jobs' caused
    scores (§3.2's server state), at 1 a server of 2x the cores spreads them over 2x the resources."""
    return np.maximum(1.0, cores / 4) ** exponent


def heterogeneity_facts(w: World, configs: tuple[tuple[str, int, int], ...], n: int, rng: np.random.Generator,
                        pair: tuple[int, ...] | None = None) -> dict[str, float]:
    """The published facts a heterogeneity model is checked against (docs/paragon.md "The model"), on n generated jobs:
    the noise-free ceiling of Table 1's best SC and within 5 % (the argmax of `expected` against the noisy speed), the
    heterogeneity-only performance of a job on a server drawn at random among those with its cores (Fig. 1's
    heterogeneity-oblivious loss: mean and 1st percentile), the median gap between a job's best and second SC and, for
    the profiling SCs `pair`, the two-profile ceiling (two_profile_ceiling, on 40 n more jobs)."""
    t = jobs(w, n, rng)
    rows = np.arange(n)
    best, chosen = t.speed.argmax(axis=1), t.expected.argmax(axis=1)
    ratio = t.speed / t.speed.max(axis=1, keepdims=True)
    room = (w.sc_cores[None, :] >= t.cores[:, None]) * np.array([c[2] for c in configs])[None, :]
    oblivious = (ratio * room).sum(axis=1) / room.sum(axis=1)
    top = np.sort(t.expected, axis=1)
    return {"ceiling_best_sc": float(np.mean(chosen == best)),
            "ceiling_within_5pct": float(np.mean(t.speed[rows, chosen] / t.speed[rows, best] >= 0.95)),
            "oblivious_performance_mean": float(oblivious.mean()), "oblivious_performance_p1": float(np.percentile(oblivious, 1)),
            "best_second_gap_median": float(np.median(top[:, -1] / top[:, -2] - 1)),
            **(two_profile_ceiling(w, pair, 40 * n, rng) if pair else {})}


def two_profile_ceiling(w: World, pair: tuple[int, ...], n: int, rng: np.random.Generator, cells: int = 600) -> dict[str, float]:
    """Table 1 as a two-profile measurement: the best SC (and within 5 %) of the plug-in Bayes rule that sees a job's
    thread count and the difference of its two profiled per-core log speeds (its level cancels), binned into `cells`
    quantiles, trained on n / 2 generated jobs and scored on the other n / 2 (the truth alone; no classifier)."""
    t = jobs(w, n, rng)
    speed = per_core_log_speed(t)
    diff, best, half = speed[:, pair[1]] - speed[:, pair[0]], t.speed.argmax(axis=1), n // 2
    cell = np.searchsorted([1, 2, 4, 8], t.cores) * cells + np.digitize(diff, np.quantile(diff[:half], np.linspace(0, 1, cells + 1)[1:-1]))
    counts = np.zeros((4 * cells, speed.shape[1]))
    np.add.at(counts, (cell[:half], best[:half]), 1)
    guess, rows = counts.argmax(axis=1)[cell[half:]], np.arange(half, n)
    return {"two_profile_best_sc": float(np.mean(guess == best[half:])),
            "two_profile_within_5pct": float(np.mean(t.speed[rows, guess] / t.speed[rows, best[half:]] >= 0.95))}
