"""WebHDFS with a chosen writer: HdfsCLI's public client for the file operations, Hadoop's WebHDFS REST
API for what HdfsCLI lacks, and every failure as one of the project's ClusterErrors.

A WebHDFS ``CREATE`` (or ``APPEND``) is two steps: the NameNode answers 307 with the address of a
DataNode, and the data goes there; that DataNode's WebHDFS handler writes it with its own DFSClient,
so the NameNode sees *that DataNode* as the writer (Hadoop's ``WebHdfsHandler.onCreate``). Sending
the second step to a DataNode of R_j instead of the one the NameNode proposed therefore makes the
placement policy (java_patch ``CorralBlockPlacementPolicy``) keep the first replica in R_j
(thesis §4.1). The redirect URL keeps every parameter the NameNode set; only host and port change.

Every request goes through sessions of the one retry policy (:class:`~corral_yarn.cluster.rest.Retry`):
HdfsCLI is given one (its documented ``session`` argument) that retries only connections that could
not be made, since file data is streamed and cannot be sent twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit, urlunsplit

import requests
from hdfs import Client, HdfsError, InsecureClient

from corral_yarn.cluster.errors import ClusterError, DataNodeWriteError, MalformedResponseError, RemoteError, UnreachableError
from corral_yarn.cluster.rest import RestClient, Retry

log = logging.getLogger(__name__)
T = TypeVar("T")
API = "/webhdfs/v1"
EXISTS = ("FileAlreadyExistsException", "AlreadyBeingCreatedException")  # what a CREATE with overwrite=false gets on an existing path


@dataclass(frozen=True)
class BlockLocation:
    """One block of a file and the racks of its replicas (from ``topologyPaths``: /rack/host:port)."""

    offset: int
    length: int
    hosts: tuple[str, ...]
    racks: tuple[str, ...]


class WebHdfs:
    """The file operations of one NameNode's WebHDFS, e.g. ``WebHdfs("http://nn:9870", user="hdfs")``."""

    def __init__(self, url: str, user: str | None = None, timeout_s: float = 30.0, retry: Retry = Retry()) -> None:
        self.namenode = RestClient("NameNode", url, timeout_s=timeout_s, retry=retry, user=user)
        self.datanodes = RestClient("DataNode", "", timeout_s=timeout_s, retry=retry, user=user, resend=False)
        session = retry.session(user, resend=False)
        # on a secure cluster the session authenticates (SPNEGO); HdfsCLI's InsecureClient would add user.name
        self.client = Client(url, timeout=timeout_s, session=session) if retry.kerberos else \
            InsecureClient(url, user=user, timeout=timeout_s, session=session)

    @property
    def secure(self) -> bool:
        """Whether requests authenticate with Kerberos (a secure cluster)."""
        return self.namenode.retry.kerberos is not None

    def status(self, hdfs_path: str, strict: bool = True) -> dict[str, Any] | None:
        """The FileStatus of a path; None for a missing one unless ``strict``."""
        return _sealed(f"status of {hdfs_path}", self.client.status, hdfs_path, strict=strict)

    def list(self, hdfs_path: str, status: bool = False) -> list[Any]:
        """Names in a directory, or (name, FileStatus) pairs with ``status``."""
        return _sealed(f"list {hdfs_path}", self.client.list, hdfs_path, status=status)

    def delete(self, hdfs_path: str, recursive: bool = False) -> bool:
        return _sealed(f"delete {hdfs_path}", self.client.delete, hdfs_path, recursive=recursive)

    def makedirs(self, hdfs_path: str, permission: str | None = None) -> None:
        _sealed(f"create the directory {hdfs_path}", self.client.makedirs, hdfs_path, permission=permission)

    def rename(self, hdfs_src_path: str, hdfs_dst_path: str) -> None:
        _sealed(f"rename {hdfs_src_path} to {hdfs_dst_path}", self.client.rename, hdfs_src_path, hdfs_dst_path)

    def write(self, hdfs_path: str, data: Any, **options: Any) -> None:
        """Write ``data`` (bytes, str or an iterable of bytes) to a file; options as HdfsCLI's ``write``."""
        _sealed(f"write {hdfs_path}", self.client.write, hdfs_path, data, **options)

    def upload(self, hdfs_path: str, local_path: str, **options: Any) -> str:
        """Upload a local file or directory with HDFS's own placement; options as HdfsCLI's ``upload``."""
        return _sealed(f"upload {local_path} to {hdfs_path}", self.client.upload, hdfs_path, local_path, **options)

    @contextmanager
    def read(self, hdfs_path: str, **options: Any) -> Iterator[Any]:
        """A reader of a file (``with hdfs.read(path, encoding="utf-8") as f``); options as HdfsCLI's ``read``."""
        try:
            with self.client.read(hdfs_path, **options) as reader:
                yield reader
        except (HdfsError, requests.RequestException) as exc:
            raise _cluster_error(exc, f"read {hdfs_path}") from None

    def create_exclusive(self, hdfs_path: str, data: bytes) -> bool:
        """Create ``hdfs_path`` holding ``data`` unless it exists: True if this call created it. Atomic at the
        NameNode (a CREATE with overwrite=false: of two writers, the second is refused, with
        FileAlreadyExistsException, or AlreadyBeingCreatedException while the first still writes it)."""
        return _sealed(f"create {hdfs_path}", self._written, hdfs_path, data, overwrite=False, refused=EXISTS, instead=False)

    def replace(self, hdfs_path: str, data: bytes) -> bool:
        """Create or overwrite ``hdfs_path`` with ``data`` in one NameNode operation (CREATE with overwrite=true: the
        path is never absent); False if another writer is creating it at this moment (AlreadyBeingCreatedException)."""
        return _sealed(f"overwrite {hdfs_path}", self._written, hdfs_path, data, overwrite=True,
                       refused=("AlreadyBeingCreatedException",), instead=False)

    def _written(self, hdfs_path: str, data: bytes, overwrite: bool) -> bool:
        self.client.write(hdfs_path, data, overwrite=overwrite)
        return True

    def read_with_id(self, hdfs_path: str) -> tuple[int, int, bytes] | None:
        """A small file's inode id, modification time (ms) and content, read through its inode so that all
        three are of the same file; None if it does not exist."""
        status = self.status(hdfs_path, strict=False)
        if status is None:
            return None
        content = _sealed(f"read {hdfs_path}", self._content, _inode_path(int(status["fileId"])),
                          refused=("FileNotFoundException",), instead=None)  # not found: replaced or deleted since its status was read
        return None if content is None else (int(status["fileId"]), int(status["modificationTime"]), content)

    def _content(self, hdfs_path: str) -> bytes:
        with self.client.read(hdfs_path) as reader:
            return bytes(reader.read())

    def delete_id(self, file_id: int) -> bool:
        """Delete exactly the file with this inode id (``/.reserved/.inodes/<id>``): False if it is gone, so a
        file replaced since it was read is never deleted by mistake."""
        return bool(_sealed(f"delete inode {file_id}", self.client.delete, _inode_path(file_id), refused=("FileNotFoundException",), instead=False))

    def delegation_token(self, renewer: str) -> str:
        """A delegation token of the NameNode (its ``urlString``) that ``renewer`` may renew (needs Kerberos)."""
        body = self.namenode.request("GET", f"{API}/", params={"op": "GETDELEGATIONTOKEN", "renewer": renewer})
        try:
            return str(body["Token"]["urlString"])
        except (KeyError, TypeError) as exc:
            raise MalformedResponseError(f"NameNode GETDELEGATIONTOKEN lacks {exc}") from None

    def block_size(self) -> int:
        """The NameNode's default block size (``dfs.blocksize``), from ``GETSERVERDEFAULTS``."""
        body = self.namenode.request("GET", f"{API}/", params={"op": "GETSERVERDEFAULTS"})
        try:
            return int(body["FsServerDefaults"]["blockSize"])
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedResponseError(f"NameNode GETSERVERDEFAULTS lacks {exc}") from None

    def block_locations(self, hdfs_path: str) -> list[BlockLocation]:
        """The blocks of a file with the racks holding their replicas (Hadoop 3.3+ WebHDFS)."""
        body = self.namenode.request("GET", f"{API}{quote(hdfs_path)}", params={"op": "GETFILEBLOCKLOCATIONS"})
        try:
            blocks = body["BlockLocations"]["BlockLocation"]
            return [BlockLocation(offset=int(b["offset"]), length=int(b["length"]), hosts=tuple(b["hosts"]),
                                  racks=tuple(p.rsplit("/", 1)[0] or "/" for p in b["topologyPaths"])) for b in blocks]
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedResponseError(f"NameNode GETFILEBLOCKLOCATIONS for {hdfs_path} lacks {exc}") from None

    def create_through(self, hdfs_path: str, data: Iterable[bytes], datanode_http: str | None,
                       blocksize: int | None = None, replication: int | None = None, overwrite: bool = False) -> None:
        """Create ``hdfs_path`` with ``data``, written through ``datanode_http`` (host:port); None = as the NameNode chooses."""
        options = {"blocksize": blocksize, "replication": replication}
        params = {"op": "CREATE", "overwrite": str(overwrite).lower(), **{k: str(v) for k, v in options.items() if v}}
        self._send_to_datanode("PUT", self.namenode.location("PUT", f"{API}{quote(hdfs_path)}", params), data, datanode_http)

    def append_through(self, hdfs_path: str, data: Iterable[bytes], datanode_http: str | None) -> None:
        """Append ``data`` to ``hdfs_path`` through ``datanode_http``; at a block boundary this starts a new block."""
        self._send_to_datanode("POST", self.namenode.location("POST", f"{API}{quote(hdfs_path)}", {"op": "APPEND"}), data, datanode_http)

    def _send_to_datanode(self, method: str, location: str, data: Iterable[bytes], datanode_http: str | None) -> None:
        url = location if datanode_http is None else _with_netloc(location, datanode_http)
        try:
            self.datanodes.send(method, url, data=data)
        except RemoteError as exc:
            raise DataNodeWriteError(urlsplit(url).netloc, RemoteError(f"DataNode {urlsplit(url).netloc}", exc.status,
                                                                       exc.remote_message, exc.exception)) from None
        except ClusterError as exc:
            raise DataNodeWriteError(urlsplit(url).netloc, exc) from None


