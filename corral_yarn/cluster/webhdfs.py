"""WebHDFS with a chosen writer: HdfsCLI's client, plus writes sent through a DataNode we pick.

A WebHDFS ``CREATE`` (or ``APPEND``) is two steps: the NameNode answers 307 with the address of a
DataNode, and the data goes there; that DataNode's WebHDFS handler writes it with its own DFSClient,
so the NameNode sees *that DataNode* as the writer (Hadoop's ``WebHdfsHandler.onCreate``). Sending
the second step to a DataNode of R_j instead of the one the NameNode proposed therefore makes the
placement policy (java_patch ``CorralBlockPlacementPolicy``) keep the first replica in R_j
(thesis §4.1). The redirect URL keeps every parameter the NameNode set; only host and port change.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hdfs import HdfsError, InsecureClient
from hdfs.client import _Request  # HdfsCLI's declarative endpoint table; an op is one line

from corral_yarn.cluster.errors import MalformedResponseError, RemoteError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BlockLocation:
    """One block of a file and the racks of its replicas (from ``topologyPaths``: /rack/host:port)."""

    offset: int
    length: int
    hosts: tuple[str, ...]
    racks: tuple[str, ...]


class WebHdfs(InsecureClient):
    """HdfsCLI's InsecureClient with ``GETFILEBLOCKLOCATIONS`` and writes through a chosen DataNode."""

    _get_file_block_locations = _Request("GET")
    _get_server_defaults = _Request("GET")

    def block_size(self) -> int:
        """The NameNode's default block size (``dfs.blocksize``), from ``GETSERVERDEFAULTS``."""
        body = self._get_server_defaults("/").json()
        try:
            return int(body["FsServerDefaults"]["blockSize"])
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedResponseError(f"NameNode GETSERVERDEFAULTS lacks {exc}") from None

    def block_locations(self, hdfs_path: str) -> list[BlockLocation]:
        """The blocks of a file with the racks holding their replicas (Hadoop 3.3+ WebHDFS)."""
        body = self._get_file_block_locations(hdfs_path).json()
        try:
            blocks = body["BlockLocations"]["BlockLocation"]
            return [BlockLocation(offset=int(b["offset"]), length=int(b["length"]), hosts=tuple(b["hosts"]),
                                  racks=tuple(p.rsplit("/", 1)[0] or "/" for p in b["topologyPaths"])) for b in blocks]
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedResponseError(f"NameNode GETFILEBLOCKLOCATIONS for {hdfs_path} lacks {exc}") from None

    def create_through(self, hdfs_path: str, data: Iterable[bytes], datanode_http: str | None,
                       blocksize: int | None = None, replication: int | None = None, overwrite: bool = False) -> None:
        """Create ``hdfs_path`` with ``data``, written through ``datanode_http`` (host:port); None = as the NameNode chooses."""
        redirect = self._create(hdfs_path, overwrite=overwrite, blocksize=blocksize, replication=replication)
        self._send_to_datanode("PUT", redirect, data, datanode_http)

    def append_through(self, hdfs_path: str, data: Iterable[bytes], datanode_http: str | None) -> None:
        """Append ``data`` to ``hdfs_path`` through ``datanode_http``; at a block boundary this starts a new block."""
        redirect = self._append(hdfs_path)
        self._send_to_datanode("POST", redirect, data, datanode_http)

    def _send_to_datanode(self, method: str, redirect: Any, data: Iterable[bytes], datanode_http: str | None) -> None:
        location = redirect.headers.get("location")
        if not location:
            raise MalformedResponseError(f"NameNode answered HTTP {redirect.status_code} without a DataNode location")
        url = location if datanode_http is None else _with_netloc(location, datanode_http)
        response = self._request(method=method, url=url, data=data)
        if not response.ok:
            raise _datanode_error(response, url)


def _with_netloc(url: str, netloc: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _datanode_error(response: Any, url: str) -> RemoteError:
    try:
        remote = response.json()["RemoteException"]
        return RemoteError(f"DataNode {urlsplit(url).netloc}", response.status_code, remote.get("message", ""), remote.get("exception"))
    except (ValueError, KeyError, TypeError):
        return RemoteError(f"DataNode {urlsplit(url).netloc}", response.status_code, response.text[:200] or response.reason)


def hdfs_error(exc: HdfsError, what: str) -> RemoteError:
    """An HdfsCLI error as the project's RemoteError (HdfsCLI keeps Hadoop's exception name)."""
    return RemoteError("NameNode", None, f"{what}: {exc.message}", getattr(exc, "exception", None))
