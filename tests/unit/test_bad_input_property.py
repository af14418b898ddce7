"""Bad input everywhere (issue 20, item 5): hypothesis mutates every JSON contract and input file the
``corral`` command reads, runs the command in-process, and checks what a user sees.

A mutation is one change to a valid input: a field deleted, a value replaced by one of the wrong type,
NaN, an infinity, a huge or negative number, an unknown key added, or the whole file replaced by
nothing, bad JSON, a truncated copy or bytes that are not UTF-8. Every run must end in exit code 0
(the mutant happened to be valid) or 2 with exactly one stderr line ``corral: error: ...`` naming the
file and the field; never an exception escaping ``main`` (a traceback), and after exit 2 no output file.
Mutations that cannot be valid (NaN or an infinity where a number was, an unknown key in a strict
object, a list or object where a scalar was, a broken file) must give exit 2. Files read by library
entry points that need a live cluster after reading (MapReduce and YARN app descriptions, the cluster
description's endpoints, Nomora's latency matrix) are checked at that entry point: an InputError
naming the field, or success. Each surface runs a bounded number of examples (the whole file, ~40 s).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral_yarn import io as corral_io
from corral_yarn.cli import main
from corral_yarn.cluster.apps import YarnApp
from corral_yarn.cluster.connect import Endpoints
from corral_yarn.cluster.mapreduce import MapReduceJob
from corral_yarn.errors import CorralError
from corral_yarn.nomora import latency
from corral_yarn.nomora.workload import load_task_events
from corral_yarn.sim.workloads import SWIM_COLUMNS

TRIED: dict[str, int] = {}  # surface -> inputs tried (printed at the end with -s; quoted in docs/reliability.md)
EXAMPLES = int(os.environ.get("CORRAL_BAD_INPUT_EXAMPLES", "25"))  # more for a longer hunt, e.g. 500 (random seeds then)
NUMBERS = [-1, -1e300, 1e300, 2**70, -(2**70), 0, 0.5, 10**400]  # 10**400: a JSON integer beyond any float
NON_FINITE = [math.nan, math.inf, -math.inf]
WRONG_TYPES = [None, True, "x", "", [], {}, [1], {"bogus": 1}]
UNKNOWN_KEY = "bogus_field"
# Whole-file garbage: (name, bytes). Each must be refused naming the file.
GARBAGE = [("empty", b""), ("blank", b" \n"), ("null", b"null"), ("a number", b"42"), ("a string", b'"x"'),
           ("a list", b"[]"), ("an object", b"{}"), ("not UTF-8", b"\xff\xfe\x00{"), ("not JSON", b"{'a': 1,")]


@dataclass(frozen=True)
class Mutant:
    """One malformed input: the file's new bytes, the path of the change and whether it cannot be valid."""

    text: bytes
    path: tuple[Any, ...]
    what: str
    must_fail: bool


@dataclass
class Surface:
    """An input file of a command: a valid document, how to mutate it and how to run the command on it."""

    name: str
    valid: Any  # a JSON document, or bytes for a text file (CSV, TSV)
    free_form: frozenset[str] = field(default_factory=frozenset)  # keys of objects that take any key
    columns: tuple[str, ...] = ()  # a text file's column names (its header, or the format's fixed columns)
    rows_skip: bool = False  # a malformed row is skipped and counted (history imports), not an error


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _dump(doc: Any) -> bytes:
    return json.dumps(doc).encode()  # NaN and Infinity as Python writes them (JSON parsers read them)


