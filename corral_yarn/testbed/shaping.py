"""The testbed's emulated two-tier network as ``tc`` commands (pure; docs/testbed.md).

Every worker of the embedded cluster is a loopback address, node n of rack r at 127.0.(100+r).(10+n)
(docs/minicluster.md). Inside the testbed's private network namespace all of them share ``lo``; this
module shapes that ``lo`` like the thesis testbed (§4.5.1): each rack has an uplink into the core and a
downlink out of it of (nodes in rack x node rate) / O, and each node's share of them is capped at its
NIC rate. Traffic between two nodes of one rack never touches the core and is held only to the NIC rate.

- Egress of ``lo`` (the sending side): HTB class ``uplink`` per rack, with one leaf per (source node,
  destination rack) under it, and one ``in-rack`` leaf per source node.
- Ingress of ``lo``, redirected to an IFB device (the receiving side): HTB class ``downlink`` per rack,
  with one leaf per (destination node, source rack) under it, and one ``in-rack`` leaf per destination node.

A cross-rack packet is thus held by its source rack's uplink and its destination rack's downlink. Traffic
to or from the masters (127.0.0.1: NameNode, ResourceManager, JobHistory, clients) is not classified and
not shaped.
"""

from __future__ import annotations

from dataclasses import dataclass

from corral_yarn.errors import InputError

IFB_DEVICE = "corral-ifb0"
LOOPBACK = "lo"
RACK_BLOCK_BASE = 100  # rack r is 127.0.(100+r).0/24
NODE_HOST_BASE = 10  # node n of a rack is .(10+n)
MAX_RACKS = 26
MAX_NODES_PER_RACK = 40
UPLINK_MINOR = 0x100  # 1:(0x100 + rack)
CROSS_LEAF_MINOR = 0x1000  # 1:(0x1000 + node index x racks + other rack)
IN_RACK_MINOR = 0x4000  # 1:(0x4000 + node index)
NODE_LOCAL_MINOR = 0x3FFF  # a node talking to itself: no NIC crossed
NODE_LOCAL_MBIT_S = 100_000.0
LEAF_QUANTUM = 65536  # lo sends 64 KiB segments


class ShapingError(InputError):
    """The testbed's network settings are out of range."""


@dataclass(frozen=True)
class Network:
    """An emulated datacenter network: K racks x M nodes, NIC rate, core oversubscription O."""

    racks: int = 3
    nodes_per_rack: int = 2
    node_mbit_s: float = 100.0
    oversubscription: float = 5.0

    def __post_init__(self) -> None:
        if not 2 <= self.racks <= MAX_RACKS:
            raise ShapingError(f"racks: must be in 2..{MAX_RACKS} (got {self.racks})")
        if not 1 <= self.nodes_per_rack <= MAX_NODES_PER_RACK:
            raise ShapingError(f"nodes_per_rack: must be in 1..{MAX_NODES_PER_RACK} (got {self.nodes_per_rack})")
        if not 1.0 <= self.node_mbit_s <= 10_000.0:
            raise ShapingError(f"node_mbit_s: must be in 1..10000 Mbit/s (got {self.node_mbit_s})")
        if not 1.0 <= self.oversubscription <= 100.0:
            raise ShapingError(f"oversubscription: must be in 1..100 (got {self.oversubscription})")

    @property
    def uplink_mbit_s(self) -> float:
        """A rack's uplink (and downlink) to the core: nodes x node rate / O (thesis §4.5.1)."""
        return self.nodes_per_rack * self.node_mbit_s / self.oversubscription

    def rack_name(self, rack: int) -> str:
        """The rack's topology path, as the embedded cluster names it (ClusterLayout.rackName)."""
        return f"/rack-{chr(ord('a') + rack)}"  # at most MAX_RACKS = 26

    def rack_of(self) -> dict[str, str]:
        """Each worker address's rack path."""
        return {address: self.rack_name(rack) for _, rack, address in self.nodes()}

    def rack_block(self, rack: int) -> str:
        return f"127.0.{RACK_BLOCK_BASE + rack}.0/24"

    def host(self, rack: int, node: int) -> str:
        return f"127.0.{RACK_BLOCK_BASE + rack}.{NODE_HOST_BASE + node}"

    def nodes(self) -> list[tuple[int, int, str]]:
        """(index, rack, address) of every worker, in the minicluster's order."""
        return [
            (rack * self.nodes_per_rack + node, rack, self.host(rack, node))
            for rack in range(self.racks)
            for node in range(self.nodes_per_rack)
        ]

    def cross_leaf(self, node_index: int, other_rack: int) -> int:
        return CROSS_LEAF_MINOR + node_index * self.racks + other_rack


