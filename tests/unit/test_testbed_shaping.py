"""The testbed's shaping configuration (pure) and its counters, without a namespace."""

from __future__ import annotations

import pytest

from corral_yarn.cli import main
from corral_yarn.testbed import control
from corral_yarn.testbed.counters import class_bytes, cross_rack_bytes, rack_pair_bytes, uplink_bytes
from corral_yarn.testbed.shaping import IFB_DEVICE, Network, ShapingError, link_of_class, tc_commands

NET = Network(racks=3, nodes_per_rack=2, node_mbit_s=100.0, oversubscription=5.0)


def _classes(device: str) -> dict[str, list[str]]:
    return {c[c.index("classid") + 1]: c for c in tc_commands(NET) if c[:3] == ["tc", "class", "add"] and c[4] == device}


def _value(command: list[str], key: str) -> str:
    return command[command.index(key) + 1]


def test_uplink_is_nodes_times_node_rate_over_oversubscription() -> None:
    assert NET.uplink_mbit_s == pytest.approx(2 * 100 / 5)
    assert Network(racks=2, nodes_per_rack=30, node_mbit_s=10_000, oversubscription=5).uplink_mbit_s == 60_000


@pytest.mark.parametrize("device", ["lo", IFB_DEVICE])
def test_each_rack_has_a_link_to_the_core_at_the_uplink_rate_on_both_sides(device: str) -> None:
    classes = _classes(device)
    for rack in range(3):
        link = classes[f"1:{0x100 + rack:x}"]
        assert _value(link, "rate") == _value(link, "ceil") == "40000kbit"
    # every cross-rack leaf hangs under its rack's link and may use at most min(NIC, uplink)
    assert _value(classes["1:3fff"], "rate") == "100000000kbit"  # node-local: no NIC
    leaves = [c for c in classes.values() if _value(c, "parent") != "1:"]
    assert len(leaves) == 6 * 2  # 6 nodes x 2 other racks
    assert {_value(c, "ceil") for c in leaves} == {"40000kbit"}
    # in-rack traffic is held only by the node's NIC
    in_rack = [c for c in classes.values() if _value(c, "classid").startswith("1:40")]
    assert len(in_rack) == 6 and {_value(c, "rate") for c in in_rack} == {"100000kbit"}


def test_filters_match_node_and_other_rack_on_the_sending_side_and_the_reverse_on_the_receiving_side() -> None:
    filters = [c for c in tc_commands(NET) if c[:3] == ["tc", "filter", "add"] and "flowid" in c]
    egress = [f for f in filters if f[4] == "lo"]
    ingress = [f for f in filters if f[4] == IFB_DEVICE]
    assert len(egress) == len(ingress) == 6 * 4  # per node: itself, its rack, two other racks
    local = egress[0]  # a node with itself first, unshaped
    assert local[local.index("src") + 1] == local[local.index("dst") + 1] == "127.0.100.10/32"
    assert local[local.index("prio") + 1] == "1" and local[-1] == "1:3fff"
    first = egress[1]
    assert first[first.index("src") + 1] == "127.0.100.10/32" and first[first.index("dst") + 1] == "127.0.101.0/24"
    assert first[first.index("prio") + 1] == "2"
    first = ingress[1]
    assert first[first.index("dst") + 1] == "127.0.100.10/32" and first[first.index("src") + 1] == "127.0.101.0/24"
    redirect = next(c for c in tc_commands(NET) if "mirred" in c)
    assert redirect[redirect.index("dev", 6) + 1] == IFB_DEVICE


def test_every_leaf_maps_back_to_its_rack_pair() -> None:
    for index, rack, _ in NET.nodes():
        for other in range(3):
            if other != rack:
                assert link_of_class(NET, NET.cross_leaf(index, other)) == ("cross", rack, other)
        assert link_of_class(NET, 0x4000 + index) == ("in-rack", rack, rack)
    assert link_of_class(NET, 0x100) is None  # a rack's link is a parent, not a leaf


TC_OUTPUT = """class htb 1:100 root rate 40Mbit ceil 40Mbit burst 1600b cburst 1600b
 Sent 3000 bytes 3 pkt (dropped 0, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0

class htb 1:1001 parent 1:100 prio 0 rate 10Mbit ceil 40Mbit burst 1600b cburst 1600b
 Sent 1000 bytes 1 pkt (dropped 0, overlimits 0 requeues 0)

class htb 1:1002 parent 1:100 prio 0 rate 10Mbit ceil 40Mbit burst 1600b cburst 1600b
 Sent 2000 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)

class htb 1:4001 root prio 0 rate 100Mbit ceil 100Mbit burst 1600b cburst 1600b
 Sent 500 bytes 1 pkt (dropped 0, overlimits 0 requeues 0)
"""


def test_counters_sum_leaves_per_rack_pair() -> None:
    assert class_bytes(TC_OUTPUT) == {0x100: 3000, 0x1001: 1000, 0x1002: 2000, 0x4001: 500}
    pairs = rack_pair_bytes(NET, TC_OUTPUT)
    assert pairs == {(0, 1): 1000, (0, 2): 2000, (0, 0): 500}
    assert cross_rack_bytes(pairs) == 3000
    assert uplink_bytes(NET, TC_OUTPUT) == {0: 3000, 1: 0, 2: 0}


@pytest.mark.parametrize(("field", "kwargs"), [("racks", {"racks": 1}), ("oversubscription", {"oversubscription": 0.5}),
                                               ("node_mbit_s", {"node_mbit_s": 0.0}), ("nodes_per_rack", {"nodes_per_rack": 0})])
def test_out_of_range_settings_name_their_field(field: str, kwargs: dict[str, float]) -> None:
    with pytest.raises(ShapingError, match=field):
        Network(**kwargs)  # type: ignore[arg-type]


def test_up_without_root_is_one_clear_error_with_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(control.os, "geteuid", lambda: 1000)
    assert main(["testbed", "up"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("corral: error:") and "need root" in err and len(err.splitlines()) == 1


def test_missing_tools_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control.shutil, "which", lambda tool: None if tool == "tc" else "/usr/bin/" + tool)
    with pytest.raises(control.TestbedError, match="'tc' not found"):
        control.preflight()


def test_status_without_a_testbed_says_to_bring_it_up(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["testbed", "status", "--home", str(tmp_path)]) == 2
    assert "corral testbed up" in capsys.readouterr().err
