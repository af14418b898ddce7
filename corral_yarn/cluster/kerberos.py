"""Kerberos for the adapters: SPNEGO on every HTTP request, and HDFS delegation tokens for YARN jobs.

A secure Hadoop cluster answers WebHDFS and the ResourceManager's and JobHistory server's REST APIs with
HTTP 401 until the client proves a Kerberos identity (SPNEGO, RFC 4559). :class:`KerberosConfig` names
that identity: a principal and its keytab, or a ticket cache filled by ``kinit``, or neither (the default
ticket cache, ``KRB5CCNAME``); ``krb5_conf`` points MIT Kerberos at a krb5.conf other than /etc/krb5.conf.
Every failure of GSSAPI becomes a :class:`KerberosError` saying what is wrong (no ticket, a keytab
without the principal's key, clock skew, an unknown service principal, no KDC); nothing of gssapi or
requests-gssapi leaves this module.

A YARN application authenticates to HDFS with a delegation token in its launch context, as a Hadoop
client's ``TokenCache`` obtains it: WebHDFS's ``GETDELEGATIONTOKEN`` with the ResourceManager as renewer
(it renews the token while the job runs and cancels it at the end). WebHDFS issues the token with kind
``WEBHDFS delegation``; the job reads ``hdfs://`` paths, so :func:`hdfs_token` re-labels it
``HDFS_DELEGATION_TOKEN`` (identifier and password are the NameNode's, unchanged).
"""

from __future__ import annotations

import base64
import logging
import os
import re

import gssapi
import requests
from pydantic import BaseModel, ConfigDict, model_validator
from requests_gssapi import OPTIONAL, HTTPSPNEGOAuth

from corral_yarn.cluster.errors import ClusterError, MalformedResponseError

log = logging.getLogger(__name__)

HDFS_TOKEN_KIND = b"HDFS_DELEGATION_TOKEN"  # DelegationTokenIdentifier.HDFS_DELEGATION_KIND
# GSSAPI's minor messages (MIT krb5) -> what to fix.
HINTS = (
    ("clock skew", "the clocks of this machine and the KDC differ by more than the allowed skew (5 min); sync them (NTP)"),
    ("no kerberos credentials", "no Kerberos ticket: run kinit, or set a keytab and principal in the connection"),
    ("credentials cache", "no Kerberos ticket in the configured cache: run kinit, or set a keytab and principal"),
    ("key table entry not found", "the keytab has no key for this principal (wrong keytab or principal)"),
    ("keytab", "the keytab cannot be read or holds no key for this principal"),
    ("preauthentication failed", "the KDC refused the keytab's key: the keytab is out of date (principal re-keyed) or for another realm"),
    ("decrypt integrity check failed", "the KDC refused the keytab's key: the keytab is out of date or for another realm"),
    ("client not found", "the principal does not exist in the KDC's database"),
    ("server not found", "the KDC has no HTTP/<host> principal for this service: is the address the host the service principal names?"),
    ("cannot contact any kdc", "no KDC reachable for the realm (krb5.conf [realms] kdc, or a firewall)"),
    ("cannot find kdc", "no KDC configured for the realm (krb5.conf [realms] kdc)"),
    ("ticket expired", "the Kerberos ticket has expired: run kinit again, or use a keytab"),
)


class KerberosError(ClusterError):
    """A Kerberos identity could not be proved to a service; the message says why and what to do."""


class KerberosConfig(BaseModel):
    """Who the adapters are on a secure cluster (connection extras ``kerberos_*``, docs/deploy.md)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    principal: str | None = None  # e.g. corral@EXAMPLE.COM; required with a keytab
    keytab: str | None = None  # a keytab holding the principal's key: tickets are obtained from it
    ccache: str | None = None  # a ticket cache filled by kinit (e.g. FILE:/tmp/krb5cc_1000); default: KRB5CCNAME
    krb5_conf: str | None = None  # a krb5.conf other than /etc/krb5.conf (sets KRB5_CONFIG for this process)

    @model_validator(mode="after")
    def _keytab_needs_principal(self) -> KerberosConfig:
        if self.keytab and not self.principal:
            raise ValueError("a Kerberos keytab needs the principal whose key it holds (kerberos principal)")
        return self


class Spnego(HTTPSPNEGOAuth):  # type: ignore[misc]
    """requests-gssapi's SPNEGO, whose GSSAPI failures are :class:`KerberosError` s naming the cause.

    Mutual authentication is checked when the server sends its token (Hadoop does on the 401 round) and
    not required after it, when a request carries Hadoop's ``hadoop.auth`` cookie instead."""

    def __init__(self, config: KerberosConfig) -> None:
        super().__init__(creds=credentials(config), mutual_authentication=OPTIONAL)
        self.config = config

    def generate_request_header(self, response: requests.Response | None, host: str, is_preemptive: bool = False) -> str:
        try:
            self.context[host] = gssapi.SecurityContext(
                usage="initiate", creds=self.creds, mech=self.mech,
                name=gssapi.Name(f"HTTP@{host}", gssapi.NameType.hostbased_service),
                flags=[gssapi.RequirementFlag.mutual_authentication])
            token = self.context[host].step(None if is_preemptive or response is None else _server_token(response))
        except gssapi.exceptions.GSSError as exc:
            raise KerberosError(explain(exc, f"authenticate to HTTP/{host}", self.config)) from None
        return f"Negotiate {base64.b64encode(token or b'').decode()}"

    def handle_other(self, response: requests.Response) -> requests.Response:
        if _server_token(response) is None:  # authenticated by Hadoop's cookie: no server token to check
            return response
        return super().handle_other(response)


