"""Generated ground truth for Paragon's evaluation (docs/paragon.md "The model").

14 server configurations (SCs) named after the paper's EC2 types (§4), 10 sources of interference
(SoIs). A job j has a latent vector x_j (2 factors, the second weaker); an SC s has a base speed mu_s (from its cores and
generation) and a loading y_s; log speed(j, s) = mu_s + x_j . y_s + noise. Tolerated and caused
interference of j on SoI k are logistic in a shared latent z_j (2 factors, the second weaker) with SoI loadings, plus
noise. Only `profile` hands entries to the classifier: the offline jobs' full rows and, for each new
job, two SCs and two SoIs chosen at random (§3.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corral_yarn.paragon.classify import Sparse

# (name, cores, relative per-core speed, servers out of 1,000) — 4,960 cores as the paper's EC2 cluster (Fig. 11)
SERVER_CONFIGS = (
    ("t1.micro", 1, 0.55, 40), ("m1.small", 1, 0.7, 92), ("m1.medium", 1, 0.85, 100), ("c1.medium", 2, 0.95, 100),
    ("m1.large", 2, 0.9, 120), ("m2.xlarge", 2, 1.05, 80), ("m1.xlarge", 4, 0.9, 100), ("m2.2xlarge", 4, 1.05, 80),
    ("c1.xlarge", 8, 0.95, 80), ("m2.4xlarge", 8, 1.05, 60), ("cc1.4xlarge", 8, 1.2, 50), ("cg1.4xlarge", 8, 1.2, 30),
    ("hi1.4xlarge", 16, 1.15, 33), ("cc2.8xlarge", 32, 1.3, 35),
)
SOURCES_OF_INTERFERENCE = ("memory_capacity", "memory_bandwidth", "l1_instruction", "l2", "llc", "cpu", "prefetch",
                           "tlb", "network", "storage")
FACTORS = 2
STRENGTH = np.array([1.0, 0.4])  # the first similarity concept dominates, the second refines it


@dataclass(frozen=True)
class Truth:
    """Per job: speed on every SC, tolerated and caused interference on every SoI (all in the job's row)."""

    speed: np.ndarray  # jobs x SCs
    tolerated: np.ndarray  # jobs x SoIs, in [0, 1]
    caused: np.ndarray  # jobs x SoIs, in [0, 1]
    cores: np.ndarray  # jobs


@dataclass(frozen=True)
class World:
    """The latent structure shared by all jobs: SC and SoI loadings."""

    mu: np.ndarray
    y: np.ndarray
    tol_load: np.ndarray
    tol_bias: np.ndarray
    cause_load: np.ndarray
    cause_bias: np.ndarray


def world(seed: int) -> World:
    rng = np.random.default_rng(seed)
    n_sc, n_soi = len(SERVER_CONFIGS), len(SOURCES_OF_INTERFERENCE)
    mu = np.log([c[2] for c in SERVER_CONFIGS])
    return World(mu=mu, y=rng.normal(0, 0.25, (n_sc, FACTORS)) * STRENGTH, tol_load=rng.normal(0, 0.8, (n_soi, FACTORS)) * STRENGTH,
                 tol_bias=rng.normal(0.6, 0.3, n_soi), cause_load=rng.normal(0, 0.8, (n_soi, FACTORS)) * STRENGTH,
                 cause_bias=rng.normal(-1.8, 0.3, n_soi))


def jobs(w: World, n: int, rng: np.random.Generator, noise: float = 0.03) -> Truth:
    """n jobs drawn from the shared latent structure plus independent noise."""
    x = rng.normal(0, 1, (n, FACTORS))
    z = rng.normal(0, 1, (n, FACTORS))
    speed = np.exp(w.mu + x @ w.y.T + rng.normal(0, noise, (n, w.mu.size)))
    sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    tol = sig(w.tol_bias + z @ w.tol_load.T + rng.normal(0, 3 * noise, (n, w.tol_bias.size)))
    cause = sig(w.cause_bias + 0.6 * z @ w.cause_load.T + rng.normal(0, 3 * noise, (n, w.cause_bias.size)))
    cores = rng.choice([1, 1, 2, 2, 4], size=n)
    return Truth(speed=speed, tolerated=tol, caused=cause, cores=cores)


@dataclass(frozen=True)
class Profiled:
    """What the classifier may see of new jobs: two SCs (log speed) and two SoIs of each matrix."""

    sc: Sparse
    tolerated: Sparse
    caused: Sparse


def profile(t: Truth, rng: np.random.Generator, per_row: int = 2) -> Profiled:
    """About a minute of profiling per new job: `per_row` random SCs and `per_row` random SoIs (§3.1)."""
    def pick(m: np.ndarray) -> Sparse:
        cols = np.array([rng.choice(m.shape[1], size=per_row, replace=False) for _ in range(m.shape[0])])
        return Sparse(cols=cols, values=np.take_along_axis(m, cols, axis=1))
    soi = pick(t.tolerated)
    return Profiled(sc=pick(np.log(t.speed)), tolerated=soi,
                    caused=Sparse(cols=soi.cols, values=np.take_along_axis(t.caused, soi.cols, axis=1)))


def servers() -> tuple[np.ndarray, np.ndarray]:
    """SC index and cores of each of the 1,000 servers."""
    sc = np.repeat(np.arange(len(SERVER_CONFIGS)), [c[3] for c in SERVER_CONFIGS])
    cores = np.array([c[1] for c in SERVER_CONFIGS])[sc]
    return sc, cores
