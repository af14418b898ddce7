"""``corral history ingest``, ``corral history profile``, ``corral estimate`` and ``corral backtest``: the estimator's commands
(docs/cli.md; design in docs/estimator.md)."""

from __future__ import annotations

import argparse
import json
import logging
from datetime import timedelta
from pathlib import Path

from corral_yarn.cli.cluster import add_cluster_options, cluster_from_args
from corral_yarn.cli.types import from_parser as _option
from corral_yarn.cli.types import non_negative_float, options_for_fields, positive_float, positive_int
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.contracts import BLOCK_BYTES
from corral_yarn.errors import InputError
from corral_yarn.io import load, load_cluster, parse_duration, parse_time, to_json, write_together
from corral_yarn.report.html import publish
from estimator.backtest import AUTO, backtest, summarize, unscored
from estimator.estimate import EstimateOptions, estimate, with_classes_and_interference
from estimator.interference import THRESHOLD
from estimator.fit import disk_bandwidth
from estimator.horizons import horizon_backtest, summarize_horizons
from estimator.identity import RecurringKey
from estimator.newjobs import NewJobs
from estimator.predictors import PREDICTORS, Season, instances
from estimator.profile import profile
from estimator.records import IngestReport, JobRun, SkewPolicy
from estimator.report import render
from estimator.sources.jobhistory import JobHistorySource
from estimator.sources.rm import ResourceManagerSource
from estimator.sources.swim import DEFAULT_START, read_swim
from estimator.sources.tabular import read_csv, read_json
from estimator.store import HistoryStore

log = logging.getLogger(__name__)
SEASON_OPTIONS = {"lookback": "--lookback", "lookback_days": "--lookback", "min_history": "--min-history"}  # Season's names


def _history(store: str) -> HistoryStore:
    """An existing history store (reading a missing one would look like an empty history)."""
    if not Path(store).is_dir():
        raise InputError(f"--store: no history store at {store} (create one with 'corral history ingest')")
    return HistoryStore(store)


def _season(args: argparse.Namespace) -> Season:
    with options_for_fields(SEASON_OPTIONS):
        return Season(
            period_s=args.period.total_seconds(),
            window_s=args.window.total_seconds(),
            lookback_days=args.lookback,
            split_weekend=not args.no_weekend_split,
            min_history=args.min_history,
        )


def _add_season_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("recurrence (thesis §2.2: same time of day over previous days)")
    g.add_argument("--period", type=_option(parse_duration), default="1d", metavar="D", help="length of a 'day' (default 1d; SWIM's one-hour samples: 1h)")
    g.add_argument("--window", type=_option(parse_duration), default="30m", metavar="D", help="how far from the same time of day a run still matches (default 30m)")
    g.add_argument("--lookback", type=positive_int, default=5, metavar="N", help="previous days of the same type to average over (default 5)")
    g.add_argument("--no-weekend-split", action="store_true", help="do not keep weekdays and weekends apart")
    g.add_argument("--min-history", type=positive_int, default=2, metavar="N", help="matching previous days needed for a prediction (default 2)")


def _read_source(args: argparse.Namespace, report: IngestReport, store: HistoryStore) -> list[JobRun]:
    key = RecurringKey.from_option(args.key, args.key_pattern)
    if args.jobhistory:
        return JobHistorySource(args.jobhistory, key, tasks=not args.no_tasks).read(report, skip_ids=store.run_ids())
    if args.rm:
        return ResourceManagerSource(args.rm, key).read(report)
    if args.swim:
        return read_swim(args.swim, report, start=args.swim_start, key=key)
    if args.csv:
        return read_csv(args.csv, key, report)
    return read_json(args.json, key, report)


def _ingest(args: argparse.Namespace) -> int:
    store = HistoryStore(args.store)
    report = IngestReport()
    runs = _read_source(args, report, store)
    store.append(runs, report, SkewPolicy(tolerance=timedelta(seconds=args.skew_tolerance)))
    print(f"ingested into {args.store}: {report.summary()}")
    return 0


def _profile(args: argparse.Namespace) -> int:
    racks = [r.strip() for r in args.racks.split(",") if r.strip()]
    if not racks:
        raise InputError("--racks names no rack")
    cluster = cluster_from_args(args)
    if not cluster.endpoints.jobhistory:
        raise InputError("give --jobhistory (or a --cluster description with one): the profiling run is read back from it")
    job = load(MapReduceJob, args.mapreduce)
    topology = cluster.topology()
    unknown = sorted({r.lower() for r in racks} - {r.lower() for r in topology.racks})
    if unknown:
        raise InputError(f"--racks: no such rack {', '.join(unknown)}; the cluster's racks are {', '.join(topology.racks)}")
    run = profile(cluster, job, args.key or job.name, topology.canonical_racks(racks), args.sample_bytes,
                  HistoryStore(args.store), plan_id=args.plan_id, block_bytes=args.block_size)
    print(json.dumps({"stored_in": str(args.store), "recurring_key": run.recurring_key, "job_id": run.run_id,
                      "input_bytes": run.input_bytes, "shuffle_bytes": run.shuffle_bytes, "output_bytes": run.output_bytes,
                      "map_tasks": run.map_tasks, "reduce_tasks": run.reduce_tasks, "is_profile": run.is_profile}, indent=2))
    return 0


