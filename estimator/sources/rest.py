"""Hadoop REST values the estimator reads (collections themselves: ``corral_yarn.cluster.rest``)."""

from __future__ import annotations

from datetime import UTC, datetime


def from_ms(ms: int | None) -> datetime | None:
    """A Hadoop timestamp (ms since the epoch; 0 or -1 when unknown) as a UTC datetime."""
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC) if ms and ms > 0 else None
