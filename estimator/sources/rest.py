"""A small JSON-over-HTTP reader for Hadoop's REST APIs: GETs only (idempotent, so retried), and every
remote failure becomes one :class:`~estimator.errors.HistoryInputError` naming the URL."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from estimator.errors import HistoryInputError

log = logging.getLogger(__name__)


class RestReader:
    """GET JSON documents below ``base_url``."""

    def __init__(self, base_url: str, timeout_s: float = 30.0, retries: int = 3) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.session = requests.Session()
        retry = Retry(total=retries, backoff_factor=0.5, status_forcelist=(502, 503, 504), allowed_methods=("GET",))
        self.session.mount("http://", HTTPAdapter(max_retries=retry))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))
        self.session.headers["Accept"] = "application/json"

    def get(self, path: str, **params: str) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        try:
            response = self.session.get(url, params=params or None, timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise HistoryInputError(f"cannot reach {url}: {exc}") from None
        if response.status_code != 200:
            raise HistoryInputError(f"GET {url} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            data = response.json()
        except ValueError:
            raise HistoryInputError(f"GET {url} did not answer JSON (is this the right server?)") from None
        if not isinstance(data, dict):
            raise HistoryInputError(f"GET {url} answered {type(data).__name__}, expected a JSON object")
        return data


def items(data: dict[str, Any] | None, outer: str, inner: str) -> list[dict[str, Any]]:
    """Hadoop's collections: ``{"jobs": {"job": [...]}}``, with ``null`` or ``{}`` when empty."""
    return list(((data or {}).get(outer) or {}).get(inner) or [])


def from_ms(ms: int | None) -> datetime | None:
    """A Hadoop timestamp (ms since the epoch; 0 or -1 when unknown) as a UTC datetime."""
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC) if ms and ms > 0 else None
