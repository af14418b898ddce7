"""The Corral hints on a YARN application: its plan, its job and its rack set R_j as application tags.

The encoding is the contract with the scheduler in java_patch (docs/rack-tags.md, ``RackSetTags``):
``corral-plan:<plan_id>``, ``corral-job:<job name>``, optionally ``corral-key:<recurring key>`` and
``corral-period:<period>`` (so history knows which recurring job a run was, and which period's plan
made it, without reading its name; the scheduler ignores both), ``corral-latency:<function>`` for a
latency-sensitive job (the scheduler then orders R_j's nodes by latency to its AM, NoMora), and
``corral-racks-<k>:<rack>;<rack>;...`` for k = 0, 1, ..., each tag at most 100 characters. Within a tag, a rack with the same parent as the one
before it is written as its last path component alone (``/dc1/rack-07;rack-08``). YARN lower-cases
tags, so decoding is case-insensitive and rack names are compared lower-cased.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError

log = logging.getLogger(__name__)
MAX_TAG_CHARS = 100  # yarn.resourcemanager.application.max-tag.length's default
MAX_TAGS = 10  # yarn.resourcemanager.application.max-tags' default
PLAN_PREFIX = "corral-plan:"
JOB_PREFIX = "corral-job:"
KEY_PREFIX = "corral-key:"
PERIOD_PREFIX = "corral-period:"
LATENCY_PREFIX = "corral-latency:"  # LatencyOrder.TAG_PREFIX
RACKS_PREFIX = "corral-racks-"
RACKS_TAG = re.compile(r"corral-racks-(\d{1,3}):(.*)")
RACK_SEPARATOR = ";"
RACK_PATH = re.compile(r"/[a-z0-9._\-/]+")  # what the scheduler accepts, after lower-casing
SIBLING_NAME = re.compile(r"[a-z0-9._\-]+")  # a rack written by its name after a sibling
_FORBIDDEN = re.compile(r"[,;\s]")  # YARN splits tags on commas; ';' separates racks


class MalformedRackSetError(InputError):
    """Tags that claim a rack set but do not follow the encoding; the scheduler then confines nothing."""


@dataclass(frozen=True)
class CorralTags:
    """What the tags of one application say: plan id, job name, rack set R_j and, when given, the
    recurring key, the planning period and the performance-latency function of a latency-sensitive job
    (all lower-cased, as YARN stores tags). The job's stable id is (key, period); (plan id, period, job)
    names the plan entry that made the run."""

    plan_id: str
    job: str
    racks: tuple[str, ...]
    key: str | None = None
    period: str | None = None
    latency: str | None = None

    def encode(self) -> list[str]:
        """The application tags, in order: plan, job, key, period and latency function when given, then the rack set split into <= 100-char tags."""
        optional = (("recurring key", KEY_PREFIX, self.key), ("period", PERIOD_PREFIX, self.period),
                    ("latency function", LATENCY_PREFIX, self.latency))
        for what, value in (("plan id", self.plan_id), ("job name", self.job), *((what, value) for what, _, value in optional)):
            if value is not None:
                check_tag_value(what, value)
        racks = sorted({r.lower() for r in self.racks})
        if bad := [r for r in racks if not RACK_PATH.fullmatch(r)]:
            raise InputError(f"rack {bad[0]!r} cannot go into a rack-set tag: it must be a topology path like /rack-a")
        identity = [prefix + value for _, prefix, value in optional if value is not None]
        tags = [PLAN_PREFIX + self.plan_id, JOB_PREFIX + self.job, *identity, *_rack_tags(racks)]
        if too_long := [t for t in tags if len(t) > MAX_TAG_CHARS]:
            raise InputError(f"tag {too_long[0]!r} is longer than YARN's {MAX_TAG_CHARS} characters")
        if len(tags) > MAX_TAGS:
            raise InputError(f"{len(racks)} racks need {len(tags)} tags, more than YARN's default {MAX_TAGS} per application "
                             "(raise yarn.resourcemanager.application.max-tags, see docs/rack-tags.md)")
        return [t.lower() for t in tags]

    @classmethod
    def decode(cls, tags: list[str] | str) -> CorralTags | None:
        """The Corral hints among an application's tags (a list, or YARN's comma-joined string); None if absent.
        ``racks`` is the rack set the scheduler confines the application to: empty when its rack-set
        tags are malformed (logged), as RackSetTags reads them."""
        items = _tag_items(tags)
        plan, job = _tag_value(items, PLAN_PREFIX), _tag_value(items, JOB_PREFIX)
        if plan is None or job is None:
            return None
        try:
            racks = parse_rack_set(items)
        except MalformedRackSetError as exc:
            log.warning("plan %s job %s: %s; the scheduler confines it to no rack set", plan, job, exc)
            racks = ()
        return cls(plan_id=plan, job=job, racks=racks, key=_tag_value(items, KEY_PREFIX), period=_tag_value(items, PERIOD_PREFIX),
                   latency=_tag_value(items, LATENCY_PREFIX))

    def matches(self, other: CorralTags) -> bool:
        """Same plan and job, and the same period when both carry one, compared as YARN stores them (lower-cased):
        two periods with the same inputs get the same plan id."""
        periods = {p.lower() for p in (self.period, other.period) if p is not None}
        return len(periods) <= 1 and (self.plan_id.lower(), self.job.lower()) == (other.plan_id.lower(), other.job.lower())


def check_tag_value(what: str, value: str) -> None:
    if not value or _FORBIDDEN.search(value) or not value.isascii():
        raise InputError(f"{what} {value!r} cannot go into a YARN tag: it must be non-empty ASCII without commas, ';' or spaces")


def _rack_tags(racks: list[str]) -> list[str]:
    """Pack the racks, sorted, greedily into ``corral-racks-<k>:`` tags of at most 100 characters (as RackSetTags.encode)."""
    tags: list[str] = []
    current, previous = "", ""
    for rack in racks:
        item = _sibling(previous, rack) if current else rack
        prefix = f"corral-racks-{len(tags)}:"
        if current and len(prefix + current + RACK_SEPARATOR + item) > MAX_TAG_CHARS:
            tags.append(prefix + current)
            current, item = "", rack
        current = current + RACK_SEPARATOR + item if current else item
        previous = rack
    if current:
        tags.append(f"corral-racks-{len(tags)}:" + current)
    return tags


def _sibling(previous: str, rack: str) -> str:
    """The rack as its last path component when it has the previous rack's parent, else in full."""
    parent, _, name = rack.rpartition("/")
    return name if name and previous.rpartition("/")[0] == parent else rack


