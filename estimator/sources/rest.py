"""Reading Hadoop's REST documents (through the project's adapter, ``corral_yarn.cluster.rest``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from corral_yarn.cluster.rest import expect


def as_list(value: Any) -> list[Any]:
    """A JSON list as Hadoop's JAXB renders it: a list, a lone object for one element, null for none."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def items(document: Any, outer: str, inner: str, service: str) -> list[dict[str, Any]]:
    """Hadoop's collections: ``{"jobs": {"job": [...]}}``, with ``null`` or ``{}`` when empty; a
    document without ``outer`` is a MalformedResponseError."""
    return as_list((expect(document, outer, service=service) or {}).get(inner))


def from_ms(ms: int | None) -> datetime | None:
    """A Hadoop timestamp (ms since the epoch; 0 or -1 when unknown) as a UTC datetime."""
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC) if ms and ms > 0 else None