def credentials(config: KerberosConfig) -> gssapi.Credentials:
    """The initiator credentials of ``config``: from its keytab (into a private in-memory cache), its
    ticket cache, or the default cache."""
    if config.krb5_conf:
        if not os.path.isfile(config.krb5_conf):
            raise KerberosError(f"krb5.conf {config.krb5_conf} does not exist (kerberos krb5_conf)")
        os.environ["KRB5_CONFIG"] = config.krb5_conf
    if config.keytab and not os.path.isfile(config.keytab):
        raise KerberosError(f"keytab {config.keytab} does not exist (kerberos keytab)")
    store: dict[str, str] = {}
    if config.keytab:
        store = {"client_keytab": config.keytab, "ccache": f"MEMORY:corral-{os.getpid()}-{id(config)}"}
    elif config.ccache:
        store = {"ccache": config.ccache}
    name = gssapi.Name(config.principal, gssapi.NameType.kerberos_principal) if config.principal else None
    try:
        creds = gssapi.Credentials(name=name, usage="initiate", store=store or None)
        log.info("Kerberos: authenticating as %s", creds.name)
        return creds
    except gssapi.exceptions.GSSError as exc:
        raise KerberosError(explain(exc, "obtain Kerberos credentials", config)) from None


def explain(exc: gssapi.exceptions.GSSError, what: str, config: KerberosConfig) -> str:
    """One sentence: what failed, as whom, GSSAPI's words, and the likely cause."""
    message = " ".join(exc.gen_message().split())
    hint = next((h for key, h in HINTS if key in message.lower()), "see the KDC's log and the krb5.conf in use")
    source = f"keytab {config.keytab}" if config.keytab else f"ticket cache {config.ccache or os.environ.get('KRB5CCNAME', '(default)')}"
    return f"could not {what} as {config.principal or 'the default principal'} ({source}): {hint} [GSSAPI: {message}]"


def _server_token(response: requests.Response) -> bytes | None:
    match = re.search(r"Negotiate\s+([A-Za-z0-9+/=]+)", response.headers.get("www-authenticate", ""), re.IGNORECASE)
    return base64.b64decode(match.group(1)) if match else None


def hdfs_token(url_string: str) -> tuple[str, str]:
    """A WebHDFS delegation token (its ``urlString``) as the ``(alias, token)`` a YARN launch context
    carries: kind ``HDFS_DELEGATION_TOKEN``, alias its service (the NameNode's ``ip:port``), as
    ``DistributedFileSystem.addDelegationTokens`` stores it."""
    try:
        raw = base64.urlsafe_b64decode(url_string + "=" * (-len(url_string) % 4))
        fields, _ = _read_fields(raw, 4)  # Token.write: identifier, password, kind, service
    except (ValueError, IndexError) as exc:
        raise MalformedResponseError(f"NameNode sent a delegation token that is not a Hadoop Token: {exc}") from None
    identifier, password, _kind, service = fields
    encoded = b"".join(_vint(len(f)) + f for f in (identifier, password, HDFS_TOKEN_KIND, service))
    return service.decode(), base64.urlsafe_b64encode(encoded).decode().rstrip("=")


def _read_fields(raw: bytes, count: int) -> tuple[list[bytes], int]:
    """``count`` length-prefixed byte strings (Hadoop's vint + bytes) from the start of ``raw``."""
    fields, pos = [], 0
    for _ in range(count):
        length, pos = _read_vint(raw, pos)
        if length < 0 or pos + length > len(raw):
            raise ValueError(f"field of {length} bytes at {pos} overruns {len(raw)} bytes")
        fields.append(raw[pos:pos + length])
        pos += length
    return fields, pos


def _read_vint(raw: bytes, pos: int) -> tuple[int, int]:
    """``WritableUtils.readVLong``: one byte for -112..127, else a length byte and big-endian bytes."""
    first = int.from_bytes(raw[pos:pos + 1], "big", signed=True)
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    value = int.from_bytes(raw[pos + 1:pos + size], "big")
    return (~value if negative else value), pos + size


def _vint(value: int) -> bytes:
    """``WritableUtils.writeVLong`` for a non-negative length."""
    if value <= 127:
        return value.to_bytes(1, "big", signed=True)
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return (-112 - len(body)).to_bytes(1, "big", signed=True) + body

