"""Bytes per rack pair from the testbed's HTB class counters (``tc -s class show dev lo``)."""

from __future__ import annotations

import re
from collections import defaultdict

from corral_yarn.testbed.shaping import UPLINK_MINOR, Network, link_of_class

_CLASS = re.compile(r"^class htb 1:([0-9a-f]+) .*?\n\s*Sent (\d+) bytes", re.MULTILINE | re.DOTALL)


def class_bytes(tc_output: str) -> dict[int, int]:
    """HTB class minor -> bytes sent, from the text ``tc -s class show`` prints."""
    return {int(minor, 16): int(sent) for minor, sent in _CLASS.findall(tc_output)}


def rack_pair_bytes(net: Network, tc_output: str) -> dict[tuple[int, int], int]:
    """(source rack, destination rack) -> bytes, from the egress (lo) leaves; in-rack pairs are (r, r)."""
    pairs: dict[tuple[int, int], int] = defaultdict(int)
    for minor, sent in class_bytes(tc_output).items():
        link = link_of_class(net, minor)
        if link is not None:
            pairs[(link[1], link[2])] += sent
    return dict(pairs)


def cross_rack_bytes(pairs: dict[tuple[int, int], int]) -> int:
    return sum(sent for (src, dst), sent in pairs.items() if src != dst)


def delta(after: dict[tuple[int, int], int], before: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    return {pair: sent - before.get(pair, 0) for pair, sent in after.items()}


def uplink_bytes(net: Network, tc_output: str) -> dict[int, int]:
    """Rack -> bytes its uplink (egress side) or downlink (IFB side) has carried so far."""
    sent = class_bytes(tc_output)
    return {rack: sent.get(UPLINK_MINOR + rack, 0) for rack in range(net.racks)}