def _estimate(args: argparse.Namespace) -> int:
    options = EstimateOptions(
        at=args.at,
        horizon=args.horizon,
        predictor=args.predictor,
        slack=args.slack,
        season=_season(args),
        default_map_rate_bytes_per_s=args.default_map_rate,
        default_reduce_rate_bytes_per_s=args.default_reduce_rate,
        block_bytes=args.block_size,
        adhoc=not args.no_adhoc,
    )
    runs = _history(args.store).runs()
    new_jobs = load(NewJobs, args.new_jobs).jobs if args.new_jobs else []
    cluster = load_cluster(args.cluster) if args.cluster else None
    result = estimate(runs, options, new_jobs, new_jobs_source=str(args.new_jobs))
    workload, learnt = with_classes_and_interference(result.workload, runs, options.at, cluster, args.interference)
    files = {args.out: to_json(workload)}  # written together: no jobs file without the details asked for
    if args.details:
        details = {"jobs": result.details, "defaults_used": dict(result.defaults_used), "unsized_jobs": result.unsized_jobs, **learnt}
        files[args.details] = json.dumps(details, indent=2) + "\n"
    if args.disk_bandwidth_out:
        files[args.disk_bandwidth_out] = json.dumps(disk_bandwidth([r for r in runs if r.submit_time < options.at]), indent=2) + "\n"
    write_together(files)
    unsized = f"; {len(result.unsized_jobs)} recurring jobs without sized runs not predicted" if result.unsized_jobs else ""
    print(f"wrote {len(workload.jobs)} predicted jobs to {args.out}{unsized}")
    return 0


def _backtest(args: argparse.Namespace) -> int:
    season = _season(args)
    runs = _history(args.store).runs()
    by_key = instances(runs)
    points = backtest(by_key, season)
    if not points:
        raise InputError(f"no recurring job in {args.store} has runs on two days; nothing to backtest")
    summary = summarize(points)
    periods = horizon_backtest(runs, season, args.horizon or args.period, points, last=args.max_periods)
    period_summary = summarize_horizons(periods)
    lost = unscored(by_key, season)
    index = publish(args.out, render(points, summary, f"store {args.store}; {len({p.key for p in points})} recurring jobs", lost, periods, period_summary))
    for name, row in summary.items():
        print(f"{name:13s} points {int(row['points']):6d}  input error median {100 * row['input_bytes_median_ape']:.1f} %  "
              f"byte-weighted {100 * row['input_bytes_weighted_ape']:.1f} %  interval coverage {100 * row['interval_coverage']:.0f} %")
    for name, row in period_summary.items():
        print(f"per period {name:13s} median error: estimate {100 * row['estimated_median_ape']:.1f} %  naive rate {100 * row['naive_median_ape']:.1f} %")
    print(f"not scored: {sum(lost.values())} instances (the first day of their job); report: {index}")
    return 0


def _add_ingest(history: argparse._SubParsersAction) -> None:
    p = history.add_parser("ingest", help="append job runs from a source to the history store (idempotent)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--jobhistory", metavar="URL", help="MapReduce JobHistory server, e.g. http://host:19888")
    src.add_argument("--rm", metavar="URL", help="YARN ResourceManager (non-MapReduce apps), e.g. http://host:8088")
    src.add_argument("--swim", metavar="FILE", help="SWIM trace (TSV, with or without input paths); key: size class or --key input_path")
    src.add_argument("--csv", metavar="FILE", help="CSV import (header row; columns in docs/estimator.md)")
    src.add_argument("--json", metavar="FILE", help="JSON array or JSON Lines import (fields in docs/estimator.md)")
    p.add_argument("--store", required=True, metavar="DIR", help="history store directory (created if absent)")
    p.add_argument("--key", default="name", metavar="name|input_path|pattern|COLUMN",
                   help="recurring-job identity (default: name with dates and ids stripped); input_path: the normalised input path; "
                        "COLUMN: a CSV/JSON column, a JobHistory job conf property or an RM app field (docs/estimator.md)")
    p.add_argument("--key-pattern", metavar="REGEX", help="with --key pattern: the key is the regex's first group in the job name")
    p.add_argument("--swim-start", type=_option(parse_time), default=DEFAULT_START.isoformat(), metavar="TIME", help="wall-clock time of the SWIM trace's second 0 (default 2009-10-01T00:00Z)")
    p.add_argument("--no-tasks", action="store_true", help="JobHistory: skip per-task samples (faster; no MRCute rate fit)")
    p.add_argument("--skew-tolerance", type=non_negative_float, default=5.0, metavar="S", help="clock skew clamped up to S seconds; larger skips the run (default 5)")
    p.set_defaults(func=_ingest)