def _rate(mbit_s: float) -> str:
    return f"{round(mbit_s * 1000)}kbit"


def _htb_root(device: str) -> list[list[str]]:
    # default 0: unclassified packets (masters, clients) pass unshaped.
    return [["tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "0"]]


def _class(device: str, parent: str, minor: int, rate: float, ceil: float) -> list[str]:
    return [
        "tc", "class", "add", "dev", device, "parent", parent, "classid", f"1:{minor:x}", "htb",
        "rate", _rate(rate), "ceil", _rate(ceil), "quantum", str(LEAF_QUANTUM),
    ]  # fmt: skip


def _filter(device: str, local: str, remote: str, minor: int, egress: bool, prio: int = 2) -> list[str]:
    # On the sending side the node is the source; on the receiving side it is the destination.
    own, other = ("src", "dst") if egress else ("dst", "src")
    return [
        "tc", "filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", str(prio), "u32",
        "match", "ip", own, f"{local}/32", "match", "ip", other, remote, "flowid", f"1:{minor:x}",
    ]  # fmt: skip


def _side(net: Network, device: str, egress: bool) -> list[list[str]]:
    """One direction: uplinks (egress) or downlinks (ingress) per rack, node leaves, in-rack leaves."""
    commands = _htb_root(device)
    commands.append(_class(device, "1:", NODE_LOCAL_MINOR, NODE_LOCAL_MBIT_S, NODE_LOCAL_MBIT_S))
    uplink, others = net.uplink_mbit_s, max(net.racks - 1, 1)
    for rack in range(net.racks):
        commands.append(_class(device, "1:", UPLINK_MINOR + rack, uplink, uplink))
    for index, rack, host in net.nodes():
        commands.append(_filter(device, host, f"{host}/32", NODE_LOCAL_MINOR, egress, prio=1))  # first
        for other in range(net.racks):
            if other == rack:
                continue
            minor = net.cross_leaf(index, other)
            share = uplink / (net.nodes_per_rack * others)
            commands.append(_class(device, f"1:{UPLINK_MINOR + rack:x}", minor, share, min(net.node_mbit_s, uplink)))
            commands.append(_filter(device, host, net.rack_block(other), minor, egress))
        commands.append(_class(device, "1:", IN_RACK_MINOR + index, net.node_mbit_s, net.node_mbit_s))
        commands.append(_filter(device, host, net.rack_block(rack), IN_RACK_MINOR + index, egress))
    return commands


def link_commands() -> list[list[str]]:
    """The devices the shaping needs in a fresh namespace: ``lo`` up, and the IFB for the receiving side."""
    return [
        ["ip", "link", "set", LOOPBACK, "up"],
        ["ip", "link", "add", IFB_DEVICE, "type", "ifb"],
        ["ip", "link", "set", IFB_DEVICE, "up"],
    ]


def shaping_commands(net: Network) -> list[list[str]]:
    """Every qdisc, class and filter of the shaping (run inside the namespace, in order)."""
    return [
        *_side(net, LOOPBACK, egress=True),
        ["tc", "qdisc", "add", "dev", LOOPBACK, "handle", "ffff:", "ingress"],
        [
            "tc", "filter", "add", "dev", LOOPBACK, "parent", "ffff:", "protocol", "ip", "prio", "1", "u32",
            "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", IFB_DEVICE,
        ],  # fmt: skip
        *_side(net, IFB_DEVICE, egress=False),
    ]


def unshaping_commands() -> list[list[str]]:
    """Removes the shaping (the devices stay); counters start again from 0 when it is re-added."""
    return [
        ["tc", "qdisc", "del", "dev", LOOPBACK, "root"],
        ["tc", "qdisc", "del", "dev", LOOPBACK, "ingress"],
        ["tc", "qdisc", "del", "dev", IFB_DEVICE, "root"],
    ]


def tc_commands(net: Network) -> list[list[str]]:
    """Every command that shapes a fresh namespace's ``lo``."""
    return [*link_commands(), *shaping_commands(net)]


def link_of_class(net: Network, minor: int) -> tuple[str, int, int] | None:
    """What an HTB leaf counts: ("cross", source rack, destination rack) or ("in-rack", rack, rack).

    ``minor`` is a leaf of the egress (lo) side, where the node is the sender.
    """
    if IN_RACK_MINOR <= minor < IN_RACK_MINOR + net.racks * net.nodes_per_rack:
        rack = (minor - IN_RACK_MINOR) // net.nodes_per_rack
        return ("in-rack", rack, rack)
    offset = minor - CROSS_LEAF_MINOR
    if 0 <= offset < net.racks * net.nodes_per_rack * net.racks:
        index, other = divmod(offset, net.racks)
        return ("cross", index // net.nodes_per_rack, other)
    return None
