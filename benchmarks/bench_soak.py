"""Soak (issue 20 item 2): many small tagged and untagged applications through two embedded clusters
running at the same time, one with stock YARN's CapacityScheduler and one with Corral's, in short
simultaneous bursts; one JSON line with ``apps`` and ``throughput_ratio_corral_vs_stock``.

Fairness on a shared machine: both clusters are started together and stay up for the whole run, and
in each of ``--rounds`` rounds both run one burst at the same time, so both see the same seconds of
machine load. A round's ratio is Corral's applications per second over stock's in that round; the
headline ratio is the median of the rounds' ratios, with its spread (min, quartiles, max).
Scheduler-side figures come from the RM's own
``CapacitySchedulerMetrics``: calls of nodeUpdate (one per node heartbeat), allocate and commit
(one per container allocated) and their mean times per call over the whole run (Hadoop's nanosecond
timers); committed containers per node heartbeat does not depend on how fast the CPU is, only on
what the scheduler does with each heartbeat. The RM's JMX servlet refreshes a bean at most every
10 s and its AvgTime is the mean over the calls since the previous refresh, so a sampler reads the
bean once a second, sees every refresh and weighs each window's mean by its calls; each burst takes
the bean's first refresh before and after it, outside the timed window. ``--alternate`` runs a
round's two bursts one after the other instead, the order flipped every round (stock-Corral,
Corral-stock, ...) so that a load trend falls on both alike; on this 2-core machine the load moves
too fast within a minute for that to give a steady ratio (docs/reliability.md).

Each application is the cheapest one that reaches the scheduler: its ApplicationMaster container runs
``true`` (no JVM), so the RM admits it, the scheduler allocates its AM container (inside its rack set
R_j for a tagged application under Corral), a NodeManager launches and releases it, and the RM ends
the application FAILED, as its AM never registers. An AM that registers and finishes (distributed
shell, a MapReduce job with no maps) would add a JVM start, seconds of CPU per application on 2
cores, to every application, so the ratio would mostly measure JVM start-ups; the task containers
such an AM asks for are what benchmarks/bench_java_plugins.py times per ``allocate`` call. A share of
the applications (default 1/2) is tagged with a rack set of one or two racks (thesis §4.1). The
client keeps ``--in-flight`` applications not yet ended and submits through the project's RM adapter
(``ResourceManager.submit``: queue check, idempotency look-up by tag, new-application, submit).

Bounded: at most ``rounds x 2 x burst`` applications, each burst cut at ``--burst-timeout`` seconds,
the whole measurement at ``--max-seconds``. ``--quick``: 6 rounds of 40 applications per burst, 1,200 s
at most for all rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from corral_yarn.cli.types import positive_float, positive_int, unit_interval
from corral_yarn.cluster import Cluster
from corral_yarn.cluster.rm import AmContainerSpec, ResourceManager, Submission
from corral_yarn.cluster.tags import CorralTags
from corral_yarn.minicluster import StartOptions, start_cluster, stop_cluster

# The embedded cluster runs every daemon in one JVM: the scheduler's metrics source is registered
# under whichever daemon's service name the metrics system had, so it is found by its name alone.
SCHEDULER_METRICS = "Hadoop:name=CapacitySchedulerMetrics,*"
CORRAL_METRICS = "Hadoop:service=ResourceManager,name=CorralSchedulerMetrics"
CORRAL_COUNTERS = ("RestrictedApplications", "RackSetFallbacks", "MalformedRackSetTags", "UngrantedTags")
MEMORY = "java.lang:type=Memory"
ENDED = ("appsCompleted", "appsFailed", "appsKilled")
TIMERS = ("NodeUpdate", "Allocate", "CommitSuccess")  # CapacitySchedulerMetrics' MutableRates, in ns
SCHEDULERS = ("capacity", "corral")
QUICK = {"rounds": 6, "burst": 40, "max_seconds": 1200.0}
JMX_REFRESH_WAIT_S = 15.0  # the JMX cache lives 10 s


# ---- pure parts -------------------------------------------------------------------------------

def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, None when the denominator is not positive."""
    return numerator / denominator if denominator > 0 else None


