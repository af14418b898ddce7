"""Paragon's greedy, QoS-aware server selection (paper 003 §3.2) and its statistical variant.

A server's sensitivity per SoI: tolerated = the minimum over the jobs on it (1 when empty), caused =
their sum. For a new job, D1 = t_server - c_new and D2 = t_new - c_server per SoI. The D1 chain examines
the SoIs in decreasing caused score of the new job, the D2 chain in increasing tolerated score (the most
difficult first, "exactly the same for D2"); each step keeps the servers whose D is >= -relax, and the D2
chain filters what the D1 chain kept (their intersection). An empty set backtracks: the previous step's
relax grows by `relax_step` until the set is non-empty, further back if needed. Among the survivors, the servers of the job's best SC, then min ||D1 + D2||_L1. A
timeout stops the search and selects among the servers of the last non-empty set the same way. Under the SC rule
"sc_qos" (an option, ours) the search starts from the servers of the SCs on which the job's predicted performance meets
QoS (`qos_servers`), so that it relaxes interference there rather than leave for a slower SC.

The statistical variant: each server's tolerated scores are hashed per SoI (h_k, SHA-1 variations, 14 bits) when its
load changes; a new job's caused score on SoI k, hashed by h_k, lands on a server of that hashed value (the next one
up when none has it) and re-hashing gives more; the candidates are ranked by Q_i. Servers of one hashed score (every
empty server) take their own points on the ring by default (`spread_ties`; §3.2 is silent on ties; the ring as
written, one point per hashed score, with spread_ties=False)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field, replace

import numpy as np


TOLERATED_RULES = ("min", "headroom")
QOS_LOSS = 0.05  # §2.3: QoS is violated at 95 % of the performance in isolation
SC_RULES = ("best_present", "sc_qos")  # the greedy's SC step: §3.2's best SC among the survivors; or first the SCs that meet QoS
SCORE_BITS = 14  # §3.2: hashed outputs "have the same precision as inputs (14bits)"
TIMEOUT_S = 0.05  # §3.2 bounds the greedy search "using a timeout mechanism" (its value is not given; ours)


@dataclass
class Servers:
    """Per-server state (§3): SC, cores, cores in use, tolerated and caused (sum) per SoI, and the hashed
    tolerated scores of the statistical scheme.

    Caused scores are measured against a reference server's shared resources; a server with `capacity`
    times those resources (groundtruth.capacity) feels each job's caused score divided by it. `tolerated_rule`
    "headroom" (the default since 26 Nov) is the least of each resident's tolerated score minus what the other
    residents already cause: the reading under which §3.2's "D_1 and D_2 ... exactly zero ... implies that there
    is no negative impact from interference between new and existing applications" holds; "min" is the sentence
    taken literally (the minimum of the residents' tolerated scores), selectable."""

    sc: np.ndarray
    cores: np.ndarray
    capacity: np.ndarray
    n_soi: int
    tolerated_rule: str = "headroom"
    used: np.ndarray = field(init=False)
    caused: np.ndarray = field(init=False)
    tolerated: np.ndarray = field(init=False)
    hashed: np.ndarray = field(init=False)  # servers x SoIs: h_k(tolerated score), recomputed when the load changes
    residents: list[dict[int, tuple[np.ndarray, np.ndarray]]] = field(init=False)  # job id -> (tolerated, caused / capacity)
    deviating: np.ndarray = field(init=False)  # per server: residents whose monitored performance deviated (§3.4)
    flagged: set[int] = field(init=False)  # the jobs whose monitored performance deviated, while they run

    def __post_init__(self) -> None:
        if self.tolerated_rule not in TOLERATED_RULES:
            raise ValueError(f"tolerated_rule: unknown {self.tolerated_rule!r}, expected one of {', '.join(TOLERATED_RULES)}")
        self.used = np.zeros(self.sc.size, dtype=int)
        self.caused = np.zeros((self.sc.size, self.n_soi))
        self.tolerated = np.ones((self.sc.size, self.n_soi))
        empty = hash_scores(np.ones(self.n_soi))  # §3.2: hashed once, unless the load of a server changes
        self.hashed = np.tile(empty, (self.sc.size, 1))
        self.residents = [{} for _ in range(self.sc.size)]
        self.deviating = np.zeros(self.sc.size, dtype=int)
        self.flagged = set()

    def place(self, server: int, job: int, cores: int, tolerated: np.ndarray, caused: np.ndarray) -> None:
        self.used[server] += cores
        self.caused[server] += caused / self.capacity[server]
        self.residents[server][job] = (tolerated, caused / self.capacity[server])
        self._update(server)

    def remove(self, server: int, job: int, cores: int, caused: np.ndarray) -> None:
        self.used[server] -= cores
        self.caused[server] -= caused / self.capacity[server]
        del self.residents[server][job]
        if job in self.flagged:
            self.flagged.discard(job)
            self.deviating[server] -= 1
        self._update(server)

    def flag(self, server: int, job: int) -> None:
        """§3.4: job's monitored performance deviated from the classification's prediction; its server takes no
        further workloads while it runs there ("its interference information ... is likely incorrect")."""
        if job not in self.flagged:
            self.flagged.add(job)
            self.deviating[server] += 1

    def _update(self, server: int) -> None:
        """The server's tolerated score per SoI after its residents changed (§3.2), and its hashes."""
        rest = list(self.residents[server].values())
        if not rest:
            self.tolerated[server] = 1.0
        elif self.tolerated_rule == "min":  # §3.2: "the sensitivity to tolerated interference is the minimum of these values"
            self.tolerated[server] = np.min([t for t, _ in rest], axis=0)
        else:  # headroom (§3.2: D_1 = 0 means no negative impact): t_r minus the other residents' pressure, least over r
            self.tolerated[server] = np.min([t - (self.caused[server] - c) for t, c in rest], axis=0)
        self.hashed[server] = hash_scores(self.tolerated[server])


@dataclass(frozen=True)
class Job:
    """A classified job: predicted SC ranking scores (higher is faster), tolerated and caused per SoI, and the guard band
    sigma of each (tolerated, caused) score: 0 on a profiled (measured) SoI, None for exact rows."""

    sc_score: np.ndarray
    tolerated: np.ndarray
    caused: np.ndarray
    cores: int
    band: tuple[np.ndarray, np.ndarray] | None = None


def guarded(job: Job, k: float) -> Job:
    """The job as the scheduler plans with it under a guard band of k sigma (ours, beyond §3.2; docs/paragon.md
    "Session 13"): tolerated - k sigma_t and caused + k sigma_c, in [0, 1]; k = 0 or no band: the job as classified."""
    if job.band is None or k == 0:
        return job
    return replace(job, tolerated=np.clip(job.tolerated - k * job.band[0], 0, 1), caused=np.clip(job.caused + k * job.band[1], 0, 1))


def free(servers: Servers, cores: int, avoid: frozenset[int] = frozenset()) -> np.ndarray:
    """Servers with `cores` free cores, no deviating resident (§3.4) and not in `avoid`, else those with the cores free;
    all servers when none has (oversubscription)."""
    fits = np.flatnonzero(servers.cores - servers.used >= cores)
    trusted = fits[(servers.deviating[fits] == 0) & ~np.isin(fits, list(avoid))]
    return trusted if trusted.size else fits if fits.size else np.arange(servers.sc.size)


def pick(servers: Servers, job: Job, cands: np.ndarray, d: np.ndarray, heterogeneity: bool = True) -> int:
    """Best SC among the candidates (§3.2), then min ||D1 + D2||_L1."""
    if heterogeneity:
        scores = job.sc_score[servers.sc[cands]]
        cands, d = cands[scores == scores.max()], d[scores == scores.max()]
    return int(cands[np.argmin(np.abs(d).sum(axis=1))])


def qos_servers(servers: Servers, job: Job, base: np.ndarray) -> np.ndarray:
    """The servers of `base` with the job's cores free on an SC where its predicted speed (at the cores it gets there)
    is >= 95 % of its best predicted speed over all SCs; `base` when none is."""
    meets = job.sc_score[servers.sc[base]] >= job.sc_score.max() + np.log(1 - QOS_LOSS)  # §2.3's QoS line, §3.2's best SC
    meets &= servers.cores[base] - servers.used[base] >= job.cores
    return base[meets] if meets.any() else base


def greedy(servers: Servers, job: Job, relax_step: float = 0.05, timeout_s: float = TIMEOUT_S,
           heterogeneity: bool = True, avoid: frozenset[int] = frozenset(), sc_rule: str = "best_present") -> tuple[int, int]:
    """The server for `job` (not one in `avoid` while another has room) and the number of backtracking relaxations
    (§3.2); under `sc_rule` "sc_qos" the search starts from `qos_servers` (SC_RULES)."""
    if sc_rule not in SC_RULES:
        raise ValueError(f"sc_rule: unknown {sc_rule!r}, expected one of {', '.join(SC_RULES)}")
    start = time.perf_counter()
    base = free(servers, job.cores, avoid)
    if sc_rule == "sc_qos":
        base = qos_servers(servers, job, base)
    t_server = servers.tolerated[base]
    d1 = t_server - job.caused / servers.capacity[base, None]  # D1 = t_server - c_new (on this server's resources)
    d2 = job.tolerated - servers.caused[base]  # D2 = t_new - c_server
    chain = np.hstack([d1[:, np.argsort(-job.caused, kind="stable")], d2[:, np.argsort(job.tolerated, kind="stable")]])
    relax = np.zeros(chain.shape[1])
    sets = [np.ones(base.size, dtype=bool)]
    level, backtracks = 0, 0
    while level < relax.size:
        if time.perf_counter() - start > timeout_s:
            break
        mask = sets[level] & (chain[:, level] >= -relax[level])
        if mask.any():
            sets.append(mask)
            level += 1
            continue
        back = level - 1  # revert to the previous SoI whose constraint can still be relaxed
        while back >= 0 and relax[back] >= 1:
            back -= 1
        backtracks += 1
        if back < 0:
            relax[level] += relax_step
            continue
        relax[back] += relax_step
        del sets[back + 1:]
        level = back
    chosen = np.flatnonzero(sets[-1])
    return pick(servers, job, base[chosen], (d1 + d2)[chosen], heterogeneity), backtracks


def quantise(scores: np.ndarray) -> np.ndarray:
    """Sensitivity scores in [0, 1] as 14-bit integers (§3.2)."""
    return np.round(np.clip(scores, 0, 1) * (2**SCORE_BITS - 1)).astype(int)


def h(k: int, value: int) -> int:
    """h_k: the SHA-1 variation of SoI k (§3.2: "different hash functions (h_i) for each SoI"), 14 bits in and out."""
    return int.from_bytes(hashlib.sha1(f"{k}:{value}".encode()).digest()[:4], "big") % 2**SCORE_BITS


def hash_scores(tolerated: np.ndarray) -> np.ndarray:
    """A server's hashed tolerated score per SoI."""
    return np.array([h(k, v) for k, v in enumerate(quantise(tolerated))])


def ring_points(hashed: np.ndarray, spread_ties: bool) -> np.ndarray:
    """Each server's point on SoI k's ring: its hashed tolerated score; with `spread_ties` (an option: §3.2 is silent
    on ties) the m servers of one hashed score take m points spaced 2^14 / m apart from it, in server order."""
    if not spread_ties:
        return hashed
    order = np.argsort(hashed, kind="stable")
    _, first, counts = np.unique(hashed[order], return_index=True, return_counts=True)
    group = np.repeat(np.arange(first.size), counts)
    rank = np.arange(hashed.size) - first[group]
    points = np.empty_like(hashed)
    points[order] = (hashed[order] + rank * 2**SCORE_BITS // counts[group]) % 2**SCORE_BITS
    return points


def sample(servers: Servers, job: Job, candidates: int, spread_ties: bool = True) -> np.ndarray:
    """Hash-based candidate sampling (§3.2): b = h_k(c_new(k)) corresponds to the server whose hashed tolerated score on
    SoI k is b (the next one up, modulo 2^14, when none is; servers at one point split by b); re-hashing b gives
    further servers. A server whose tolerated score equals the job's caused score (D1 = 0 on that SoI) is its SoI's
    first candidate."""
    picked: dict[int, None] = {}
    per_soi = -(-candidates // job.caused.size)
    for k, c in enumerate(quantise(job.caused)):
        points = ring_points(servers.hashed[:, k], spread_ties)
        order = np.argsort(points, kind="stable")
        ring = points[order]
        b, seen = h(k, int(c)), set()
        while len(seen) < per_soi and b not in seen:
            seen.add(b)
            at = int(np.searchsorted(ring, b)) % ring.size
            tied = order[np.searchsorted(ring, ring[at]):np.searchsorted(ring, ring[at], side="right")]
            picked.setdefault(int(tied[b % tied.size]), None)
            b = h(k, b)  # re-hash b: the next candidate
    return np.array(list(picked)[:candidates], dtype=int)


def quality(t_server: np.ndarray, c_new: np.ndarray) -> np.ndarray:
    """Q_i = sign(sum(t - c)) |1 - ||t - c||_1 / n_SoI|, normalised to [0, 1] over the candidates (§3.2)."""
    diff = t_server - c_new
    q = np.sign(diff.sum(axis=1)) * np.abs(1 - np.abs(diff).sum(axis=1) / diff.shape[1])
    span = q.max() - q.min()
    return (q - q.min()) / span if span > 0 else np.ones_like(q)


def statistical(servers: Servers, job: Job, candidates: int = 64, spread_ties: bool = True) -> int:
    """The sampled candidate of best quality Q_i, among those of the job's best SC present."""
    cands = np.intersect1d(sample(servers, job, candidates, spread_ties), free(servers, job.cores))
    if cands.size == 0:
        cands = free(servers, job.cores)
    q = quality(servers.tolerated[cands], job.caused / servers.capacity[cands, None])
    scores = job.sc_score[servers.sc[cands]]
    best = scores == scores.max()
    return int(cands[best][np.argmax(q[best])])


def interference_oblivious(servers: Servers, job: Job, rng: np.random.Generator) -> int:
    """NI (§4, §5.1): the job's best predicted SC with free cores, the next-ranked SC once those are full; within
    the SC any server (at random: NI has no interference information to prefer one)."""
    fits = free(servers, job.cores)
    scores = job.sc_score[servers.sc[fits]]
    return int(rng.choice(fits[scores == scores.max()]))


def heterogeneity_oblivious(servers: Servers, job: Job, timeout_s: float = TIMEOUT_S) -> int:
    """NH (§4): the greedy interference-aware search without visibility of the SCs."""
    return greedy(servers, job, timeout_s=timeout_s, heterogeneity=False)[0]


def random_server(servers: Servers, job: Job, rng: np.random.Generator) -> int:
    """R (§4): "assigns workloads randomly to servers without classification or scheduling overheads"."""
    return int(rng.integers(servers.sc.size))