@st.composite
def json_mutants(draw: st.DrawFn, surface: Surface) -> Mutant:
    """A mutant of ``surface.valid``: one change at one place, or a whole broken file."""
    doc = surface.valid
    if draw(st.integers(0, 9)) == 0:
        name, text = draw(st.sampled_from(GARBAGE))
        return Mutant(text, (), f"file: {name}", must_fail=True)
    if draw(st.integers(0, 9)) == 0:
        text = _dump(doc)
        cut = draw(st.integers(1, len(text) - 1))
        return Mutant(text[:cut], (), f"file truncated at {cut}", must_fail=True)
    path = draw(st.sampled_from([p for p in _paths(doc) if p]))
    mutated = copy.deepcopy(doc)
    parent, key = _get(mutated, path[:-1]), path[-1]
    old = parent[key]
    free = any(isinstance(p, str) and p in surface.free_form for p in path[:-1])
    action = draw(st.sampled_from(["delete", "replace", "non-finite", "unknown-key"]))
    if action == "delete" and isinstance(parent, dict):
        del parent[key]
        return Mutant(_dump(mutated), path, f"deleted {path}", must_fail=False)
    if action == "unknown-key" and isinstance(old, dict) and not free and key not in surface.free_form:
        old[UNKNOWN_KEY] = 1
        return Mutant(_dump(mutated), (*path, UNKNOWN_KEY), f"unknown key under {path}", must_fail=not surface.rows_skip)
    if action == "non-finite" and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[key] = draw(st.sampled_from(NON_FINITE))
        return Mutant(_dump(mutated), path, f"{parent[key]} at {path}", must_fail=not surface.rows_skip)
    new = draw(st.sampled_from(NUMBERS + WRONG_TYPES))
    parent[key] = new
    container_for_scalar = isinstance(new, (list, dict)) and not isinstance(old, (list, dict)) and not free
    return Mutant(_dump(mutated), path, f"{new!r} at {path}", must_fail=container_for_scalar and not surface.rows_skip)


@st.composite
def text_mutants(draw: st.DrawFn, surface: Surface) -> Mutant:
    """A mutant of a delimited text file (CSV, TSV): one cell replaced, a row cut, or a broken file."""
    text: bytes = surface.valid
    lines = text.decode().splitlines()
    sep = "\t" if "\t" in lines[0] else ","
    kind = draw(st.integers(0, 9))
    if kind == 0:
        name, garbage = draw(st.sampled_from([g for g in GARBAGE if g[0] in ("empty", "blank", "not UTF-8")]))
        return Mutant(garbage, (), f"file: {name}", must_fail=True)
    row = draw(st.integers(0, len(lines) - 1))
    cells = lines[row].split(sep)
    line = f":{row + 1}"  # errors name a row by its line number
    if kind == 1:
        cut = draw(st.integers(0, len(cells) - 1))
        lines[row] = sep.join(cells[:cut])
        return Mutant(("\n".join(lines) + "\n").encode(), (line,), f"row {row} cut to {cut} cells", must_fail=False)
    column = draw(st.integers(0, len(cells) - 1))
    cells[column] = draw(st.sampled_from(["", "x", "nan", "inf", "-inf", "-1", "1e400", "99999999999999999999999", "0", "1.5", " "]))
    lines[row] = sep.join(cells)
    return Mutant(("\n".join(lines) + "\n").encode(), (line, surface.columns[column]), f"{cells[column]!r} at row {row} column {column}",
                  must_fail=False)


def _field_words(path: tuple[Any, ...]) -> list[str]:
    """What an error about ``path`` may name: any key on the path, or the index of a list item."""
    return [str(p) if isinstance(p, str) else f"[{p}]" for p in path] + [f":{p}" for p in path if isinstance(p, int)]