def round_ratios(stock: Sequence[float], corral: Sequence[float]) -> list[float | None]:
    """Per round, Corral's rate over stock's (None where stock measured nothing)."""
    if len(stock) != len(corral):
        raise ValueError(f"{len(stock)} stock bursts but {len(corral)} Corral bursts")
    return [ratio(c, s) for s, c in zip(stock, corral)]


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Median, quartiles, min and max of the measured values (None left out), rounded to 3 places."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return {"median": None, "q1": None, "q3": None, "min": None, "max": None, "n": 0}
    q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else (xs[0], xs[0], xs[0])
    return {"median": round(statistics.median(xs), 3), "q1": round(q1, 3), "q3": round(q3, 3),
            "min": round(xs[0], 3), "max": round(xs[-1], 3), "n": len(xs)}


def burst_order(round_index: int) -> tuple[str, str]:
    """Which scheduler's burst goes first in a round: stock first in even rounds, Corral first in odd ones."""
    return SCHEDULERS if round_index % 2 == 0 else SCHEDULERS[::-1]


def timer_deltas(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """Calls of each CapacitySchedulerMetrics timer between two snapshots of the bean."""
    return {t: int(after.get(f"{t}NumOps", 0)) - int(before.get(f"{t}NumOps", 0)) for t in TIMERS}


def accumulate_timers(timed: dict[str, list[float]], before: dict[str, Any], after: dict[str, Any]) -> None:
    """Adds one refresh window of each timer to ``timed`` (timer -> [total ns, calls]): the bean's
    AvgTime is the mean over the calls since its previous refresh, so it weighs by their number."""
    for timer, calls in timer_deltas(before, after).items():
        if calls > 0:
            timed[timer][0] += float(after.get(f"{timer}AvgTime", 0.0)) * calls
            timed[timer][1] += calls


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, checked before anything starts (a wrong value exits 2 naming it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK['rounds']} rounds of {QUICK['burst']} applications per burst, {QUICK['max_seconds']:.0f} s at most "
                             "(overrides --rounds, --burst, --max-seconds)")
    parser.add_argument("--alternate", dest="together", action="store_false",
                        help="run each round's two bursts one after the other, the order flipped every round, "
                             "instead of at the same time (the default)")
    parser.add_argument("--rounds", type=positive_int, default=10, help="rounds, each one burst per scheduler (default 10)")
    parser.add_argument("--burst", type=positive_int, default=24, help="applications per burst (default 24)")
    parser.add_argument("--burst-timeout", type=positive_float, default=120.0, help="seconds a burst may last, at most (default 120)")
    parser.add_argument("--max-seconds", type=positive_float, default=1800.0,
                        help="seconds for all rounds, at most; no round starts after (default 1800)")
    parser.add_argument("--in-flight", type=positive_int, default=12, help="applications not yet ended the client keeps (default 12)")
    parser.add_argument("--tagged-share", type=unit_interval(closed=True), default=0.5, help="share of applications with a rack set (default 0.5)")
    parser.add_argument("--racks", type=int, default=3, help="racks of each cluster (default 3)")
    parser.add_argument("--nodes-per-rack", type=positive_int, default=1, help="workers per rack of each cluster (default 1)")
    parser.add_argument("--start-timeout", type=positive_float, default=900.0, help="seconds to wait for the clusters to start (default 900)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.burst, args.max_seconds = QUICK["rounds"], QUICK["burst"], QUICK["max_seconds"]
    if args.racks < 2:
        parser.error(f"--racks must be at least 2 (a rack set and others), got {args.racks}")
    return args


# ---- one cluster ------------------------------------------------------------------------------

def jmx(rm: ResourceManager, bean: str) -> dict[str, Any]:
    """One JMX bean of the RM (its ``/jmx`` servlet), or {} when it has none of that name."""
    beans = rm.rest.get("/jmx", params={"qry": bean}).get("beans", [])
    return beans[0] if beans else {}


def ended(rm: ResourceManager) -> int:
    metrics = rm.rest.get("/ws/v1/cluster/metrics")["clusterMetrics"]
    return sum(int(metrics[k]) for k in ENDED)


class MetricsSampler(threading.Thread):
    """Reads the cluster JVM's used heap (every daemon shares it) and CapacitySchedulerMetrics every
    second until stopped; the only reader of the scheduler bean, so it sees every refresh of it."""

    def __init__(self, rm: ResourceManager) -> None:
        super().__init__(daemon=True)
        self.rm, self.heap_mb, self.stop = rm, [], threading.Event()
        self.bean, self.refreshes, self.changed = jmx(rm, SCHEDULER_METRICS), 0, threading.Condition()
        self.timed: dict[str, list[float]] = {t: [0.0, 0.0] for t in TIMERS}

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.heap_mb.append(jmx(self.rm, MEMORY)["HeapMemoryUsage"]["used"] / 2**20)
            bean = jmx(self.rm, SCHEDULER_METRICS)
            if bean.get("NodeUpdateNumOps") != self.bean.get("NodeUpdateNumOps"):
                with self.changed:
                    accumulate_timers(self.timed, self.bean, bean)
                    self.bean, self.refreshes = bean, self.refreshes + 1
                    self.changed.notify_all()

    def next_refresh(self) -> dict[str, Any]:
        """The scheduler bean as soon as the JMX cache has refreshed it (its node-update count moved)."""
        with self.changed:
            seen = self.refreshes
            self.changed.wait_for(lambda: self.refreshes > seen, timeout=JMX_REFRESH_WAIT_S)
            return self.bean

    def mean_us(self, timer: str) -> float | None:
        total_ns, calls = self.timed[timer]
        return round(total_ns / calls / 1e3, 2) if calls else None


class Soaker:
    """One cluster under soak: submits bursts and keeps what the summary needs."""

    def __init__(self, scheduler: str, description: dict[str, Any], args: argparse.Namespace) -> None:
        self.scheduler, self.description, self.args = scheduler, description, args
        self.rm = Cluster.from_description(description, progress=False).rm
        self.racks = [r["name"] for r in description["racks"]]
        self.rng = random.Random(args.seed)  # the same application mix on both clusters
        self.run_id = f"soak{int(time.time())}{scheduler[:2]}"
        self.submitted: dict[str, tuple[Submission, str]] = {}
        self.ended_at_start = 0
        self.bursts: list[dict[str, Any]] = []
        self.metrics = MetricsSampler(self.rm)

    def submission(self, i: int) -> Submission:
        tagged = self.rng.random() < self.args.tagged_share
        rack_set = tuple(self.rng.sample(self.racks, self.rng.choice((1, 2)))) if tagged else ()
        return Submission(name=f"soak-{i}", tags=CorralTags(f"{self.run_id}x{i}", f"soak-{i}", rack_set),
                          am=AmContainerSpec(command="true"), priority=self.rng.randrange(0, 10), memory_mb=128, vcores=1,
                          max_attempts=1)

    def not_ended(self) -> int:
        return len(self.submitted) - (ended(self.rm) - self.ended_at_start)

    def start(self) -> None:
        self.ended_at_start = ended(self.rm)
        self.metrics.start()

    def burst(self) -> dict[str, Any]:
        """One burst of ``--burst`` applications; its figures (appended to ``bursts``)."""
        timeout, n0 = self.args.burst_timeout, len(self.submitted)
        drain_deadline = time.monotonic() + timeout  # a previous burst cut by its timeout must not count here
        while self.not_ended() > 0 and time.monotonic() < drain_deadline:
            time.sleep(0.2)
        clean = self.not_ended() == 0
        subs = [self.submission(i) for i in range(n0, n0 + self.args.burst)]
        timers0 = self.metrics.next_refresh()
        ended0, started = ended(self.rm), time.monotonic()
        reports = _submit_all(self.rm, subs, self.args.in_flight, lambda: ended(self.rm) - ended0, started + timeout)
        while ended(self.rm) - ended0 < len(reports) and time.monotonic() < started + timeout:
            time.sleep(0.1)
        seconds = time.monotonic() - started
        done, timers1 = ended(self.rm) - ended0, self.metrics.next_refresh()
        self.submitted.update({s.name: (s, reports[s.name]) for s in subs if s.name in reports})
        calls = timer_deltas(timers0, timers1)
        figures = {"submitted": len(reports), "ended": done, "seconds": round(seconds, 2), "apps_per_s": round(done / seconds, 3),
                   "node_updates": calls["NodeUpdate"], "allocates": calls["Allocate"], "commits": calls["CommitSuccess"],
                   "clean_start": clean, "node_heartbeat_interval_ms_p50": timers1.get("SchedulerNodeHBInterval50thPercentileTime"),
                   "node_heartbeat_interval_ms_p99": timers1.get("SchedulerNodeHBInterval99thPercentileTime")}
        self.bursts.append(figures)
        return figures

    def summary(self) -> dict[str, Any]:
        self.metrics.stop.set()
        self.metrics.join()
        b = self.bursts
        total = {k: sum(x[k] for x in b) for k in ("submitted", "ended", "node_updates", "allocates", "commits")}
        seconds = sum(x["seconds"] for x in b)
        corral = jmx(self.rm, CORRAL_METRICS)
        return {
            **total, "seconds": round(seconds, 1), "apps_per_s": round(total["ended"] / seconds, 3) if seconds else None,
            "apps_per_s_per_burst": spread([x["apps_per_s"] for x in b]),
            "commits_per_node_update": round(total["commits"] / total["node_updates"], 4) if total["node_updates"] else None,
            **{f"{t}_avg_us": self.metrics.mean_us(t) for t in TIMERS},
            **{f"node_heartbeat_interval_ms_{p}_median": spread([x[f"node_heartbeat_interval_ms_{p}"] for x in b])["median"]
               for p in ("p50", "p99")},
            "bursts_not_clean": sum(1 for x in b if not x["clean_start"]),
            "heap_used_mb_peak": round(max(self.metrics.heap_mb, default=0.0), 1),
            "heap_used_mb_end": round(jmx(self.rm, MEMORY)["HeapMemoryUsage"]["used"] / 2**20, 1),
            "tagged": sum(1 for s, _ in self.submitted.values() if s.tags.racks),
            "tagged_am_in_rack_set_share": _in_rack_set(self.rm, self.description, self.submitted),
            "corral_metrics": {k: v for k, v in corral.items() if k in CORRAL_COUNTERS} or None,
        }


def _submit_all(rm: ResourceManager, subs: list[Submission], in_flight: int, ended_now: Callable[[], int],
                deadline: float) -> dict[str, str]:
    """Submit every application, never more than ``in_flight`` not ended; name -> application id."""
    reports: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=4) as pool:
        pending = list(subs)
        while pending and time.monotonic() < deadline:
            room = in_flight - (len(reports) - ended_now())
            if room <= 0:
                time.sleep(0.1)
                continue
            batch, pending = pending[:room], pending[room:]
            for s, report in zip(batch, pool.map(rm.submit, batch)):
                reports[s.name] = report.app_id
    return reports