def _inode_path(file_id: int) -> str:
    """The NameNode's path of an inode by its id (``fileId`` in a FileStatus)."""
    return f"/.reserved/.inodes/{file_id}"


def _with_netloc(url: str, netloc: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _sealed(what: str, call: Callable[..., T], *args: Any, refused: Iterable[str] = (), instead: Any = None, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` with HdfsCLI's and requests' errors as the project's; ``instead`` when the
    NameNode refuses it with one of the Hadoop exceptions ``refused`` (an expected outcome, not an error)."""
    try:
        return call(*args, **kwargs)
    except HdfsError as exc:
        if getattr(exc, "exception", None) in refused:
            return instead  # type: ignore[no-any-return]
        raise _cluster_error(exc, what) from None
    except requests.RequestException as exc:
        raise _cluster_error(exc, what) from None


def _cluster_error(exc: HdfsError | requests.RequestException, what: str) -> ClusterError:
    """An HdfsCLI error as a RemoteError (HdfsCLI keeps Hadoop's exception name); no connection as UnreachableError."""
    if isinstance(exc, HdfsError):
        return RemoteError("NameNode", None, f"{what}: {exc.message}", getattr(exc, "exception", None))
    if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        return UnreachableError(f"cannot reach HDFS to {what}: {exc}")
    return ClusterError(f"HDFS: could not {what}: {exc}")
