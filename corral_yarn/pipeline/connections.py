"""Hadoop endpoints as Airflow Connections, and those Connections from a cluster description JSON.

The DAGs never hard-code an address: they read three Connections (conn type ``http``):

* ``corral_webhdfs``: the NameNode's HTTP address (WebHDFS and JMX);
* ``corral_resourcemanager``: the ResourceManager's web address (REST API);
* ``corral_jobhistory``: the MapReduce JobHistory server's web address.

When the ResourceManager checks planner grants (docs/deploy.md, "Grant secret"), the secret is the
``corral_resourcemanager`` Connection's password, or a file named by its extra ``grant_secret_file``.

On a secure (Kerberized) cluster the ``corral_resourcemanager`` Connection's extras name the identity
every request authenticates as (docs/deploy.md, "Kerberos"): ``kerberos_principal`` with
``kerberos_keytab``, or ``kerberos_ccache`` (a ticket cache kept by kinit), and optionally ``krb5_conf``.

``connection_env`` turns the embedded cluster's description (docs/minicluster.md) into the
``AIRFLOW_CONN_*`` environment variables that define them; ``corral airflow-connections`` prints
them as ``export`` lines.
"""

from __future__ import annotations

import json
from typing import Any, Protocol
from urllib.parse import urlsplit

from corral_yarn.cluster import Cluster, Endpoints
from corral_yarn.cluster.grants import SECRET_FILE_FIELD, secret_of
from corral_yarn.cluster.kerberos import KerberosConfig
from corral_yarn.errors import InputError
from corral_yarn.io import parse

WEBHDFS = "corral_webhdfs"
RESOURCEMANAGER = "corral_resourcemanager"
JOBHISTORY = "corral_jobhistory"
CONNECTIONS = {WEBHDFS: "webhdfs", RESOURCEMANAGER: "resourcemanager", JOBHISTORY: "jobhistory"}
KERBEROS_EXTRAS = {"kerberos_principal": "principal", "kerberos_keytab": "keytab", "kerberos_ccache": "ccache", "krb5_conf": "krb5_conf"}


class ConnectionLike(Protocol):
    """What we read of an Airflow Connection."""

    host: str | None
    port: int | None
    password: str | None
    extra_dejson: dict[str, Any]


def connection_json(url: str, extra: dict[str, str] | None = None, field: str | None = None) -> str:
    """One Connection in Airflow's JSON form, from ``http(s)://host:port`` (and more extras)."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port  # ValueError when out of range or not a number
    except ValueError:
        port = None
    if not parts.hostname or not port:
        raise InputError(f"not an http://host:port address: {url!r}", field=field)
    return json.dumps({"conn_type": "http", "host": parts.hostname, "port": parts.port, "extra": {"scheme": parts.scheme, **(extra or {})}})


def connection_env(description: dict[str, Any], source: str = "cluster description") -> dict[str, str]:
    """``AIRFLOW_CONN_<ID>`` variables for the three Connections of a cluster description (``source`` names it in errors)."""
    endpoints = parse(Endpoints, description, source)
    missing = [key for key in CONNECTIONS.values() if not getattr(endpoints, key)]
    if missing:
        raise InputError(f"has no {', '.join(missing)} address", field=source)
    secret = {SECRET_FILE_FIELD: endpoints.grant_secret_file} if endpoints.grant_secret_file else {}
    kerberos = endpoints.kerberos.model_dump(exclude_none=True) if endpoints.kerberos else {}
    rm_extra = secret | {extra: kerberos[field] for extra, field in KERBEROS_EXTRAS.items() if field in kerberos}
    return {f"AIRFLOW_CONN_{conn_id.upper()}": connection_json(getattr(endpoints, key), rm_extra if conn_id == RESOURCEMANAGER else None,
                                                               field=f"{source}: {key}")
            for conn_id, key in CONNECTIONS.items()}


def connection_url(conn: ConnectionLike, conn_id: str) -> str:
    """``scheme://host:port`` of a Connection (scheme from the extra ``scheme``, default http)."""
    host = conn.host or ""
    if "://" in host:  # a host given as a whole URL
        return host.rstrip("/") + (f":{conn.port}" if conn.port and urlsplit(host).port is None else "")
    if not host:
        raise InputError(f"Airflow connection {conn_id!r} has no host")
    scheme = (conn.extra_dejson or {}).get("scheme", "http")
    return f"{scheme}://{host}" + (f":{conn.port}" if conn.port else "")


def endpoints_from(connections: dict[str, ConnectionLike]) -> Endpoints:
    """The cluster's endpoints from the three Connections, by conn id (and the RM's grant secret file and
    Kerberos identity, if any)."""
    extra = connections[RESOURCEMANAGER].extra_dejson or {}
    return Endpoints(**{key: connection_url(connections[conn_id], conn_id) for conn_id, key in CONNECTIONS.items()},
                     grant_secret_file=extra.get(SECRET_FILE_FIELD), kerberos=kerberos_from(extra))


def kerberos_from(extra: dict[str, Any]) -> KerberosConfig | None:
    """The Kerberos identity a Connection's extras name (``kerberos_principal``, ``kerberos_keytab``,
    ``kerberos_ccache``, ``krb5_conf``); None when they name none (an insecure cluster)."""
    given = {field: str(extra[key]) for key, field in KERBEROS_EXTRAS.items() if extra.get(key)}
    return parse(KerberosConfig, given, source=f"Airflow connection {RESOURCEMANAGER!r} extras") if given else None


def grant_secret_from(connections: dict[str, ConnectionLike]) -> bytes | None:
    """The grant secret held as the ResourceManager Connection's password, or None."""
    return secret_of(connections[RESOURCEMANAGER].password)


def cluster_from_airflow() -> Cluster:
    """Clients of the cluster the Airflow Connections name (called inside tasks, never at parse time)."""
    from corral_yarn.airflow.hooks import CorralHook

    return CorralHook().get_conn()
