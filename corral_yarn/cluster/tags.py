"""The Corral hints on a YARN application: its plan, its job and its rack set R_j as application tags.

The encoding is the contract with the scheduler in java_patch (docs/rack-tags.md, ``RackSetTags``):
``corral-plan:<plan_id>``, ``corral-job:<job name>`` and ``corral-racks-<k>:<rack>;<rack>;...`` for
k = 0, 1, ..., each tag at most 100 characters. Within a tag, a rack with the same parent as the one
before it is written as its last path component alone (``/dc1/rack-07;rack-08``). YARN lower-cases
tags, so decoding is case-insensitive and rack names are compared lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corral_yarn.contracts import Plan
from corral_yarn.errors import InputError

MAX_TAG_CHARS = 100  # yarn.resourcemanager.application.max-tag.length's default
MAX_TAGS = 10  # yarn.resourcemanager.application.max-tags' default
PLAN_PREFIX = "corral-plan:"
JOB_PREFIX = "corral-job:"
RACKS_TAG = re.compile(r"^corral-racks-(\d+):(.*)$")
RACK_SEPARATOR = ";"
RACK_PATH = re.compile(r"^/[a-z0-9._\-/]+$")  # what the scheduler accepts, after lower-casing
_FORBIDDEN = re.compile(r"[,;\s]")  # YARN splits tags on commas; ';' separates racks


@dataclass(frozen=True)
class CorralTags:
    """What the tags of one application say: plan id, job name and rack set R_j (lower-cased)."""

    plan_id: str
    job: str
    racks: tuple[str, ...]

    def encode(self) -> list[str]:
        """The application tags, in order: plan, job, then the rack set split into <= 100-char tags."""
        for what, value in (("plan id", self.plan_id), ("job name", self.job)):
            _check_value(what, value)
        racks = sorted({r.lower() for r in self.racks})
        if bad := [r for r in racks if not RACK_PATH.match(r)]:
            raise InputError(f"rack {bad[0]!r} cannot go into a rack-set tag: it must be a topology path like /rack-a")
        tags = [PLAN_PREFIX + self.plan_id, JOB_PREFIX + self.job, *_rack_tags(racks)]
        if too_long := [t for t in tags if len(t) > MAX_TAG_CHARS]:
            raise InputError(f"tag {too_long[0]!r} is longer than YARN's {MAX_TAG_CHARS} characters")
        if len(tags) > MAX_TAGS:
            raise InputError(f"{len(racks)} racks need {len(tags)} tags, more than YARN's default {MAX_TAGS} per application "
                             "(raise yarn.resourcemanager.application.max-tags, see docs/rack-tags.md)")
        return [t.lower() for t in tags]

    @classmethod
    def decode(cls, tags: list[str] | str) -> CorralTags | None:
        """The Corral hints among an application's tags (a list, or YARN's comma-joined string); None if absent."""
        items = [t.strip().lower() for t in (tags.split(",") if isinstance(tags, str) else tags) if t.strip()]
        plan = next((t.removeprefix(PLAN_PREFIX) for t in items if t.startswith(PLAN_PREFIX)), None)
        job = next((t.removeprefix(JOB_PREFIX) for t in items if t.startswith(JOB_PREFIX)), None)
        parts = sorted((int(m[1]), m[2]) for t in items if (m := RACKS_TAG.match(t)))
        if plan is None or job is None:
            return None
        racks = tuple(sorted({r for _, part in parts for r in _expand(part)}))
        return cls(plan_id=plan, job=job, racks=racks)

    def matches(self, other: CorralTags) -> bool:
        """Same plan and job, compared as YARN stores them (lower-cased)."""
        return (self.plan_id.lower(), self.job.lower()) == (other.plan_id.lower(), other.job.lower())


def _check_value(what: str, value: str) -> None:
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


def _expand(part: str) -> list[str]:
    """The racks of one tag's value, sibling shorthand expanded (the inverse of :func:`_rack_tags`)."""
    racks: list[str] = []
    for item in filter(None, part.split(RACK_SEPARATOR)):
        racks.append(item if item.startswith("/") or not racks else racks[-1].rpartition("/")[0] + "/" + item)
    return racks


def plan_hints(plan: Plan, job: str) -> tuple[CorralTags, int]:
    """Job j's hints from a plan: R_j and its identity as tags, and the YARN priority p_j (thesis §4.1)."""
    planned = next((j for j in plan.jobs if j.name == job), None)
    if planned is None:
        raise InputError(f"plan {plan.plan_id} has no job {job!r}; it has {[j.name for j in plan.jobs][:10]}")
    return CorralTags(plan.plan_id, planned.name, tuple(planned.racks)), planned.priority
