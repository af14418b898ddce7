"""Benchmark of Kwiken for YARN speculative execution on the embedded cluster with one slow node (issue 17
item 4, docs/kwiken.md). Prints ONE JSON line.

One node is made slow: a cgroup v1 CPU group ``/sys/fs/cgroup/cpu/corral-kwiken-<pid>`` with a CFS quota
(default 10 % of one core for all of the node's task containers together), and a background thread
that moves every task process of this cluster whose environment says ``NM_HOST=<that node>`` into it
(the MRAppMaster's container, its attempt's first, stays out: speculation cannot help a slow AM). The group is removed at the end.

Recurring jobs (wordcount, sort, grep; 4-8 maps, 1-3 reduces each) run in rounds, all of a round's jobs
at once: first ``--history-rounds`` rounds without speculation, ingested into a history store (the
JobHistory source, as the pipeline does), enough for 8 or more task durations per stage of 2 or more
tasks; then test rounds, each running every arm once, the arms alternated (ABBA: default speculation
first in even rounds, Kwiken first in odd ones) on the same slow node and the same inputs, so both meet
the same stragglers and the same drift of the machine's load:

- ``default``: Hadoop's default speculation (DefaultSpeculator with mapred-default.xml's keys and its
  LegacyTaskRuntimeEstimator);
- ``kwiken``: Kwiken's per-job settings from ``corral kwiken yarn-plan``'s code (Kwiken's
  TaskRuntimeEstimator under its default progress rule: a task is copied once its projected runtime,
  elapsed / progress, exceeds its stage's T_s, or it runs past T_s), re-planned before each of
  its rounds so that its copies are expected to spend the extra container-seconds per round default
  speculation has spent so far in this run (equal spend; default runs first in round 0). The extra
  container-seconds are measured from JobHistory as the planner predicts them: the durations of the
  attempts that did not succeed (a losing copy, or an original killed because its copy won);
- ``kwiken-timeout`` (with ``--timeout-arm``): the same, under the thesis's timeout rule (a copy once a task
  has run T_s, §5.3.1), planned the same way;
- ``default-distinct`` (with ``--distinct-default-arm``): default speculation with Kwiken's speculator class,
  DistinctNodeSpeculator (a copy never stays on its original's node), and nothing else of Kwiken's: what that rule
  alone gives default speculation;
- ``none`` (not with ``--quick``): no speculation. The history rounds are runs without speculation too and
  are reported as ``history`` (not alternated with the others).

Reported side by side: p50/p99/max JCT per arm, their ratios, what each arm spent (overall and per
round) and what Kwiken's plan expected to spend (``expected_extra_container_s``), next to what eq. 5.3's
linear allocation at the same budget (a copy priced at a mean task) is expected to spend.
Job completion time (JCT) is JobHistory's finishTime - submitTime. Per arm and task type, ``copy_launch_after_s``:
when each task's speculative copy started after its first attempt did (JobHistory's startTime); ``copies_won``.
Per arm, ``copy_decisions``: from each MR AM's syslog (the speculator's "we are speculating" line and the statuses the
AM logged before it), the copies split by whether the copied attempt had reported progress when its copy was
decided, and how many of those attempts were real stragglers (ran longer than T_s; default speculation's measured
against Kwiken's last plan's T_s).

Equal spend: Kwiken must spend no more than default speculation's measured extra container-seconds. Each Kwiken
plan targets default's spend per round so far; from its second round on, over the calibration an operator would
apply (``spend_calibration``): the arm's measured spend so far over its plans' expected spend, bounded below by
1/4, so a plan that overspent is scaled down and one that underspent is raised (at most 4 x) to be expected to
spend default's measured spend, never more.

Needs root (cgroups). ``--quick``: 3 history rounds and 2 test rounds of the two arms default and
kwiken (7 rounds of 4 jobs; a round takes one to several minutes depending on the machine's load).
Without it, 4 history rounds and 4 test rounds of the three arms.

Usage: sudo .venv/bin/python benchmarks/bench_kwiken_yarn.py [--quick] [--timeout-arm] [--distinct-default-arm] [--cpu-quota F] [--cluster-json PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from corral_yarn.cluster import Cluster, CorralTags
from corral_yarn.cluster.history import job_id_of
from corral_yarn.cluster.rest import Retry
from corral_yarn.kwiken.speculation import (
    DISTINCT_NODE_SPECULATOR, SPECULATIVE, SPECULATOR, TIMEOUT_MS, Rule, SpeculationSettings, apportion, budget_matching, expected_spend, plan_speculation,
    spend_calibration,
)
from corral_yarn.minicluster import StartOptions, load_description, start_cluster, stop_cluster
from corral_yarn.pipeline.catalog import RecurringJob
from corral_yarn.pipeline.history import history_source
from corral_yarn.pipeline.speculation import task_stages, with_speculation
from estimator.records import IngestReport
from estimator.store import HistoryStore

log = logging.getLogger("bench_kwiken_yarn")
CGROUP_ROOT = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000
AM_CONTAINER = re.compile(rb"(?:^|\0)CONTAINER_ID=container_\w+?_000001\0")  # an attempt's first container runs MRAppMaster
BLOCK = 1 << 20
# MR AM syslog lines (Hadoop 3.5, INFO): an attempt's container launched, its status as the AM got it, the speculator's copy, its end
LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
LAUNCHED = re.compile(r"(attempt_\w+) TaskAttempt Transitioned from ASSIGNED to RUNNING")
STATUS = re.compile(r"Progress of TaskAttempt (attempt_\w+) is : ([0-9.eE-]+)")
SPECULATING = re.compile(r"DefaultSpeculator\.addSpeculativeAttempt -- we are speculating (task_\w+)")
ENDED = re.compile(r"(attempt_\w+) TaskAttempt Transitioned from \w+ to (SUCCEEDED|KILLED|FAILED)$")
UPLOAD_RETRY = Retry(attempts=4, backoff_s=10.0)  # a whole input upload again (it is atomic) while WebHDFS does not answer under load
WORDS = [f"w{k:04d}" for k in range(2000)]
# (key, program, maps, reduces): the recurring jobs; one input block per map
JOBS = [("wc-big", "wordcount", 8, 3), ("sort-mid", "sort", 6, 3), ("grep-mid", "grep", 6, 1), ("wc-small", "wordcount", 4, 1)]
OFF = {SPECULATIVE["map"]: "false", SPECULATIVE["reduce"]: "false"}
RULES: dict[str, Rule] = {"kwiken": "progress", "kwiken-timeout": "timeout"}  # Kwiken's arms and their estimator's rule
ON = {SPECULATIVE["map"]: "true", SPECULATIVE["reduce"]: "true"}  # mapred-default.xml's; the rest of its keys untouched
ON_DISTINCT = ON | {SPECULATOR: DISTINCT_NODE_SPECULATOR}  # the same, with Kwiken's placement rule for copies
FIXED = {"none": OFF, "default": ON, "default-distinct": ON_DISTINCT}  # the arms whose settings no plan makes


class SlowNode:
    """One NodeManager's task containers held to ``quota`` of one CPU by a cgroup v1 CPU group of ours."""

    def __init__(self, host: str, marker: str, quota: float) -> None:
        self.host, self.marker = f"NM_HOST={host}\0".encode(), marker.encode()
        self.group = CGROUP_ROOT / f"corral-kwiken-{os.getpid()}"
        self.quota = quota
        self.moved: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="slow-node", daemon=True)

    def __enter__(self) -> SlowNode:
        self.group.mkdir()
        (self.group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (self.group / "cpu.cfs_quota_us").write_text(str(int(self.quota * PERIOD_US)))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                (CGROUP_ROOT / "cgroup.procs").write_text(pid)
            except OSError:  # it ended meanwhile
                pass
        self.group.rmdir()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            for entry in os.listdir("/proc"):
                if entry.isdigit() and int(entry) not in self.moved and self._is_slow_task(entry):
                    try:
                        (self.group / "cgroup.procs").write_text(entry)
                        self.moved.add(int(entry))
                    except OSError:
                        pass

    def _is_slow_task(self, pid: str) -> bool:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            return False
        return self.host in environ and self.marker in environ and not AM_CONTAINER.search(environ)


def _text(rng: random.Random, size: int, program: str) -> str:
    lines, total = [], 0
    while total < size:
        if program == "sort":
            line = f"{rng.choice(WORDS)}{rng.randint(0, 99999):05d}\tv{rng.randint(0, 999)}"
        else:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


class Bench:
    def __init__(self, cluster: Cluster, jar: str, work: Path, node_dirs: Path) -> None:
        self.cluster, self.jar, self.work, self.node_dirs = cluster, jar, work, node_dirs
        self.topology = cluster.topology()
        self.racks = tuple(self.topology.racks)
        self.nonce = uuid.uuid4().hex[:8]
        self.jobs = {key: RecurringJob(key=key, program=program, reduces=reduces, grep_pattern="w00[0-4].*", local_input=str(work / key))
                     for key, program, _, reduces in JOBS}

    def upload_inputs(self) -> None:
        rng = random.Random(0)
        uploader = self.cluster.uploader(self.topology)
        for key, program, maps, _ in JOBS:
            local = self.work / key
            local.mkdir(parents=True, exist_ok=True)
            (local / "part-0").write_text(_text(rng, maps * BLOCK - 4096, program))
            UPLOAD_RETRY.call(f"upload {key}'s input",
                              partial(uploader.upload, local, self._input(key), list(self.racks), block_bytes=BLOCK, overwrite=True))

    def _input(self, key: str) -> str:
        return f"/bench-kwiken/{self.nonce}/{key}/in"

    def round(self, config: str, index: int, props: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
        """Run every job once at the same time under ``props`` (per recurring key); their measurements."""
        submitter = self.cluster.mapreduce()
        apps = []
        for key, entry in self.jobs.items():
            name = f"{key}-{config}-{index}"
            job = with_speculation(entry.mapreduce_job(name, self.jar, [self._input(key)], f"/bench-kwiken/{self.nonce}/out/{name}"), props[key])
            tags = CorralTags(f"kwy-{self.nonce}-{config}-{index}", key, self.racks, key=key)
            apps.append((key, props[key], submitter.submit(job, tags).app_id))
        with ThreadPoolExecutor(len(apps)) as pool:
            return list(pool.map(lambda a: self.measure(config, *a), apps))

    def measure(self, config: str, key: str, props: dict[str, str], app_id: str) -> dict[str, Any]:
        final = self.cluster.rm.wait(app_id, timeout_s=1800)
        job_id = job_id_of(app_id)
        job = self.cluster.history.wait_for_job(job_id)
        attempts = [a for a in self.cluster.history.attempts(job_id) if a.type in ("MAP", "REDUCE")]
        seconds = [max(0, a.finished_ms - a.started_ms) / 1000 if a.finished_ms else 0.0 for a in attempts]
        tasks = {a.attempt_id.rsplit("_", 1)[0].replace("attempt_", "task_") for a in attempts}
        conf = self.cluster.history.conf(job_id)
        launches, won, on_node = _copies(attempts)
        decisions = [{**d, "timeout_s": _timeout_s(props, d["type"])} for d in self.decisions(app_id)]
        for d in decisions:
            log.info("%s %s copy decided: %s", config, key, d)
        return {"config": config, "key": key, "job_id": job_id, "succeeded": final.succeeded, "copy_launch_after_s": launches, "copies_won": won,
                "copies_on_original_node_s": on_node,
                "copy_decisions": decisions,
                "jct_s": (job["finishTime"] - job["submitTime"]) / 1000,
                "task_container_s": sum(seconds), "extra_container_s": sum(s for a, s in zip(attempts, seconds) if a.state != "SUCCEEDED"),
                "tasks": len(tasks), "attempts": len(attempts), "settings_in_job_conf": all(_same(conf.get(k), v) for k, v in props.items())}

    def decisions(self, app_id: str) -> list[dict[str, Any]]:
        """``copy_decisions`` of the job's MR AM, from its first attempt's syslog on its NodeManager's log dir (the
        embedded cluster keeps container logs on local disk)."""
        found = sorted(self.node_dirs.glob(f"*/logs/{app_id}/container_*_01_000001/syslog"))
        if not found:
            log.warning("%s: no MR AM syslog under %s", app_id, self.node_dirs)
            return []
        with found[0].open(errors="replace") as syslog:
            return copy_decisions(syslog)

    def ingest(self, store: HistoryStore, runs: list[dict[str, Any]]) -> IngestReport:
        source = history_source(self.cluster)
        return store.append([source.run(r["job_id"]) for r in runs])


class Progress:
    """One line per finished round on stderr: which, how long it took, and the time left at the mean pace so far."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.start = total, 0, time.monotonic()

    def round_done(self, label: str, started: float) -> None:
        self.done += 1
        now = time.monotonic()
        left = (now - self.start) / self.done * (self.total - self.done)
        log.info("progress: round %d of %d (%s) took %.0f s; %.0f s since the first round, about %.0f s left",
                 self.done, self.total, label, now - started, now - self.start, left)


def _copies(attempts: list[Any]) -> tuple[list[tuple[str, float]], dict[str, int], dict[str, list[float]]]:
    """Per task with a speculative copy: its type and the seconds from its first attempt's start to the copy's; per
    type how many copies won (the task's first attempt did not succeed); and per type the seconds each copy that ran
    on its first attempt's node ran (a DistinctNodeSpeculator kills such a copy once it starts)."""
    by_task: dict[str, list[Any]] = {}
    for a in attempts:
        by_task.setdefault(a.attempt_id.rsplit("_", 1)[0], []).append(a)
    launches, won, on_node = [], {"MAP": 0, "REDUCE": 0}, {"MAP": [], "REDUCE": []}
    for group in by_task.values():
        if len(group) > 1:
            first, *copies = sorted(group, key=lambda a: a.started_ms)
            launches.append((first.type, (copies[0].started_ms - first.started_ms) / 1000))
            won[first.type] += first.state != "SUCCEEDED"
            on_node[first.type] += [max(0, c.finished_ms - c.started_ms) / 1000 for c in copies if c.node_http_address == first.node_http_address]
    return launches, won, on_node


def copy_decisions(syslog: Iterable[str]) -> list[dict[str, Any]]:
    """Per speculative copy in an MR AM's syslog, what the AM knew of the task's running attempt when its speculator
    decided the copy: seconds since the attempt's container launched (a reduce's include its shuffle), how many statuses
    it had sent and the progress of the last one (None: none), and how it ended: ``ran_s`` (its seconds, up to its kill
    if the copy won) and ``won`` (the copy's)."""
    launched: dict[str, float] = {}
    statuses: dict[str, list[float]] = {}
    ended: dict[str, tuple[float, str]] = {}
    decided: list[tuple[float, str, dict[str, Any]]] = []
    for line in syslog:
        if not (stamp := LOG_TIME.match(line)):
            continue
        at = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if m := LAUNCHED.search(line):
            launched[m.group(1)] = at
        elif m := STATUS.search(line):
            statuses.setdefault(m.group(1), []).append(float(m.group(2)))
        elif m := ENDED.search(line):
            ended[m.group(1)] = (at, m.group(2))
        elif m := SPECULATING.search(line):
            task = m.group(1).replace("task_", "attempt_", 1) + "_"
            running = sorted(a for a in launched if a.startswith(task) and a not in ended)
            if running:
                seen = statuses.get(running[0], [])
                decided.append((at, running[0], {"type": "MAP" if "_m_" in task else "REDUCE", "elapsed_s": at - launched[running[0]],
                                                 "statuses": len(seen), "progress": seen[-1] if seen else None}))
    out = []
    for at, attempt, record in decided:
        end, state = ended.get(attempt, (at, "UNKNOWN"))
        out.append({**record, "ran_s": end - launched[attempt], "won": state != "SUCCEEDED"})
    return out


def _timeout_s(props: dict[str, str], task_type: str) -> float | None:
    """T_s of the type in a job's Kwiken settings (s); None without one (default speculation)."""
    ms = props.get(TIMEOUT_MS["map" if task_type == "MAP" else "reduce"])
    return None if ms is None else int(ms) / 1000


def decision_split(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """Copies by what the AM had of the copied attempt when its copy was decided: no progress (no status, or only
    progress 0) or some; per group, how many copied attempts were real stragglers (ran longer than T_s; for a killed
    original, up to its kill: a lower bound) and how many copies won; and the seconds run at the decision."""
    def group(ds: list[dict[str, Any]]) -> dict[str, Any]:
        timed = [d for d in ds if d["timeout_s"] is not None]
        return {"copies": len(ds), "no_status": sum(d["statuses"] == 0 for d in ds), "won": sum(d["won"] for d in ds),
                "with_timeout": len(timed), "stragglers": sum(d["ran_s"] > d["timeout_s"] for d in timed),
                "decided_after_s": _quantiles([d["elapsed_s"] for d in ds])}
    maps, reduces = ([d for d in decisions if d["type"] == t] for t in ("MAP", "REDUCE"))
    return {"map": {"no_progress": group([d for d in maps if not d["progress"]]), "progress": group([d for d in maps if d["progress"]])},
            "reduce": group(reduces)}


def _same(shown: str | None, given: str) -> bool:
    """JobHistory's JSON types values (``0.0`` may come back as ``0``): equal as numbers, else as text."""
    try:
        return float(shown or "nan") == float(given)
    except ValueError:
        return shown == given


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    jct = np.array([r["jct_s"] for r in runs])
    task_s, extra = sum(r["task_container_s"] for r in runs), sum(r["extra_container_s"] for r in runs)
    return {"jobs": len(runs), "failed": sum(not r["succeeded"] for r in runs), "p50_jct_s": float(np.percentile(jct, 50)),
            "p90_jct_s": float(np.percentile(jct, 90)), "p99_jct_s": float(np.percentile(jct, 99)), "max_jct_s": float(jct.max()),
            "mean_jct_s": float(jct.mean()), "task_container_s": task_s, "extra_container_s": extra,
            "extra_fraction": extra / max(task_s - extra, 1e-9), "speculative_attempts": sum(r["attempts"] - r["tasks"] for r in runs),
            "settings_in_job_conf": all(r["settings_in_job_conf"] for r in runs),
            "copy_launch_after_s": {t.lower(): _quantiles([d for r in runs for u, d in r["copy_launch_after_s"] if u == t]) for t in ("MAP", "REDUCE")},
            "copies_won": {t.lower(): sum(r["copies_won"][t] for r in runs) for t in ("MAP", "REDUCE")},
            "copies_on_original_node": {t.lower(): _quantiles([d for r in runs for d in r["copies_on_original_node_s"][t]]) for t in ("MAP", "REDUCE")},
            "copy_decisions": decision_split([d for r in runs for d in r["copy_decisions"]]),
            "mean_jct_s_by_job": {k: float(np.mean([r["jct_s"] for r in runs if r["key"] == k])) for k, *_ in JOBS}}


def _quantiles(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"copies": 0}
    v = np.array(values)
    return {"copies": int(v.size), "min": float(v.min()), "p10": float(np.percentile(v, 10)), "p50": float(np.percentile(v, 50)),
            "p90": float(np.percentile(v, 90)), "max": float(v.max())}


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="3 history rounds and 2 test rounds (ABBA) of default and Kwiken only")
    p.add_argument("--history-rounds", type=int, default=None, help="rounds without speculation for the history (default 4; --quick 3)")
    p.add_argument("--rounds", type=int, default=None, help="test rounds, each running every arm once (default 4; --quick 2)")
    p.add_argument("--timeout-arm", action="store_true", help="a third test arm, kwiken-timeout: Kwiken under the thesis's timeout rule")
    p.add_argument("--distinct-default-arm", action="store_true",
                   help="a test arm default-distinct: default speculation whose copies never stay on their original's node")
    p.add_argument("--cpu-quota", type=float, default=0.1, help="the slow node's CPU, a fraction of one core (default 0.1)")
    p.add_argument("--cluster-json", type=Path, default=None, help="use this running embedded cluster instead of starting one")
    return p.parse_args()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("hdfs").setLevel(logging.WARNING)
    args = _args()
    start = time.monotonic()
    history_rounds = args.history_rounds or (3 if args.quick else 4)
    rounds = args.rounds or (2 if args.quick else 4)
    arms = (["default", "kwiken"] + (["kwiken-timeout"] if args.timeout_arm else []) + (["default-distinct"] if args.distinct_default_arm else [])
            + ([] if args.quick else ["none"]))
    work = Path(tempfile.mkdtemp(prefix="bench-kwiken-yarn-"))
    options = StartOptions(base_dir=work / "cluster", exit_with=os.getpid())
    description = load_description(args.cluster_json) if args.cluster_json else start_cluster(options)
    try:
        result = run(description, work, history_rounds, rounds, args.cpu_quota, arms)
    finally:
        if not args.cluster_json:
            stop_cluster(options.description_path)
    result["wall_s"] = round(time.monotonic() - start, 1)
    print(json.dumps(result))


def arm_order(arms: list[str], k: int) -> list[str]:
    """Round k's order: ABBA over default and Kwiken (default first in even rounds, so it has spent before
    Kwiken's first plan), any other arm between them."""
    first, last = ("default", "kwiken") if k % 2 == 0 else ("kwiken", "default")
    return [first, *(a for a in arms if a not in (first, last)), last]


def plan_kwiken(store: HistoryStore, default_runs: list[dict[str, Any]], rule: Rule, factor: float = 1.0) -> tuple[SpeculationSettings, dict[str, Any]]:
    """Kwiken's settings under ``rule`` expected to spend the extra container-seconds per round that default
    speculation has spent so far, over ``factor`` (``spend_calibration``), and what eq. 5.3's linear cost would have
    planned at the same budget."""
    stages, runs = task_stages(store.runs())
    target = sum(r["extra_container_s"] for r in default_runs) / (len(default_runs) / len(JOBS))
    settings = plan_speculation(stages, budget_matching(target / factor, stages), runs, rule=rule)
    linear, _ = apportion(stages, settings.budget)
    return settings, {"rule": rule, "scale": settings.scale, "target_extra_container_s": target, "calibration": factor, "budget": settings.budget,
                      "sumvar_budget": settings.sumvar_budget, "planned_cost": settings.planned_cost,
                      "planned_extra_fraction": settings.planned_extra_fraction, "expected_extra_container_s": settings.expected_extra_container_s,
                      "linear_plan_expected_extra_container_s": expected_spend(stages, linear)[0]}


def run(description: dict[str, Any], work: Path, history_rounds: int, rounds: int, quota: float, arms: list[str]) -> dict[str, Any]:
    cluster = Cluster.from_description(description, progress=False)
    bench = Bench(cluster, description["examples_jar"], work, Path(description["log_dir"]).parent / "yarn")
    bench.upload_inputs()
    slow = description["racks"][0]["nodes"][0]["host"]
    marker = str(Path(description["log_dir"]).parent)
    store = HistoryStore(work / "history")
    by: dict[str, list[dict[str, Any]]] = {a: [] for a in ["history", *arms]}
    per_round: list[dict[str, Any]] = []
    plans: dict[str, SpeculationSettings] = {}
    progress = Progress(history_rounds + rounds * len(arms))
    with SlowNode(slow, marker, quota) as node:
        for k in range(history_rounds):
            started = time.monotonic()
            by["history"] += (runs := bench.round("history", k, {key: OFF for key in bench.jobs}))
            log.info("history round %d: %s", k, bench.ingest(store, runs).summary())
            progress.round_done(f"history {k}", started)
        for k in range(rounds):
            entry: dict[str, Any] = {"round": k, "order": arm_order(arms, k)}
            for arm in entry["order"]:
                if arm in RULES:
                    spent = sum(r["extra_container_s"] for r in by[arm])
                    expected = sum(e[f"{arm}_plan"]["expected_extra_container_s"] for e in per_round if f"{arm}_plan" in e)
                    plans[arm], entry[f"{arm}_plan"] = plan_kwiken(store, by["default"], RULES[arm], spend_calibration(spent, expected))
                    log.info("Kwiken's plan (%s) %s: %s", arm, entry[f"{arm}_plan"], {j.key: j.properties for j in plans[arm].jobs})
                props = {key: FIXED[arm] if arm in FIXED else plans[arm].properties(key) for key in bench.jobs}
                started = time.monotonic()
                runs = bench.round(arm, k, props)
                by[arm] += runs
                done = summary(runs)
                entry[arm] = {"extra_container_s": done["extra_container_s"], "extra_fraction": done["extra_fraction"],
                              "max_jct_s": done["max_jct_s"], "copy_launch_after_s": done["copy_launch_after_s"], "wall_s": round(time.monotonic() - started, 1)}
                log.info("round %d %s: %s", k, arm, json.dumps(entry[arm]))
                progress.round_done(f"{arm} {k}", started)
            per_round.append(entry)
        moved = len(node.moved)
    for r in by["default"]:  # default speculation has no T_s: its copied attempts are measured against Kwiken's last plan's
        r["copy_decisions"] = [{**d, "timeout_s": _timeout_s(plans["kwiken"].properties(r["key"]), d["type"])} for d in r["copy_decisions"]]
    s = {c: summary(r) for c, r in by.items()}
    settings = plans["kwiken"]
    figures = {
        "yarn.p99_jct_ratio_vs_default_speculation": s["kwiken"]["p99_jct_s"] / s["default"]["p99_jct_s"],
        "yarn.max_jct_ratio_vs_default_speculation": s["kwiken"]["max_jct_s"] / s["default"]["max_jct_s"],
        "yarn.p50_jct_ratio_vs_default_speculation": s["kwiken"]["p50_jct_s"] / s["default"]["p50_jct_s"],
        "yarn.extra_container_s_ratio_vs_default_speculation": s["kwiken"]["extra_container_s"] / max(s["default"]["extra_container_s"], 1e-9),
        "yarn.extra_fraction_ratio_vs_default_speculation": s["kwiken"]["extra_fraction"] / max(s["default"]["extra_fraction"], 1e-9),
        "yarn.kwiken_spent_over_expected": s["kwiken"]["extra_container_s"] / max(sum(e["kwiken_plan"]["expected_extra_container_s"] for e in per_round), 1e-9),
        "yarn.kwiken_extra_container_s": s["kwiken"]["extra_container_s"], "yarn.default_extra_container_s": s["default"]["extra_container_s"],
    }
    if "kwiken-timeout" in s:
        figures["yarn.kwiken_timeout_p99_jct_ratio_vs_default_speculation"] = s["kwiken-timeout"]["p99_jct_s"] / s["default"]["p99_jct_s"]
        figures["yarn.kwiken_timeout_extra_container_s_ratio_vs_default_speculation"] = (
            s["kwiken-timeout"]["extra_container_s"] / max(s["default"]["extra_container_s"], 1e-9))
    if "default-distinct" in s:
        figures["yarn.default_distinct_p99_jct_ratio_vs_default_speculation"] = s["default-distinct"]["p99_jct_s"] / s["default"]["p99_jct_s"]
        figures["yarn.p99_jct_ratio_vs_default_distinct"] = s["kwiken"]["p99_jct_s"] / s["default-distinct"]["p99_jct_s"]
        figures["yarn.extra_container_s_ratio_vs_default_distinct"] = s["kwiken"]["extra_container_s"] / max(s["default-distinct"]["extra_container_s"], 1e-9)
    if "none" in s:
        figures["yarn.p99_jct_ratio_vs_no_speculation"] = s["kwiken"]["p99_jct_s"] / s["none"]["p99_jct_s"]
        figures["yarn.default_p99_jct_ratio_vs_no_speculation"] = s["default"]["p99_jct_s"] / s["none"]["p99_jct_s"]
    return {
        "bench": "kwiken_yarn", "jobs": [dict(zip(("key", "program", "maps", "reduces"), j)) for j in JOBS],
        "slow_node": slow, "cpu_quota": quota, "processes_slowed": moved, "history_rounds": history_rounds, "test_rounds": rounds, "arms": arms,
        "budget_source": "before each Kwiken round: default speculation's extra container-seconds per round so far in this run, "
                         "over the arm's calibration (its spend so far over its plans' expectation, >= 1/4: spend_calibration), over the history's "
                         "container-seconds per round (budget_matching)",
        "extra_fraction": {c: s[c]["extra_fraction"] for c in s},
        "rounds": per_round,
        "last_plan": {j.key: {s_.type: {"r": round(s_.reissue_fraction, 4), "timeout_s": s_.timeout_s, "timeout_ratio": s_.timeout_ratio, "samples": s_.samples} for s_ in j.stages}
                      for j in settings.jobs},
        "last_settings": {j.key: j.properties for j in settings.jobs},
        **{c: s[c] for c in s}, **figures,
    }


if __name__ == "__main__":
    main()
