"""A small JSON-over-HTTP client for Hadoop's REST APIs (ResourceManager, JobHistory, NameNode JMX).

One rule for failures: a connection that cannot be made is retried with exponential backoff (the
request never reached the server, so retrying any verb is safe); everything else is not retried.
An HTTP 4xx/5xx becomes a :class:`RemoteError` carrying Hadoop's ``RemoteException`` message; a body
that is not the expected JSON becomes a :class:`MalformedResponseError`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import requests

from corral_yarn.cluster.errors import MalformedResponseError, RemoteError, UnreachableError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retry:
    """Retries of connection errors: ``attempts`` tries in all, sleeping backoff_s x 2^k between them."""

    attempts: int = 4
    backoff_s: float = 0.5

    def delays(self) -> list[float]:
        return [self.backoff_s * 2**k for k in range(self.attempts - 1)]


class RestClient:
    """JSON requests against one service at ``base_url`` (e.g. ``http://rm:8088``)."""

    def __init__(self, service: str, base_url: str, timeout_s: float = 30.0, retry: Retry = Retry(),
                 user: str | None = None) -> None:
        self.service = service
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.retry = retry
        self.session = requests.Session()
        if user:
            self.session.params = {"user.name": user}  # Hadoop's pseudo authentication (simple auth)

    def __repr__(self) -> str:
        return f"RestClient({self.service!r}, {self.base_url!r})"

    def request(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None,
                accept_empty: bool = False) -> Any:
        """Send one request; returns the decoded JSON body (None for an empty body if ``accept_empty``)."""
        response = self._send(method, path, body, params)
        if response.status_code >= 400:
            raise self._remote_error(response)
        if not response.content.strip():
            if accept_empty:
                return None
            raise MalformedResponseError(f"{self.service} sent an empty body for {method} {path} (HTTP {response.status_code})")
        try:
            return response.json()
        except ValueError:
            raise MalformedResponseError(
                f"{self.service} sent a body that is not JSON for {method} {path}: {_excerpt(response.text)}"
            ) from None

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def _send(self, method: str, path: str, body: Any, params: dict[str, str] | None) -> requests.Response:
        url = f"{self.base_url}{path}"
        data = None if body is None else json.dumps(body)
        headers = {"Accept": "application/json", **({"Content-Type": "application/json"} if data else {})}
        delays = self.retry.delays()
        for attempt in range(self.retry.attempts):
            try:
                return self.session.request(method, url, data=data, params=params, headers=headers, timeout=self.timeout_s)
            except (requests.ConnectionError, requests.Timeout) as exc:  # a read timeout too: no answer in time
                if attempt == len(delays):
                    raise UnreachableError(
                        f"cannot reach {self.service} at {self.base_url} after {self.retry.attempts} attempts: {_reason(exc)}"
                    ) from None
                log.info("%s unreachable (%s); retrying in %.1f s", self.service, _reason(exc), delays[attempt])
                time.sleep(delays[attempt])
        raise AssertionError("unreachable")  # the loop returns or raises

    def _remote_error(self, response: requests.Response) -> RemoteError:
        exception, message = _remote_exception(response)
        return RemoteError(self.service, response.status_code, message, exception)


def _remote_exception(response: requests.Response) -> tuple[str | None, str]:
    """Hadoop's ``{"RemoteException": {"exception", "message"}}``, or the body's text when it is not one."""
    try:
        remote = response.json()["RemoteException"]
        return remote.get("exception"), str(remote.get("message") or "").strip() or response.reason
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, _excerpt(response.text) or response.reason or "no message"


def _excerpt(text: str, limit: int = 200) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit] + "..."


def _reason(exc: requests.RequestException) -> str:
    """The innermost cause of a connection error, e.g. 'Connection refused'."""
    cause: BaseException = exc
    while cause.__context__ is not None and not isinstance(cause, ConnectionRefusedError):
        cause = cause.__context__
    return _excerpt(str(cause), 120)


def expect(document: Any, *keys: str, service: str) -> Any:
    """``document[k1][k2]...``, or a MalformedResponseError naming the missing key."""
    value = document
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            where = ".".join(keys[: depth + 1])
            raise MalformedResponseError(f"{service} response has no {where!r}: {_excerpt(json.dumps(document))}")
        value = value[key]
    return value


def as_list(value: Any) -> list[Any]:
    """A JSON list as Hadoop's JAXB renders it: a list, a lone object for one element, null for none."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def items(document: Any, outer: str, inner: str, service: str) -> list[dict[str, Any]]:
    """Hadoop's collections: ``{"jobs": {"job": [...]}}``, with ``null`` or ``{}`` when empty; a
    document without ``outer`` is a MalformedResponseError."""
    return as_list((expect(document, outer, service=service) or {}).get(inner))
