"""A node-to-node TCP stream between two worker addresses, to measure what the testbed's shaping holds.

Run inside the testbed's namespace (``python -m corral_yarn.testbed.probe SRC DST``); prints one JSON
line ``{"src": ..., "dst": ..., "bytes": ..., "seconds": ..., "mbit_s": ...}`` measured at the receiver.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time

CHUNK = 64 * 1024


def stream(src: str, dst: str, seconds: float = 2.0) -> dict[str, float | str]:
    """Sends from ``src`` to ``dst`` for ``seconds``; returns the bytes and rate the receiver saw."""
    server = socket.create_server((dst, 0))
    received: dict[str, float] = {}
    receiver = threading.Thread(target=_receive, args=(server, received), daemon=True)
    receiver.start()
    with socket.create_connection(server.getsockname()[:2], source_address=(src, 0)) as client:
        payload = b"\0" * CHUNK
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            client.sendall(payload)
    receiver.join(timeout=seconds * 20 + 30)
    server.close()
    elapsed = received["end"] - received["start"]
    return {"src": src, "dst": dst, "bytes": received["bytes"], "seconds": round(elapsed, 3),
            "mbit_s": round(received["bytes"] * 8 / elapsed / 1e6, 2)}


def _receive(server: socket.socket, out: dict[str, float]) -> None:
    connection, _ = server.accept()
    total, start = 0, time.monotonic()
    with connection:
        while chunk := connection.recv(1 << 20):
            total += len(chunk)
    out.update(bytes=total, start=start, end=time.monotonic())


def main(argv: list[str]) -> int:
    src, dst, *rest = argv
    print(json.dumps(stream(src, dst, float(rest[0]) if rest else 2.0)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
