"""Recurring-job identity: which runs are instances of the same recurring job (thesis §2.2).

A recurring job is "the same script run whenever new data becomes available", so its instances
differ in names only by dates, timestamps and ids. The key is configurable:

* ``name`` (default): the job name with dates, times, Hadoop ids, UUIDs, hex hashes and long digit
  runs removed (``daily-clicks-2026-11-21`` and ``daily-clicks-2026-11-22`` share ``daily-clicks``);
* ``input_path``: the input path stripped the same way (``/logs/clicks/2026/11/21`` -> ``/logs/clicks``);
* ``pattern``: a regular expression; the key is its first group (or whole match) in the name. A name
  it does not match falls back to the stripped name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from corral_yarn.errors import InputError

KeyMode = Literal["name", "input_path", "pattern"]

_VOLATILE = [
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # UUID
    r"(?:job|application|appattempt|attempt|task|container)_[0-9_a-z]*\d",  # Hadoop/YARN ids
    r"(?<!\d)\d{4}[-/_.]?\d{2}[-/_.]?\d{2}(?:[T _-]?\d{2}[:.-]?\d{2}(?:[:.-]?\d{2})?(?:\.\d+)?Z?)?(?!\d)",  # date[time]
    r"\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",  # hex hash
    r"\d{6,}",  # epoch seconds, sequence numbers
    r"(?<=/)\d{1,2}(?=/|$)",  # month/day path components (/2026/11/21)
]
_VOLATILE_RE = re.compile("|".join(f"(?:{p})" for p in _VOLATILE), re.IGNORECASE)
_SEPARATORS = re.compile(r"([-_./:=])[-_./:=]+")
_UNSAFE = re.compile(r"[\s,;]+")


def safe_key(text: str) -> str:
    """A key usable in a job name (no whitespace, comma or semicolon)."""
    return _UNSAFE.sub("_", text.strip()) or "job"


def strip_volatile(text: str) -> str:
    """``text`` without the parts that change from one instance of a recurring job to the next."""
    stripped = _SEPARATORS.sub(r"\1", _VOLATILE_RE.sub("", text)).lstrip("-_.:= ").rstrip("-_./:= ")
    return safe_key(stripped)


@dataclass(frozen=True)
class RecurringKey:
    """How to derive a run's recurring-job key."""

    mode: KeyMode = "name"
    pattern: str | None = None

    def __post_init__(self) -> None:
        if self.mode == "pattern":
            if not self.pattern:
                raise InputError("key mode 'pattern' needs a regular expression", field="key_pattern")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise InputError(f"not a regular expression: {exc}", field="key_pattern") from None

    def key(self, name: str, input_path: str | None = None) -> str:
        if self.mode == "input_path" and input_path:
            return strip_volatile(input_path)
        if self.mode == "pattern" and (m := re.search(self.pattern or "", name)):
            return safe_key(m.group(1) if m.groups() else m.group(0))
        return strip_volatile(name)