def key_tag(tags: list[str] | str) -> str | None:
    """The recurring key an application's tags carry (``corral-key:``, lower-cased by YARN), or None."""
    return _tag_value(_tag_items(tags), KEY_PREFIX)


def _tag_value(items: list[str], prefix: str) -> str | None:
    """The value of the first tag starting with ``prefix``, or None."""
    return next((t.removeprefix(prefix) for t in items if t.startswith(prefix)), None)


def _tag_items(tags: list[str] | str) -> list[str]:
    """An application's tags as YARN stores them (lower-cased), from a list or YARN's comma-joined string."""
    return [t.strip().lower() for t in (tags.split(",") if isinstance(tags, str) else tags) if t.strip()]


def parse_rack_set(tags: Iterable[str]) -> tuple[str, ...]:
    """R_j from an application's tags, sorted and lower-cased, read exactly as the scheduler's
    ``RackSetTags.parse`` reads it (both checked against tests/data/rack_tag_vectors.json); empty
    when no tag starts with ``corral-racks-``. Raises MalformedRackSetError naming the bad tag."""
    parts: dict[int, str] = {}
    for raw in tags:
        tag = raw.strip().lower()
        if not tag.startswith(RACKS_PREFIX):
            continue
        if not (m := RACKS_TAG.fullmatch(tag)):
            raise MalformedRackSetError(f"tag {raw!r} does not match {RACKS_PREFIX}<k>:<rack>;<rack>;...")
        if (k := int(m[1])) in parts:
            raise MalformedRackSetError(f"rack-set tag number {k} appears twice")
        parts[k] = m[2]
    if sorted(parts) != list(range(len(parts))):
        raise MalformedRackSetError(f"rack-set tags must be numbered 0..{len(parts) - 1} without gaps, got {sorted(parts)}")
    return tuple(sorted({rack for k in sorted(parts) for rack in _expand(parts[k])}))


def _expand(part: str) -> list[str]:
    """The racks of one tag's value, sibling shorthand expanded (the inverse of :func:`_rack_tags`)."""
    racks: list[str] = []
    for item in part.split(RACK_SEPARATOR):
        if RACK_PATH.fullmatch(item):
            racks.append(item)
        elif racks and SIBLING_NAME.fullmatch(item):
            racks.append(racks[-1].rpartition("/")[0] + "/" + item)
        else:
            raise MalformedRackSetError(f"{item!r} is not a rack path like /rack-a"
                                        + (f" nor the name of a sibling of {racks[-1]}" if racks else ""))
    return racks


def period_id(start: datetime) -> str:
    """A planning period's id, as ``corral-period:`` carries it: its start in UTC as ``YYYYMMDDTHHMMSSZ``
    (the pipeline's period directory name; YARN stores it lower-cased)."""
    return f"{start.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def plan_hints(plan: Plan, job: str) -> tuple[CorralTags, int]:
    """Job j's hints from a plan: R_j and its identity as tags, and the YARN priority p_j (thesis §4.1)."""
    planned = next((j for j in plan.jobs if j.name == job), None)
    if planned is None:
        raise InputError(f"plan {plan.plan_id} has no job {job!r}; it has {[j.name for j in plan.jobs][:10]}")
    return CorralTags(plan.plan_id, planned.name, tuple(planned.racks), latency=planned.latency_function), planned.priority
