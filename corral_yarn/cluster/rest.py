"""A small JSON-over-HTTP client for Hadoop's REST APIs (ResourceManager, JobHistory, NameNode), and
the one retry policy of every HTTP call the adapters make (WebHDFS through HdfsCLI included).

One rule for failures: a connection that cannot be made is retried with urllib3's exponential
backoff (the request never reached the server, so retrying any verb is safe); an answer that never
came (read timeout, dropped connection) is retried too where the request can be sent again as it
was, the REST clients' JSON bodies (the RM's submissions are made idempotent by their tags and ids),
but not for WebHDFS's streamed file data. Everything else is not retried. An HTTP 4xx/5xx becomes a
:class:`RemoteError` carrying Hadoop's ``RemoteException`` message; a body that is not the expected
JSON becomes a :class:`MalformedResponseError`; no exception of requests or urllib3 leaves the adapters.

On a secure cluster every session also authenticates with SPNEGO (:mod:`corral_yarn.cluster.kerberos`):
the policy's ``kerberos`` names the identity, and Hadoop's pseudo authentication (``user.name``) is off.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
import urllib3
from requests.adapters import HTTPAdapter

from corral_yarn.cluster.errors import ClusterError, MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.kerberos import KerberosConfig, Spnego

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """The policy of every session: ``attempts`` tries in all, urllib3's backoff (backoff_s x 2^k) between
    them, and on a secure cluster the Kerberos identity every request authenticates as (SPNEGO)."""

    attempts: int = 4
    backoff_s: float = 0.5
    kerberos: KerberosConfig | None = None

    def session(self, user: str | None = None, resend: bool = True) -> requests.Session:
        """A requests Session applying the policy to every request; ``resend=False`` for streamed
        bodies (only connections that could not be made are retried). ``user``: Hadoop's pseudo
        authentication (simple auth, ``user.name``)."""
        retries = self.attempts - 1
        policy = urllib3.Retry(total=retries, connect=retries, read=retries if resend else 0, status=0, other=0,
                               allowed_methods=None, backoff_factor=self.backoff_s, raise_on_status=False)
        session = requests.Session()
        session.mount("http://", HTTPAdapter(max_retries=policy))
        session.mount("https://", HTTPAdapter(max_retries=policy))
        if self.kerberos:
            session.auth = Spnego(self.kerberos)
        elif user:
            session.params = {"user.name": user}
        return session

    def call(self, what: str, operation: Callable[[], T]) -> T:
        """Run a whole ``operation`` that can be started over (e.g. an atomic upload) up to ``attempts`` times
        while it ends in an UnreachableError (a service too loaded to answer in time), waiting backoff_s x 2^k
        after its k-th failure (k from 0); the last UnreachableError is raised. Any other error is not retried."""
        for k in range(self.attempts - 1):
            try:
                return operation()
            except UnreachableError as exc:
                pause = self.backoff_s * 2 ** k
                log.warning("%s: %s; trying again in %.1f s (try %d of %d)", what, exc, pause, k + 2, self.attempts)
                time.sleep(pause)
        return operation()


class RestClient:
    """JSON requests against one service at ``base_url`` (e.g. ``http://rm:8088``)."""

    def __init__(self, service: str, base_url: str, timeout_s: float = 30.0, retry: Retry = Retry(),
                 user: str | None = None, resend: bool = True) -> None:
        self.service = service
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.retry = retry
        self.session = retry.session(user, resend)

    def __repr__(self) -> str:
        return f"RestClient({self.service!r}, {self.base_url!r})"

    def request(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None,
                accept_empty: bool = False) -> Any:
        """Send one request; returns the decoded JSON body (None for an empty body if ``accept_empty``)."""
        data = None if body is None else json.dumps(body)
        headers = {"Accept": "application/json", **({"Content-Type": "application/json"} if data else {})}
        response = self.send(method, path, data=data, params=params, headers=headers)
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

    def location(self, method: str, path: str, params: dict[str, Any]) -> str:
        """The ``Location`` a request is redirected to, not followed (WebHDFS's CREATE and APPEND, step one)."""
        response = self.send(method, path, params=params, allow_redirects=False)
        if not (location := response.headers.get("location")):
            raise MalformedResponseError(f"{self.service} answered {method} {path} with HTTP {response.status_code} and no Location")
        return location

    def send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request under the retry policy (``path`` relative to ``base_url``, or a whole URL);
        a 4xx/5xx answer is a RemoteError, no answer an UnreachableError."""
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
        try:
            response = self.session.request(method, url, timeout=self.timeout_s, **kwargs)
        except (requests.ConnectionError, requests.Timeout) as exc:  # a read timeout too: no answer in time
            raise UnreachableError(f"cannot reach {self.service} at {self.base_url or url} after {self.retry.attempts} "
                                   f"attempts: {_reason(exc)}") from None
        except requests.RequestException as exc:
            raise ClusterError(f"{self.service}: {method} {url} failed: {_excerpt(str(exc), 200)}") from None
        if response.status_code >= 400:
            exception, message = _remote_exception(response)
            raise RemoteError(self.service, response.status_code, message, exception)
        return response


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
