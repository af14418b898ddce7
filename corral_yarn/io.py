"""Reading and writing the contracts as JSON: one-line errors naming the field, atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from corral_yarn.contracts import ClusterSpec, Plan, Workload
from corral_yarn.errors import InputError

M = TypeVar("M", bound=BaseModel)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not str(part).startswith(("function-", "model-", "union-")):  # pydantic's wrappers, tagged unions
            path += f".{part}" if path else str(part)
    return path


def parse(model: type[M], data: Any, source: str = "input") -> M:
    """Validate ``data`` as ``model``; the first problem becomes one InputError naming its field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = _field_path(err["loc"]) or model.__name__
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "too_short" and err.get("ctx", {}).get("actual_length") == 0:
            msg = f"is empty; give at least {err['ctx']['min_length']}"
        got = err.get("input")
        detail = f" (got {got!r})" if err["type"] != "missing" and not isinstance(got, (dict, list)) else ""
        raise InputError(f"{msg}{detail}", field=f"{source}: {field}") from None


def read_json(path: str | os.PathLike[str]) -> Any:
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no such file: {p}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{p} is not JSON: {exc}") from None


def load(model: type[M], path: str | os.PathLike[str]) -> M:
    return parse(model, read_json(path), source=str(path))


def load_cluster(path: str | os.PathLike[str]) -> ClusterSpec:
    return load(ClusterSpec, path)


def load_workload(path: str | os.PathLike[str]) -> Workload:
    return load(Workload, path)


def load_plan(path: str | os.PathLike[str]) -> Plan:
    return load(Plan, path)


def to_json(model: BaseModel) -> str:
    return model.model_dump_json(indent=2, exclude_none=False) + "\n"


def write_atomic(path: str | os.PathLike[str], text: str | bytes) -> None:
    """Write a file so that readers see the old content or the whole new one, never a part."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes the file private; give it the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_tree(directory: str | os.PathLike[str], files: Mapping[str, bytes]) -> None:
    """Write the files of a directory: a new one is filled under a temporary name and renamed into place;
    into an existing one each file is replaced with ``write_atomic`` (other files there are left alone)."""
    out = Path(directory)
    if out.is_dir():
        for name, content in files.items():
            write_atomic(out / name, content)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; what is written here is meant to be read
        for name, content in files.items():
            (tmp / name).write_bytes(content)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_together(files: Mapping[str | os.PathLike[str], str | bytes | Mapping[str, bytes]]) -> None:
    """Write several files, each with ``write_atomic``, and directories ({file name: content}, each with
    ``write_tree``), in order: all of them or, as far as it can, none (a failure removes the files and
    directories this call created before it; a file it replaced keeps its new content)."""
    created: list[Path] = []
    try:
        for path, content in files.items():
            created += _new_paths(Path(path), content)
            if isinstance(content, Mapping):
                write_tree(path, content)
            else:
                write_atomic(path, content)
    except BaseException:
        for p in created:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        raise


def _new_paths(path: Path, content: str | bytes | Mapping[str, bytes]) -> list[Path]:
    """What writing ``content`` at ``path`` creates: the file or directory, or the new files of an existing directory."""
    if isinstance(content, Mapping) and path.is_dir():
        return [path / name for name in content if not (path / name).exists()]
    return [] if path.exists() else [path]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save(model: BaseModel, path: str | os.PathLike[str]) -> None:
    write_atomic(path, to_json(model))


def inputs_sha256(*parts: BaseModel | dict[str, Any]) -> str:
    """A stable hash of the planner's inputs (canonical JSON of every part)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.model_dump(mode="json") if isinstance(part, BaseModel) else part
        h.update(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (UTC when it has no zone)."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"not an ISO 8601 time: {text!r} (e.g. 2026-11-22T00:00:00Z)") from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def parse_duration(text: str) -> timedelta:
    """A duration: a number with an optional unit s, m, h, d or w (seconds by default)."""
    if not (m := _DURATION.match(text)) or float(m.group(1)) <= 0:
        raise InputError(f"not a positive duration: {text!r} (e.g. 3600, 90m, 24h, 1d)")
    return timedelta(seconds=float(m.group(1)) * _UNIT_S[m.group(2)])
