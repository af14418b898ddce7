"""Host-pair latency matrices for NoMora: load one (CSV or JSON, e.g. from a probe mesh) or generate one.

An entry is the latency in microseconds from the row's host to the column's host; NoMora uses the maximum
latency measured between two machines (NoMora §"Cost Assignment", eq. 1), so a loaded matrix should hold
that maximum. The generator draws fat-tree-shaped matrices: same-rack < same-pod < cross-pod.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from corral_yarn.errors import InputError


@dataclass(frozen=True)
class LatencyMatrix:
    """Square matrix of non-negative latencies (µs) between named hosts, zero on the diagonal."""

    names: tuple[str, ...]
    latency_us: np.ndarray
    _positions: dict[str, int] = field(init=False, repr=False, compare=False)
    zero_diagonal: ClassVar[bool] = True  # a host's latency to itself

    def __post_init__(self) -> None:
        _check_names(self.names)
        _check_values(self.latency_us, len(self.names), self.zero_diagonal)
        object.__setattr__(self, "_positions", {name: index for index, name in enumerate(self.names)})

    def latency(self, source: str, target: str) -> float:
        """Latency in µs from host ``source`` to host ``target``."""
        return float(self.latency_us[self.index(source), self.index(target)])

    def index(self, name: str) -> int:
        """Row/column of host ``name``; InputError when the matrix does not hold it."""
        try:
            return self._positions[name]
        except KeyError:
            raise InputError(f"host {name!r} is not in the latency matrix", field="names") from None


def _check_names(names: tuple[str, ...]) -> None:
    if not names:
        raise InputError("at least one host name is needed", field="names")
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"must be a non-empty string, got {name!r}", field=f"names[{index}]")
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            raise InputError(f"duplicate host name {name!r}", field=f"names[{index}]")
        seen.add(name)


@dataclass(frozen=True)
class RackLatencyMatrix(LatencyMatrix):
    """Rack-pair latencies (µs) between named racks; the diagonal is the latency inside a rack (any value >= 0)."""

    zero_diagonal: ClassVar[bool] = False


def _check_values(matrix: np.ndarray, size: int, zero_diagonal: bool = True) -> None:
    if matrix.ndim != 2 or matrix.shape[0] != size:
        raise InputError(f"must have {size} rows (one per name), got {matrix.shape[0] if matrix.ndim else 0}",
                         field="latency_us")
    if matrix.shape[1] != size:
        raise InputError(f"must have {size} columns (one per name), got {matrix.shape[1]}", field="latency_us")
    bad = np.argwhere(~np.isfinite(matrix) | (matrix < 0))
    if len(bad):
        row, column = bad[0]
        raise InputError(f"must be a finite latency >= 0 µs, got {matrix[row, column]}",
                         field=f"latency_us[{row}][{column}]")
    diagonal = np.flatnonzero(np.diagonal(matrix))
    if zero_diagonal and len(diagonal):
        index = diagonal[0]
        raise InputError(f"a host's latency to itself must be 0, got {matrix[index, index]}",
                         field=f"latency_us[{index}][{index}]")


def _matrix(rows: list[list[object]]) -> np.ndarray:
    """Rows of cells -> float matrix; a ragged row or a non-number raises InputError naming the cell."""
    width = len(rows[0]) if rows and isinstance(rows[0], list) else 0
    values = np.zeros((len(rows), width))
    for row, cells in enumerate(rows):
        if not isinstance(cells, list) or len(cells) != width:
            raise InputError(f"row must have {width} entries", field=f"latency_us[{row}]")
        for column, cell in enumerate(cells):
            try:
                if isinstance(cell, bool):
                    raise ValueError
                values[row, column] = float(cell)  # type: ignore[arg-type]
            except (TypeError, ValueError, OverflowError):  # OverflowError: an integer beyond any float
                raise InputError(f"must be a number, got {cell!r}", field=f"latency_us[{row}][{column}]") from None
    return values


def parse_json(text: str, kind: type[LatencyMatrix] = LatencyMatrix) -> LatencyMatrix:
    """``{"names": [...], "latency_us": [[...], ...]}`` -> LatencyMatrix (or ``kind``)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise InputError("must be an object with names and latency_us")
    names, rows = document.get("names"), document.get("latency_us")
    if not isinstance(names, list):
        raise InputError("must be a list of host names", field="names")
    if not isinstance(rows, list):
        raise InputError("must be a list of rows", field="latency_us")
    return kind(tuple(names), _matrix(rows))


