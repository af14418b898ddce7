"""Probes between worker addresses, to measure what the testbed's shaping holds.

Run inside the testbed's namespace:

- ``python -m corral_yarn.testbed.probe SRC DST [SECONDS]``: a TCP stream; prints one JSON line
  ``{"src": ..., "dst": ..., "bytes": ..., "seconds": ..., "mbit_s": ...}`` measured at the receiver.
- ``python -m corral_yarn.testbed.probe --rtt ROUNDS ADDR...``: a round-trip mesh (NoMora's probe mesh,
  issue 18 item 2); prints ``{"names": [...], "latency_us": [[...], ...]}``, the median TCP handshake
  time from each address to each other one, in µs.
"""

from __future__ import annotations

import json
import socket
import statistics
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


def rtt_us(src: str, dst: str, rounds: int) -> float:
    """Median time of a TCP handshake from ``src`` to ``dst``: connect() returns once the SYN-ACK is back, one round trip."""
    with socket.create_server((dst, 0), backlog=rounds + 1) as server:  # the kernel completes handshakes unaccepted
        samples = []
        for _ in range(rounds):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
                client.bind((src, 0))
                start = time.perf_counter()
                client.connect(server.getsockname()[:2])
                samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def mesh(addresses: list[str], rounds: int) -> dict[str, object]:
    """Round trips (µs) from every address to every other one, 0 on the diagonal."""
    return {"names": addresses, "latency_us": [[0.0 if a == b else round(rtt_us(a, b, rounds), 1) for b in addresses] for a in addresses]}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--rtt"]:
        print(json.dumps(mesh(argv[2:], int(argv[1]))))
        return 0
    src, dst, *rest = argv
    print(json.dumps(stream(src, dst, float(rest[0]) if rest else 2.0)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
