"""Recurring-job identity: which runs are instances of the same recurring job (thesis §2.2).

A recurring job is "the same script run whenever new data becomes available", so its instances
differ in names only by dates, timestamps and ids. The key is configurable:

* ``name`` (default): the job name with dates, times, Hadoop ids, UUIDs, hex hashes and long digit
  runs removed (``daily-clicks-2026-11-21`` and ``daily-clicks-2026-11-22`` share ``daily-clicks``);
* ``input_path``: the input path normalised (:func:`normalise_path`: scheme and host dropped, dates
  and date-like partition values folded, ``/logs/clicks/ds=2026-11-21/hr=05`` -> ``/logs/clicks/ds=*/hr=*``);
  a run without an input path falls back to its name;
* ``pattern``: a regular expression; the key is its first group (or whole match) in the name. A name
  it does not match falls back to the stripped name;
* ``column``: the value of a column of the imported table (CSV/JSON), stripped like a name.

A run whose application carries Corral's ``corral-key:`` tag is keyed by it whatever the mode
(:func:`tagged_key`): the pipeline and ``job_settings`` tag every planned job with its key. Its
``corral-plan:``, ``corral-period:`` and ``corral-job:`` tags say which plan entry made it
(:func:`plan_entry`), so a report joins runs to their plan without reading names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from corral_yarn.cluster.tags import CorralTags, key_tag
from corral_yarn.errors import InputError

KeyMode = Literal["name", "input_path", "pattern", "column"]
MODES = ("name", "input_path", "pattern")

_VOLATILE = [
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # UUID
    r"(?:job|application|appattempt|attempt|task|container)_[0-9_a-z]*\d",  # Hadoop/YARN ids
    r"(?<!\d)\d{4}[-/_.]?\d{2}[-/_.]?\d{2}(?:[T _-]?\d{2}(?:[:.-]?\d{2}){0,2}(?:\.\d+)?Z?)?(?!\d)",  # date[time]
    r"\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",  # hex hash
    r"\d{6,}",  # epoch seconds, sequence numbers
    r"(?<=/)\d{1,2}(?=/|$)",  # month/day path components (/2026/11/21)
]
_VOLATILE_RE = re.compile("|".join(f"(?:{p})" for p in _VOLATILE), re.IGNORECASE)
_SEPARATORS = re.compile(r"([-_./:=])[-_./:=]+")
_UNSAFE = re.compile(r"[\s,;]+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]*", re.IGNORECASE)  # hdfs://namenode:8020
_PARTITION = re.compile(r"(?<=/)([^/=]+)=([^/]*\d[^/]*)(?=/|$)")  # ds=2026-11-21, hr=05, batch=17 (not country=US)


def tagged_key(tags: str | list[str] | None, derived: str) -> str:
    """A run's recurring key: the one its application's ``corral-key:`` tag carries when Corral (or a
    task given Corral's settings) submitted it, so no name is parsed; YARN lower-cases tags, so the key
    derived from the name stands when it is the same but for case. ``derived`` for untagged runs."""
    tagged = key_tag(tags) if tags else None
    return derived if tagged is None or tagged == derived.lower() else tagged


def plan_entry(tags: str | list[str] | None) -> dict[str, str | None]:
    """The plan id, planning period and planned job name an application's Corral tags carry (lower-cased
    by YARN), as a JobRun's ``plan_id``, ``plan_period`` and ``planned_job``; all None for an ad hoc run."""
    corral = CorralTags.decode(tags) if tags else None
    if corral is None:
        return {"plan_id": None, "plan_period": None, "planned_job": None}
    return {"plan_id": corral.plan_id, "plan_period": corral.period, "planned_job": corral.job}


def safe_key(text: str) -> str:
    """A key usable in a job name (no whitespace, comma or semicolon)."""
    return _UNSAFE.sub("_", text.strip()) or "job"


def strip_volatile(text: str) -> str:
    """``text`` without the parts that change from one instance of a recurring job to the next."""
    stripped = _SEPARATORS.sub(r"\1", _VOLATILE_RE.sub("", text)).lstrip("-_.:= ").rstrip("-_./:= ")
    return safe_key(stripped)


def normalise_path(path: str) -> str:
    """An input path as a recurring key: scheme and authority dropped, partition values holding a digit
    folded to ``*`` (``ds=2026-11-21`` -> ``ds=*``), then dates, ids and date directories stripped;
    several comma-separated paths are normalised one by one, sorted and deduplicated."""
    parts = {_PARTITION.sub(r"\1=*", _SCHEME.sub("", p.strip())) for p in path.split(",") if p.strip()}
    return safe_key("+".join(sorted(strip_volatile(p) for p in parts)))


@dataclass(frozen=True)
class RecurringKey:
    """How to derive a run's recurring-job key."""

    mode: KeyMode = "name"
    pattern: str | None = None
    column: str | None = None

    def __post_init__(self) -> None:
        if self.mode == "pattern":
            if not self.pattern:
                raise InputError("key mode 'pattern' needs a regular expression", field="key_pattern")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise InputError(f"not a regular expression: {exc}", field="key_pattern") from None
        if self.mode == "column" and not self.column:
            raise InputError("key mode 'column' needs a column name", field="key")

    @classmethod
    def from_option(cls, key: str, pattern: str | None = None) -> RecurringKey:
        """``--key name|input_path|pattern|COLUMN`` (any other word names a column of the import)."""
        return cls(mode=key, pattern=pattern) if key in MODES else cls(mode="column", column=key)  # type: ignore[arg-type]

    def key(self, name: str, input_path: str | None = None, value: str | None = None) -> str:
        """The key of a run named ``name`` reading ``input_path``; ``value``: its ``column`` (column mode)."""
        if self.mode == "column" and value:
            return strip_volatile(value)
        if self.mode == "input_path" and input_path:
            return normalise_path(input_path)
        if self.mode == "pattern" and (m := re.search(self.pattern or "", name)):
            return safe_key(m.group(1) if m.groups() else m.group(0))
        return strip_volatile(name)