def parse_csv(text: str, kind: type[LatencyMatrix] = LatencyMatrix) -> LatencyMatrix:
    """Header row of host names, then one row of latencies (µs) per host, in the header's order."""
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    if not rows:
        raise InputError("empty CSV: expected a header row of host names", field="names")
    names = tuple(cell.strip() for cell in rows[0])
    return kind(names, _matrix([[cell.strip() for cell in row] for row in rows[1:]]))


def load(path: str | Path, kind: type[LatencyMatrix] = LatencyMatrix) -> LatencyMatrix:
    """Load a latency matrix (host pairs, or ``kind=RackLatencyMatrix`` for rack pairs) from a ``.csv`` or ``.json`` file."""
    path = Path(path)
    parsers = {".csv": parse_csv, ".json": parse_json}
    if path.suffix.lower() not in parsers:
        raise InputError(f"must end in .csv or .json, got {path.name!r}", field="latency_file")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}", field="latency_file") from None
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8 text: {error}", field="latency_file") from None
    return parsers[path.suffix.lower()](text, kind)


def to_json(matrix: LatencyMatrix) -> str:
    """The JSON form ``parse_json`` reads."""
    return json.dumps({"names": list(matrix.names), "latency_us": matrix.latency_us.tolist()})


def to_csv(matrix: LatencyMatrix) -> str:
    """The CSV form ``parse_csv`` (and the scheduler's ``yarn.scheduler.corral.latency.file``) reads."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(matrix.names)
    writer.writerows([f"{value:g}" for value in row] for row in matrix.latency_us.tolist())
    return out.getvalue()


def by_rack(hosts: LatencyMatrix, rack_of: Mapping[str, str]) -> RackLatencyMatrix:
    """Rack-pair latencies from host pairs: the largest between any two hosts of the racks (NoMora eq. 1 takes
    the maximum); inside a rack, the largest between two of its hosts (0 for a rack of one host)."""
    racks = tuple(dict.fromkeys(rack_of[name] for name in hosts.names))
    position = {rack: index for index, rack in enumerate(racks)}
    out = np.zeros((len(racks), len(racks)))
    for i, a in enumerate(hosts.names):
        for k, b in enumerate(hosts.names):
            if i != k:
                ra, rb = position[rack_of[a]], position[rack_of[b]]
                out[ra, rb] = max(out[ra, rb], hosts.latency_us[i, k])
    return RackLatencyMatrix(racks, out)


@dataclass(frozen=True)
class LatencyShape:
    """Log-normal latency distribution of one host-pair class: median (µs) and sigma of ln(latency)."""

    median_us: float
    sigma: float

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.median_us * np.exp(self.sigma * rng.standard_normal(size))


# The paper assigns measured cloud latency traces to host pairs by distance in a fat tree but publishes no
# figures; these shapes are chosen (docs/nomora.md): medians 20 / 60 / 150 µs, long right tail.
SHAPES = {"same_rack": LatencyShape(20.0, 0.25), "same_pod": LatencyShape(60.0, 0.3), "cross_pod": LatencyShape(150.0, 0.35)}


def host_name(pod: int, rack: int, host: int) -> str:
    """Generated host names: ``pod<p>-rack<r>-host<h>``, rack numbered across the whole cluster."""
    return f"pod{pod}-rack{rack}-host{host}"


def generate(pods: int, racks_per_pod: int, hosts_per_rack: int, seed: int,
             shapes: dict[str, LatencyShape] = SHAPES) -> LatencyMatrix:
    """A symmetric host-pair matrix in a fat tree; each pair drawn from its class's shape (seeded)."""
    for option, value in (("pods", pods), ("racks_per_pod", racks_per_pod), ("hosts_per_rack", hosts_per_rack)):
        if value < 1:
            raise InputError(f"must be >= 1, got {value}", field=option)
    rack = np.repeat(np.arange(pods * racks_per_pod), hosts_per_rack)
    pod = rack // racks_per_pod
    same_rack = rack[:, None] == rack[None, :]
    same_pod = pod[:, None] == pod[None, :]
    rng = np.random.default_rng(seed)
    size = len(rack)
    matrix = np.where(same_rack, shapes["same_rack"].draw(rng, size * size).reshape(size, size),
                      np.where(same_pod, shapes["same_pod"].draw(rng, size * size).reshape(size, size),
                               shapes["cross_pod"].draw(rng, size * size).reshape(size, size)))
    matrix = np.triu(matrix, 1)
    names = tuple(host_name(int(pod[i]), int(rack[i]), i % hosts_per_rack) for i in range(size))
    return LatencyMatrix(names, matrix + matrix.T)
