"""Errors of the adapters layer: every failure talking to Hadoop becomes one of these CorralErrors."""

from __future__ import annotations

from corral_yarn.errors import CorralError


class ClusterError(CorralError):
    """A Hadoop service could not do what was asked; the message says which service and why."""


class UnreachableError(ClusterError):
    """No connection to a service after the retries (wrong address, service down)."""


class MalformedResponseError(ClusterError):
    """A service answered with something that is not the JSON document its REST API documents."""


class RemoteError(ClusterError):
    """A service refused a request: HTTP 4xx/5xx, with the RemoteException it sent when there is one.

    ``exception`` is Hadoop's exception name (e.g. ``BadRequestException``), ``status`` the HTTP code.
    """

    def __init__(self, service: str, status: int | None, message: str, exception: str | None = None) -> None:
        self.service = service
        self.status = status
        self.exception = exception
        self.remote_message = message
        why = " ".join(filter(None, (f"HTTP {status}" if status else "", exception or "")))
        super().__init__(f"{service} refused the request{f' ({why})' if why else ''}: {message}")


class DataNodeWriteError(ClusterError):
    """Data sent to a DataNode's WebHDFS (CREATE or APPEND, step two) did not all arrive: the DataNode
    refused it, broke the write off, or could not be reached. ``datanode`` is its host:port."""

    def __init__(self, datanode: str, cause: ClusterError) -> None:
        self.datanode = datanode
        super().__init__(f"writing through DataNode {datanode} failed: {cause}")


class ApplicationFailedError(ClusterError):
    """A YARN application ended FAILED or KILLED; carries the RM's diagnostics."""

    def __init__(self, app_id: str, state: str, diagnostics: str) -> None:
        self.app_id = app_id
        self.state = state
        self.diagnostics = diagnostics
        super().__init__(f"application {app_id} ended {state}: {diagnostics or 'no diagnostics'}")