def check_cli(argv: list[str], target: Path, mutant: Mutant, outputs: list[Path], words: list[str] | None = None) -> int:
    """Run ``corral argv`` in-process with ``target`` holding the mutant; assert what a user must see."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)  # an exception escaping main is the traceback a user would see: the test fails with it
    lines = err.getvalue().splitlines()
    assert code in (0, 2), f"{mutant.what}: exit {code}\n{err.getvalue()}"
    if code == 0:
        assert not mutant.must_fail, f"{mutant.what}: accepted\n{out.getvalue()[:500]}"
        return code
    errors = [line for line in lines if line.startswith("corral: error: ")]
    assert len(errors) == 1 and errors == lines[-1:], f"{mutant.what}: stderr is not one error line:\n{err.getvalue()}"
    line = errors[0]
    assert "Traceback" not in err.getvalue()
    options = [a for a in argv if a.startswith("--")]  # an error between two inputs names the option of the other
    assert target.name in line or any(w in line for w in (words or []) + options), f"{mutant.what}: the error names no file: {line}"
    if mutant.path:
        names = _field_words(mutant.path) + (words or [])
        assert any(w in line for w in names), f"{mutant.what}: the error names no field of {mutant.path}: {line}"
    for o in outputs:
        assert not o.exists(), f"{mutant.what}: exit 2 left {o}"
    leftovers = [p.name for p in target.parent.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]
    assert not leftovers, f"{mutant.what}: temporary files left: {leftovers}"
    return code


@contextlib.contextmanager
def case(inputs: dict[str, Any]) -> Iterator[Path]:
    """A fresh directory holding ``inputs`` (name -> JSON document or bytes)."""
    d = Path(tempfile.mkdtemp(prefix="badinput-"))
    try:
        for name, doc in inputs.items():
            (d / name).write_bytes(doc if isinstance(doc, bytes) else _dump(doc))
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def _tally() -> Iterator[None]:
    """After the module, print how many inputs each surface tried (with -s; docs/reliability.md quotes it)."""
    yield
    print(json.dumps({"bad_inputs_tried": sum(TRIED.values()), "per_surface": TRIED}))


def _count(surface: str) -> None:
    TRIED[surface] = TRIED.get(surface, 0) + 1


BOUNDED = settings(max_examples=EXAMPLES, deadline=None, derandomize="CORRAL_BAD_INPUT_EXAMPLES" not in os.environ, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------- valid inputs, made once by the commands themselves

@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("valid")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["example", "--out", str(d), "--jobs", "3", "--racks", "3", "--machines-per-rack", "2"]) == 0
        assert main(["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "cluster.json"), "--scenario", "online",
                     "--out", str(d / "plan.json"), "--no-bound"]) == 0
        assert main(["kwiken", "example", "--out", str(d / "kw"), "--requests", "150"]) == 0
        assert main(["kwiken", "plan", "--dag", str(d / "kw" / "dag.json"), "--samples", str(d / "kw" / "train.csv"),
                     "--budget", "0.05", "--out", str(d / "kw" / "plan.json"), "--random-allocations", "10"]) == 0
    docs = {name: json.loads((d / f"{name}.json").read_text()) for name in ("cluster", "jobs", "plan")}
    docs["kwiken_dag"] = json.loads((d / "kw" / "dag.json").read_text())
    docs["kwiken_plan"] = json.loads((d / "kw" / "plan.json").read_text())
    docs["kwiken_samples"] = (d / "kw" / "train.csv").read_bytes()
    return docs


HISTORY_RUNS = [
    {"name": "daily-sort", "submit_time": f"2026-11-{day:02d}T02:00:00Z", "start_time": f"2026-11-{day:02d}T02:00:05Z",
     "finish_time": f"2026-11-{day:02d}T02:{4 * day:02d}:00Z", "input_bytes": 4e9 * day, "shuffle_bytes": 2e9 * day,
     "output_bytes": 1e9, "map_tasks": 30 * day, "reduce_tasks": 4, "outcome": "SUCCEEDED", "racks": ["/rack-00"], "nodes": ["r00m00", "r00m01"],
     "map_task_samples": [{"seconds": 20.0, "bytes": 134217728, "node": "r00m00"}],
     "reduce_task_samples": [{"seconds": 30.0, "bytes": 250000000, "node": "r00m01"}]}
    for day in (1, 2, 3, 4)]
HISTORY_CSV = ("name,submit_time,input_bytes,shuffle_bytes,output_bytes,map_tasks,reduce_tasks\n"
               + "".join(f"daily-grep-{d},2026-11-0{d}T03:00:00Z,{1e9 + d},{1e8},{1e7},8,2\n" for d in (1, 2, 3))).encode()
CSV_COLUMNS = tuple(HISTORY_CSV.decode().splitlines()[0].split(","))
SWIM = Path(__file__).parents[1] / "data" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"


def _swim_head() -> bytes:
    return b"".join(SWIM.read_bytes().splitlines(keepends=True)[:6])


# ---------------------------------------------------------------- the planner's contracts: jobs, cluster, plan

@pytest.mark.parametrize("which", ["jobs", "cluster"])
def test_plan_inputs(valid: dict[str, Any], which: str) -> None:
    surface = Surface(which, valid[which])

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count(f"plan --{which}")
        inputs = {"jobs.json": valid["jobs"], "cluster.json": valid["cluster"], f"{which}.json": mutant.text}
        with case(inputs) as d:
            check_cli(["plan", "--jobs", str(d / "jobs.json"), "--cluster", str(d / "cluster.json"), "--scenario", "online",
                       "--out", str(d / "out" / "plan.json"), "--no-bound"], d / f"{which}.json", mutant, [d / "out" / "plan.json"])
    run()


def test_report_plan(valid: dict[str, Any]) -> None:
    surface = Surface("plan", valid["plan"], free_form=frozenset({"rack_input_bytes"}))

    @settings(BOUNDED, max_examples=max(1, EXAMPLES * 3 // 5))
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("report PLAN")
        with case({"plan.json": mutant.text, "cluster.json": valid["cluster"], "jobs.json": valid["jobs"]}) as d:
            check_cli(["report", str(d / "plan.json"), "--out", str(d / "report"), "--cluster", str(d / "cluster.json"),
                       "--jobs", str(d / "jobs.json")], d / "plan.json", mutant, [d / "report"])
    run()


def test_simulate_inputs(valid: dict[str, Any]) -> None:
    surface = Surface("plan", valid["plan"], free_form=frozenset({"rack_input_bytes"}))

    @settings(BOUNDED, max_examples=max(1, EXAMPLES * 3 // 5))
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("simulate --plan")
        with case({"plan.json": mutant.text, "cluster.json": valid["cluster"], "jobs.json": valid["jobs"]}) as d:
            check_cli(["simulate", "--cluster", str(d / "cluster.json"), "--workload", str(d / "jobs.json"), "--plan",
                       str(d / "plan.json"), "--scheduler", "corral", "--out", str(d / "out.json")], d / "plan.json", mutant,
                      [d / "out.json"])
    run()


# ---------------------------------------------------------------- the estimator: history imports, traces, new jobs

def test_history_json_import() -> None:
    surface = Surface("runs", HISTORY_RUNS, rows_skip=True)

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("history ingest --json")
        with case({"runs.json": mutant.text}) as d:
            check_cli(["history", "ingest", "--json", str(d / "runs.json"), "--store", str(d / "store")], d / "runs.json", mutant, [])
    run()


@pytest.mark.parametrize("which", ["csv", "swim"])
def test_history_text_import(which: str) -> None:
    surface = Surface(which, HISTORY_CSV if which == "csv" else _swim_head(), rows_skip=True,
                      columns=CSV_COLUMNS if which == "csv" else SWIM_COLUMNS)

    @BOUNDED
    @given(text_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count(f"history ingest --{which}")
        with case({f"in.{which}": mutant.text}) as d:
            check_cli(["history", "ingest", f"--{which}", str(d / f"in.{which}"), "--store", str(d / "store")], d / f"in.{which}",
                      mutant, [], words=["line", "row", "column"])
    run()


def test_sim_workload_swim(valid: dict[str, Any]) -> None:
    surface = Surface("swim", _swim_head(), columns=SWIM_COLUMNS)

    @BOUNDED
    @given(text_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("sim-workload --swim")
        with case({"trace.tsv": mutant.text, "cluster.json": valid["cluster"]}) as d:
            check_cli(["sim-workload", "--source", "swim", "--swim", str(d / "trace.tsv"), "--cluster", str(d / "cluster.json"),
                       "--arrival-span", "3600", "--out", str(d / "w.json")], d / "trace.tsv", mutant, [d / "w.json"],
                      words=["line", "row", "column"])
    run()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("store")
    (d / "runs.json").write_text(json.dumps(HISTORY_RUNS))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["history", "ingest", "--json", str(d / "runs.json"), "--store", str(d / "store")]) == 0
    return d / "store"


def test_estimate_new_jobs(store: Path) -> None:
    new_jobs = {"jobs": [{"recurring_key": "daily-sort", "arrival": "2026-11-05T05:00:00Z", "input_bytes": 5e9, "map_tasks": 40}]}
    surface = Surface("new-jobs", new_jobs)

    @settings(BOUNDED, max_examples=max(1, EXAMPLES * 3 // 5))
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("estimate --new-jobs")
        with case({"new.json": mutant.text}) as d:
            check_cli(["estimate", "--store", str(store), "--at", "2026-11-05T00:00:00Z", "--horizon", "1d", "--new-jobs",
                       str(d / "new.json"), "--out", str(d / "jobs.json")], d / "new.json", mutant, [d / "jobs.json"])
    run()


def test_model_fit_cluster(valid: dict[str, Any], store: Path) -> None:
    surface = Surface("cluster", valid["cluster"])

    @settings(BOUNDED, max_examples=max(1, EXAMPLES * 3 // 5))
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("model fit --cluster")
        with case({"cluster.json": mutant.text}) as d:
            check_cli(["model", "fit", "--store", str(store), "--cluster", str(d / "cluster.json"), "--out", str(d / "fitted.json")],
                      d / "cluster.json", mutant, [d / "fitted.json"])
    run()


# ---------------------------------------------------------------- Kwiken: the DAG, the plan and the latency logs

def test_kwiken_plan_dag(valid: dict[str, Any]) -> None:
    surface = Surface("dag", valid["kwiken_dag"])

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("kwiken plan --dag")
        with case({"dag.json": mutant.text, "train.csv": valid["kwiken_samples"]}) as d:
            check_cli(["kwiken", "plan", "--dag", str(d / "dag.json"), "--samples", str(d / "train.csv"), "--budget", "0.05",
                       "--random-allocations", "10", "--out", str(d / "plan.json")], d / "dag.json", mutant, [d / "plan.json"])
    run()


def test_kwiken_samples(valid: dict[str, Any]) -> None:
    surface = Surface("samples", valid["kwiken_samples"], columns=tuple(valid["kwiken_samples"].split(b"\n")[0].decode().split(",")))

    @BOUNDED
    @given(text_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("kwiken plan --samples")
        with case({"dag.json": valid["kwiken_dag"], "train.csv": mutant.text}) as d:
            check_cli(["kwiken", "plan", "--dag", str(d / "dag.json"), "--samples", str(d / "train.csv"), "--budget", "0.05",
                       "--random-allocations", "10", "--out", str(d / "plan.json")], d / "train.csv", mutant, [d / "plan.json"],
                      words=["line", "request", "stage", "latency", "cost", "--samples"])
    run()


def test_kwiken_simulate_plan(valid: dict[str, Any]) -> None:
    surface = Surface("kwiken-plan", valid["kwiken_plan"])

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("kwiken simulate --plan")
        with case({"dag.json": valid["kwiken_dag"], "plan.json": mutant.text, "test.csv": valid["kwiken_samples"]}) as d:
            check_cli(["kwiken", "simulate", "--dag", str(d / "dag.json"), "--plan", str(d / "plan.json"), "--samples",
                       str(d / "test.csv")], d / "plan.json", mutant, [])
    run()


# ---------------------------------------------------------------- cluster descriptions and job descriptions

CLUSTER_DESCRIPTION = {"schema_version": "corral-yarn/minicluster/v1", "webhdfs": "http://127.0.0.1:9870",
                       "resourcemanager": "http://127.0.0.1:8088", "jobhistory": "http://127.0.0.1:19888"}


def test_airflow_connections_description() -> None:
    surface = Surface("description", CLUSTER_DESCRIPTION)

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("airflow-connections --cluster-json")
        with case({"cluster.json": mutant.text}) as d:
            check_cli(["airflow-connections", "--cluster-json", str(d / "cluster.json")], d / "cluster.json",
                      Mutant(mutant.text, mutant.path, mutant.what, must_fail=mutant.must_fail and mutant.path[-1:] != (UNKNOWN_KEY,)), [])
    run()


MAPREDUCE_JOB = {"name": "wc", "jar": "/opt/hadoop/share/hadoop/mapreduce/hadoop-mapreduce-examples.jar", "program": "wordcount",
                 "inputs": ["/data/in"], "output": "/data/out", "reduces": 2}
YARN_APP = {"name": "sleep", "command": "sleep 1", "environment": {"A": "b"},
            "local_resources": [{"key": "app.jar", "path": "/apps/app.jar", "type": "FILE"}], "memory_mb": 256, "vcores": 1}


def check_library(load: Callable[[Path], Any], target: Path, mutant: Mutant) -> None:
    """A library reader: it returns, or raises a CorralError naming the file and the field; nothing else."""
    try:
        load(target)
    except CorralError as exc:
        line = str(exc)
        assert "\n" not in line.strip() and "Traceback" not in line
        if mutant.path:
            assert any(w in line for w in _field_words(mutant.path)), f"{mutant.what}: the error names no field: {line}"
        return
    assert not mutant.must_fail, f"{mutant.what}: accepted"


@pytest.mark.parametrize("what", ["mapreduce", "yarn-app", "endpoints", "nomora-json"])
def test_library_readers(what: str) -> None:
    doc, load, free = {
        "mapreduce": (MAPREDUCE_JOB, lambda p: corral_io.load(MapReduceJob, p), frozenset()),
        "yarn-app": (YARN_APP, lambda p: corral_io.load(YarnApp, p), frozenset({"environment"})),
        "endpoints": ({k: v for k, v in CLUSTER_DESCRIPTION.items() if k != "schema_version"}, Endpoints.from_cluster_json, frozenset()),
        "nomora-json": ({"names": ["a", "b"], "latency_us": [[0, 5.0], [5.0, 0]]}, latency.load, frozenset()),
    }[what]
    surface = Surface(what, doc, free_form=free)

    @BOUNDED
    @given(json_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count(f"{what} (library)")
        unknown_ok = what in ("endpoints", "nomora-json")  # extra keys are ignored there by design
        strict = Mutant(mutant.text, mutant.path, mutant.what, mutant.must_fail and not (unknown_ok and mutant.path[-1:] == (UNKNOWN_KEY,)))
        with case({"in.json": mutant.text}) as d:
            check_library(load, d / "in.json", strict)
    run()


TASK_EVENTS_COLUMNS = ("time", "missing_info", "job_id", "task_index", "machine_id", "event_type", "user", "scheduling_class",
                       "priority", "cpu_request", "memory_request", "disk_request", "different_machines")
TASK_EVENTS = "".join(f"{600_000_000 + 1_000_000 * t},,{job},{task},m{task},{event},u,0,0,0.1,0.1,0.0,0\n"
                      for job in (7, 8) for task in (0, 1) for t, event in ((job, 0), (job + 1, 1), (job + 60, 4))).encode()


def test_nomora_task_events() -> None:
    """``corral nomora simulate --trace``'s reader (the simulation behind it takes seconds per run)."""
    surface = Surface("task_events", TASK_EVENTS, columns=TASK_EVENTS_COLUMNS)

    @BOUNDED
    @given(text_mutants(surface))
    def run(mutant: Mutant) -> None:
        _count("nomora task_events (library)")
        with case({"events.csv": mutant.text}) as d:
            check_library(lambda p: load_task_events([p], hours=1.0, seed=0), d / "events.csv", mutant)
    run()


