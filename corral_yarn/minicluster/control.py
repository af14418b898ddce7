"""Client of the embedded cluster's control channel (java_patch's ``ControlServer``; docs/minicluster.md).

One TCP connection per command: send ``COMMAND [ARG...]`` as one line, read one line back, ``ok[ detail]``
or ``error: reason``. Fault-injection tests use it to stop and start a worker's DataNode or NodeManager in
a live cluster (``stop-datanode HOST``, ``start-nodemanager HOST``, ...; HOST is a worker's address as in
the description).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from typing import Any

from corral_yarn.errors import InputError
from corral_yarn.minicluster.launcher import MiniClusterError

LOG = logging.getLogger(__name__)

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
MAX_REPLY = 64 * 1024
# a start waits for the daemon to register; the server's own bound is the cluster's start timeout (240 s)
DEFAULT_TIMEOUT_S = 300.0


def control_address(description: dict[str, Any]) -> tuple[str, int]:
    """``(host, port)`` of the control channel named by a cluster description; only a loopback address."""
    try:
        host, port = str(description["control"]["address"]).rsplit(":", 1)
        address = (host, int(port))
    except (KeyError, TypeError, ValueError):
        raise InputError("the cluster description has no control channel (expected host:port); "
                         "was the cluster started by this version of java_patch?", field="control.address") from None
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback or not 0 < address[1] < 65536:
        raise InputError(f"{host}:{port} is not a loopback host:port", field="control.address")
    return address


def control(description: dict[str, Any], command: str, *args: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """Runs one command on the cluster's control channel; returns the detail of its ``ok`` reply.

    Raises InputError for a malformed command or argument (nothing is sent), MiniClusterError if the
    channel cannot be reached or the cluster answers ``error: ...``.
    """
    for name, word in [("command", command), *((f"args[{i}]", a) for i, a in enumerate(args))]:
        if not isinstance(word, str) or not WORD.fullmatch(word):
            raise InputError(f"{word!r} is not one word of letters, digits and . _ : / -", field=name)
    address = control_address(description)
    line = " ".join([command, *args])
    LOG.info("control %s:%d: %s", *address, line)
    reply = _exchange(address, line, timeout_s)
    if reply == "ok" or reply.startswith("ok "):
        return reply[3:]
    if reply.startswith("error: "):
        raise MiniClusterError(f"cluster refused '{line}': {reply[len('error: '):]}")
    raise MiniClusterError(f"cluster answered '{line}' with {reply[:200]!r}, neither ok nor error")


def _exchange(address: tuple[str, int], line: str, timeout_s: float) -> str:
    try:
        with socket.create_connection(address, timeout=timeout_s) as conn:
            conn.sendall(line.encode("ascii") + b"\n")
            conn.shutdown(socket.SHUT_WR)
            received = b""
            while b"\n" not in received and len(received) < MAX_REPLY:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                received += chunk
    except OSError as e:
        raise MiniClusterError(f"control channel {address[0]}:{address[1]} did not answer '{line}': {e}") from e
    if b"\n" not in received:
        raise MiniClusterError(f"control channel {address[0]}:{address[1]} closed without a reply line to '{line}'")
    return received.split(b"\n", 1)[0].decode("utf-8", errors="replace").rstrip("\r")