def _in_rack_set(rm: ResourceManager, description: dict[str, Any], submitted: dict[str, tuple[Submission, str]]) -> float | None:
    """Share of the tagged applications whose AM container ran on a node of their rack set."""
    rack_of = {n["host"]: r["name"] for r in description["racks"] for n in r["nodes"]}
    inside = total = 0
    for s, app_id in submitted.values():
        if not s.tags.racks:
            continue
        attempts = rm.rest.get(f"/ws/v1/cluster/apps/{app_id}/appattempts")["appAttempts"]["appAttempt"]
        host = (attempts[0].get("nodeHttpAddress") or "").split(":")[0] if attempts else ""
        if host:
            total += 1
            inside += rack_of.get(host) in s.tags.racks
    return round(inside / total, 3) if total else None


# ---- the run ----------------------------------------------------------------------------------

def run_rounds(soakers: dict[str, Soaker], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The alternating bursts; per round both schedulers' apps_per_s and their ratio."""
    deadline, rounds = time.monotonic() + args.max_seconds, []
    for r in range(args.rounds):
        if time.monotonic() >= deadline:
            print(f"soak: --max-seconds reached after {r} rounds", file=sys.stderr)
            break
        if args.together:
            with ThreadPoolExecutor(max_workers=2) as pool:
                bursts = dict(zip(SCHEDULERS, pool.map(lambda s: soakers[s].burst(), SCHEDULERS)))
        else:
            bursts = {s: soakers[s].burst() for s in burst_order(r)}
        rates = {}
        for scheduler, figures in bursts.items():
            rates[scheduler] = figures["apps_per_s"]
            print(f"soak: round {r + 1}/{args.rounds} {scheduler}: {figures['ended']}/{figures['submitted']} ended in "
                  f"{figures['seconds']} s, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
        rounds.append({"first": "together" if args.together else burst_order(r)[0], "stock_apps_per_s": rates["capacity"], "corral_apps_per_s": rates["corral"],
                       "ratio": round_ratios([rates["capacity"]], [rates["corral"]])[0], "load_1min": round(os.getloadavg()[0], 2)})
    return rounds


def report(args: argparse.Namespace, rounds: list[dict[str, Any]], stock: dict[str, Any], corral: dict[str, Any],
           startup_s: dict[str, float], load_at_start: float) -> dict[str, Any]:
    ratios = spread([r["ratio"] for r in rounds])
    per_heartbeat = (ratio(corral["commits_per_node_update"], stock["commits_per_node_update"])
                     if stock["commits_per_node_update"] and corral["commits_per_node_update"] is not None else None)
    return {
        "benchmark": "soak", "design": "two clusters at once, " + ("simultaneous bursts" if args.together else "alternating bursts"), "apps": stock["ended"] + corral["ended"],
        "throughput_ratio_corral_vs_stock": ratios["median"], "throughput_ratio_spread": ratios,
        "round_ratios": [None if r["ratio"] is None else round(r["ratio"], 3) for r in rounds],
        "commits_per_node_update_ratio_corral_vs_stock": None if per_heartbeat is None else round(per_heartbeat, 3),
        **{f"{t}_avg_ratio_corral_vs_stock": (round(x, 3) if (x := ratio(corral[f"{t}_avg_us"] or 0, stock[f"{t}_avg_us"] or 0))
                                              is not None else None) for t in TIMERS},
        "rounds": len(rounds), "rounds_asked": args.rounds, "burst_apps": args.burst, "burst_timeout_s": args.burst_timeout,
        "in_flight": args.in_flight, "tagged_share": args.tagged_share, "cluster": f"{args.racks} racks x {args.nodes_per_rack} nodes",
        "startup_s": startup_s, "per_round": rounds, "stock": stock, "corral": corral, "cores": os.cpu_count(),
        "load_average_1min": {"start": round(load_at_start, 2), "end": round(os.getloadavg()[0], 2)},
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="soak-") as base:
        options = {s: StartOptions(racks=args.racks, nodes_per_rack=args.nodes_per_rack, base_dir=Path(base) / s, exit_with=os.getpid(),
                                   scheduler=s, timeout_s=args.start_timeout) for s in SCHEDULERS}
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {s: pool.submit(start_cluster, o) for s, o in options.items()}
        try:
            descriptions = {s: f.result() for s, f in futures.items()}
            startup_s = {s: round(d["startup_ms"] / 1000, 1) for s, d in descriptions.items()}
            print(f"soak: both clusters up (s: {startup_s})", file=sys.stderr)
            soakers = {s: Soaker(s, descriptions[s], args) for s in SCHEDULERS}
            for soaker in soakers.values():
                soaker.start()
            rounds = run_rounds(soakers, args)
            stock, corral = soakers["capacity"].summary(), soakers["corral"].summary()
        finally:
            for s, o in options.items():
                if futures[s].exception() is None:
                    stop_cluster(o.description_path)
    print(json.dumps(report(args, rounds, stock, corral, startup_s, load_at_start)))


if __name__ == "__main__":
    main()