# ---------------------------------------------------------------- what the pass found, pinned (each was a traceback or named no file)

SWIM_ROW = "job0\t49\t49\t740773\t2339561\t627471\n"
FOUND: dict[str, tuple[dict[str, Any], list[str], str, list[str]]] = {
    # name: (files, argv with {d} for the directory, file the error names, words it must contain)
    "SWIM size NaN": ({"t.tsv": SWIM_ROW.replace("740773", "nan").encode()}, ["sim-workload", "--source", "swim", "--swim", "{d}/t.tsv",
                      "--cluster", "{d}/c.json", "--out", "{d}/w.json"], "t.tsv", [":1: input_bytes"]),
    "SWIM size negative": ({"t.tsv": SWIM_ROW.replace("740773", "-5").encode()}, ["sim-workload", "--source", "swim", "--swim", "{d}/t.tsv",
                           "--cluster", "{d}/c.json", "--out", "{d}/w.json"], "t.tsv", [":1: input_bytes"]),
    "SWIM size infinite": ({"t.tsv": SWIM_ROW.replace("2339561", "inf").encode()}, ["sim-workload", "--source", "swim", "--swim", "{d}/t.tsv",
                           "--cluster", "{d}/c.json", "--out", "{d}/w.json"], "t.tsv", [":1: shuffle_bytes"]),
    "SWIM row cut short": ({"t.tsv": b"job0\t49\n"}, ["sim-workload", "--source", "swim", "--swim", "{d}/t.tsv", "--cluster", "{d}/c.json",
                           "--out", "{d}/w.json"], "t.tsv", [":1", "2 fields"]),
    "SWIM window empty": ({"t.tsv": b""}, ["sim-workload", "--source", "swim", "--swim", "{d}/t.tsv", "--cluster", "{d}/c.json",
                          "--out", "{d}/w.json"], "t.tsv", ["no SWIM job"]),
    "description null": ({"desc.json": b"null"}, ["airflow-connections", "--cluster-json", "{d}/desc.json"], "desc.json", ["JSON object"]),
    "description not UTF-8": ({"desc.json": b"\xff{"}, ["airflow-connections", "--cluster-json", "{d}/desc.json"], "desc.json", ["UTF-8"]),
    "description address a number": ({"desc.json": {**CLUSTER_DESCRIPTION, "webhdfs": 42}}, ["airflow-connections", "--cluster-json",
                                     "{d}/desc.json"], "desc.json", ["webhdfs"]),
    "description address missing": ({"desc.json": {k: v for k, v in CLUSTER_DESCRIPTION.items() if k != "jobhistory"}},
                                    ["airflow-connections", "--cluster-json", "{d}/desc.json"], "desc.json", ["jobhistory"]),
    "task sample bytes beyond int64": ({"runs.json": [{**HISTORY_RUNS[0], "map_task_samples": [{"seconds": 1.0, "bytes": -(2**70)}]}]},
                                       ["history", "ingest", "--json", "{d}/runs.json", "--store", "{d}/store"], "runs.json", ["[0]"]),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_what_the_pass_found(name: str, valid: dict[str, Any]) -> None:
    files, argv, named, words = FOUND[name]
    with case({**files, "c.json": valid["cluster"]}) as d:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main([a.format(d=d) for a in argv]) == 2
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("corral: error: "), err.getvalue()
        assert named in lines[0] and all(w in lines[0] for w in words), lines[0]
        assert not (d / "w.json").exists()


def test_what_the_pass_found_in_new_jobs(store: Path) -> None:
    new_jobs = {"jobs": [{"recurring_key": "daily-sort", "arrival": "2026-11-05T05:00:00Z", "input_bytes": 5e9, "map_tasks": 10**400}]}
    with case({"new.json": new_jobs}) as d:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            assert main(["estimate", "--store", str(store), "--at", "2026-11-05T00:00:00Z", "--horizon", "1d", "--new-jobs",
                         str(d / "new.json"), "--out", str(d / "jobs.json")]) == 2
        assert err.getvalue().startswith(f"corral: error: {d / 'new.json'}: jobs[0].map_tasks: ") and err.getvalue().count("\n") == 1
        assert not (d / "jobs.json").exists()


def test_what_the_pass_found_in_task_events() -> None:
    with case({"events.csv.gz": b"not gzip", "events.csv": b"\xff\xfe"}) as d:
        for name in ("events.csv.gz", "events.csv"):
            with pytest.raises(CorralError, match=re.escape(name)):
                load_task_events([d / name], hours=1.0, seed=0)


@pytest.mark.parametrize(("document", "field"), [({"names": ["a", "b"], "latency_us": [1, 2]}, "latency_us[0]"),
                                                 ({"names": ["a"], "latency_us": [[10**400]]}, "latency_us[0][0]")])
def test_what_the_pass_found_in_nomora(document: dict[str, Any], field: str) -> None:
    with case({"m.json": document}) as d, pytest.raises(CorralError, match=re.escape(field)):
        latency.load(d / "m.json")