def _add_profile(history: argparse._SubParsersAction) -> None:
    p = history.add_parser("profile", help="run a job without history on a sample of its input; store the run for the MRCute fit (§3.1.2)")
    p.add_argument("--store", required=True, metavar="DIR", help="history store directory (created if absent)")
    p.add_argument("--mapreduce", required=True, type=Path, metavar="FILE", help="the job's MapReduce description JSON (docs/cluster-adapters.md)")
    p.add_argument("--racks", required=True, help="racks to run the sample on, comma-separated, e.g. /rack-a")
    p.add_argument("--sample-bytes", required=True, type=positive_int, metavar="N", help="bytes of input to profile on (cut at a line end)")
    p.add_argument("--key", help="recurring-job key to store the run under (default: the job's name)")
    p.add_argument("--block-size", type=positive_int, metavar="N", help="HDFS block size of the uploaded sample (default: the NameNode's)")
    p.add_argument("--plan-id", default="profile", help="plan id for the application's Corral tags (default 'profile')")
    add_cluster_options(p)
    p.set_defaults(func=_profile)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``history ingest``, ``history profile``, ``estimate`` and ``backtest``."""
    history = subparsers.add_parser("history", help="the job history store").add_subparsers(title="history commands", metavar="COMMAND", required=True)
    _add_ingest(history)
    _add_profile(history)
    for command in history.choices.values():  # -v after the command here too: corral history ingest ... -v
        command.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log progress to stderr (-vv for debug)")

    p = subparsers.add_parser("estimate", help="predict the recurring jobs of a planning period as a jobs file for 'corral plan'")
    p.add_argument("--store", required=True, metavar="DIR", help="history store directory")
    p.add_argument("--at", required=True, type=_option(parse_time), metavar="TIME", help="start of the planning period, ISO 8601 (UTC without a zone)")
    p.add_argument("--horizon", required=True, type=_option(parse_duration), metavar="H", help="length of the period, e.g. 24h, 1d, 90m")
    p.add_argument("--out", required=True, metavar="FILE", help="jobs file to write (corral-yarn/jobs/v1)")
    p.add_argument("--slack", type=non_negative_float, default=0.0, metavar="F", help="scale predicted sizes by 1+F against prediction errors (default 0)")
    p.add_argument("--new-jobs", type=Path, metavar="FILE", help="jobs without history to add, sized from their profiling runs (JSON, docs/estimator.md)")
    p.add_argument("--predictor", choices=[AUTO, *PREDICTORS], default=AUTO, help="auto: per job, the best in a rolling backtest (default)")
    p.add_argument("--no-adhoc", action="store_true", help="predict recurring slots only, not the size classes' uncovered arrival rates")
    p.add_argument("--details", metavar="FILE", help="also write per-job predictor, matched runs, intervals and MRCute fit, and what --cluster and --interference learnt (JSON)")
    p.add_argument("--disk-bandwidth-out", metavar="FILE", help="also write B_D per machine fitted from task samples (JSON)")
    p.add_argument("--interference", type=positive_float, nargs="?", const=THRESHOLD, metavar="F",
                   help=f"mark jobs whose co-location slowed one of them by F or more in history (default F {THRESHOLD}; docs/paragon.md)")
    p.add_argument("--cluster", type=Path, metavar="FILE",
                   help="cluster spec; with node_classes, each job gets its per-class speedups from its task samples (docs/paragon.md)")
    p.add_argument("--default-map-rate", type=positive_float, default=50e6, metavar="B/S", help="B_map^P for jobs without task samples (default 5e7)")
    p.add_argument("--default-reduce-rate", type=positive_float, default=50e6, metavar="B/S", help="B_reduce^P for jobs without task samples (default 5e7)")
    p.add_argument("--block-size", type=positive_int, default=BLOCK_BYTES, metavar="N",
                   help=f"the cluster's dfs.blocksize: one map task per block for jobs whose runs do not give bytes per map (default {BLOCK_BYTES}, HDFS's)")
    _add_season_options(p)
    p.set_defaults(func=_estimate)

    p = subparsers.add_parser("backtest", help="rolling backtest of the predictors on the store: HTML/PNG report")
    p.add_argument("--store", required=True, metavar="DIR", help="history store directory")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="report directory to write")
    p.add_argument("--horizon", type=_option(parse_duration), metavar="H", help="length of the periods whose totals are compared (default: --period)")
    p.add_argument("--max-periods", type=positive_int, default=30, metavar="N", help="compare the totals of the last N periods only (default 30)")
    _add_season_options(p)
    p.set_defaults(func=_backtest)
