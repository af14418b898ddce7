"""Planner grants: the planner's signature on the rack set R_j and priority p_j it gave one application.

With a secret shared with the ResourceManager (docs/deploy.md, "Grant secret"), the submitter adds one
tag ``corral-grant:<from>-<until>:<HMAC-SHA256, 64 hex digits>`` over the application's name, user,
queue, rack set, priority and the period [from, until) (Unix seconds) it may be submitted in. The
scheduler (java_patch's ``RackSetGrant``) honours a rack set, or a priority above the queue's default,
only under a grant that verifies; both sides sign the same bytes, checked against
tests/data/rack_tag_vectors.json (docs/rack-tags.md, "Grants").
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from corral_yarn.cluster.tags import RACK_SEPARATOR
from corral_yarn.errors import InputError

GRANT_PREFIX = "corral-grant:"
VERSION = "corral-grant-v1"
SECRET_FILE_FIELD = "grant_secret_file"  # key of the cluster description and the RM Connection's extra


@dataclass(frozen=True)
class Grant:
    """What the planner grants one application: the fields the HMAC covers."""

    name: str
    user: str
    queue: str
    racks: tuple[str, ...]
    priority: int
    valid_from: int  # Unix seconds; the RM checks the application's submit time is in [from, until)
    valid_until: int

    def message(self) -> bytes:
        """The signed bytes: every field as a netstring, so no two field lists give the same bytes."""
        fields = (VERSION, self.name, self.user, leaf_queue(self.queue), RACK_SEPARATOR.join(sorted({r.lower() for r in self.racks})),
                  str(self.priority), str(self.valid_from), str(self.valid_until))
        return b"".join(b"%d:%s," % (len(f.encode()), f.encode()) for f in fields)

    def tag(self, secret: bytes) -> str:
        """The grant tag (lower-case, as YARN stores it; at most 99 characters)."""
        digest = hmac.new(secret, self.message(), hashlib.sha256).hexdigest()
        return f"{GRANT_PREFIX}{self.valid_from}-{self.valid_until}:{digest}"


def leaf_queue(queue: str) -> str:
    """A queue by its leaf name: ``root.default`` and ``default`` are the same queue to a grant."""
    return queue.rpartition(".")[2]


def grant_period(start: datetime, end: datetime) -> tuple[int, int]:
    """A period as the [from, until) Unix seconds of a grant."""
    if end <= start:
        raise InputError(f"a grant's period must end after it starts: {start.isoformat()} .. {end.isoformat()}")
    return int(start.timestamp()), int(end.timestamp())


def period_from_now(now: datetime, hours: float) -> tuple[int, int]:
    """The grant period of a submission outside a planned period: ``hours`` from now."""
    return grant_period(now, now + timedelta(hours=hours))


def read_secret(path: str | Path) -> bytes:
    """The shared secret from a file (surrounding whitespace ignored), as the RM reads ``...grant.secret-file``."""
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{SECRET_FILE_FIELD} {str(path)!r}: cannot read the grant secret ({exc})") from exc
    if not secret:
        raise InputError(f"{SECRET_FILE_FIELD} {str(path)!r} is empty")
    return secret.encode()


def secret_of(value: str | None) -> bytes | None:
    """A secret given inline (e.g. an Airflow Connection's password): stripped, None when blank."""
    return value.strip().encode() if value and value.strip() else None
