"""Topology discovery: racks and DataNodes from the NameNode, racks and NodeManagers from the RM.

The two views are reconciled into the planner's :class:`~corral_yarn.contracts.ClusterSpec` (thesis
§4.1: R_j must name racks that hold both the job's data and its tasks). Where they disagree (a rack
with storage but no compute, a host in different racks) the disagreement is stated in one sentence.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from corral_yarn.cluster.errors import ClusterError, MalformedResponseError
from corral_yarn.cluster.rest import RestClient, Retry, expect
from corral_yarn.cluster.rm import NodeReport, ResourceManager
from corral_yarn.contracts import ClusterSpec, Rack

log = logging.getLogger(__name__)

NAMENODE_INFO = "Hadoop:service=NameNode,name=NameNodeInfo"


@dataclass(frozen=True)
class DataNodeInfo:
    """A live DataNode as the NameNode reports it (JMX ``NameNodeInfo.LiveNodes``)."""

    name: str  # the NameNode's key for it: host:transfer-port
    host: str
    rack: str
    http_address: str  # host:port of its HTTP server, which serves WebHDFS writes
    capacity_bytes: int
    remaining_bytes: int
    admin_state: str

    @property
    def writable(self) -> bool:
        return self.admin_state == "In Service"


@dataclass(frozen=True)
class Topology:
    """Both views of the cluster and what they disagree about."""

    datanodes: tuple[DataNodeInfo, ...]
    nodemanagers: tuple[NodeReport, ...]
    disagreements: tuple[str, ...]

    @property
    def racks(self) -> list[str]:
        """Racks with both live DataNodes and running NodeManagers: where Corral can place a job."""
        storage = {d.rack for d in self.datanodes if d.writable}
        compute = {n.rack for n in self.nodemanagers if n.state == "RUNNING"}
        return sorted(storage & compute)

    def datanodes_in(self, racks: list[str] | tuple[str, ...]) -> list[DataNodeInfo]:
        """Writable DataNodes of the given racks (rack names compared case-insensitively, as tags are)."""
        wanted = {r.lower() for r in racks}
        return [d for d in self.datanodes if d.writable and d.rack.lower() in wanted]

    def rack_of_node(self, node: str) -> str | None:
        """The rack of a NodeManager given its id (host:port) or HTTP address, else of the NodeManagers on its
        host if they share one rack (the RM reports no HTTP address for a SHUTDOWN or LOST node); None if unknown."""
        if exact := next((n.rack for n in self.nodemanagers if node in (n.node_id, n.http_address)), None):
            return exact
        on_host = {n.rack for n in self.nodemanagers if n.host == node.rsplit(":", 1)[0]}
        return on_host.pop() if len(on_host) == 1 else None

    def canonical_racks(self, racks: list[str] | tuple[str, ...]) -> list[str]:
        """Rack names as the cluster spells them (tags come back lower-cased); unknown names kept as given."""
        spelled = {r.lower(): r for r in {d.rack for d in self.datanodes} | {n.rack for n in self.nodemanagers}}
        return [spelled.get(r.lower(), r) for r in racks]

    def cluster_spec(self, name: str, nic_bandwidth_bytes_per_s: float, disk_bandwidth_bytes_per_s: float,
                     oversubscription: float, task_memory_mb: int = 1024) -> ClusterSpec:
        """The planner's ClusterSpec: racks holding both storage and compute, machines = NodeManagers.

        Slots per machine are the smallest NodeManager's memory divided by ``task_memory_mb``
        (map and reduce containers share a NodeManager's memory in YARN).
        """
        racks = self.racks
        if not racks:
            raise ClusterError(f"no rack has both a live DataNode and a running NodeManager ({'; '.join(self.disagreements) or 'empty cluster'})")
        machines = {r: sorted(_machine_names([n for n in self.nodemanagers if n.rack == r and n.state == "RUNNING"])) for r in racks}
        slots = max(1, min(n.memory_mb for n in self.nodemanagers if n.rack in racks) // task_memory_mb)
        return ClusterSpec(name=name, racks=[Rack(name=r, machines=machines[r]) for r in racks],
                           map_slots_per_machine=slots, reduce_slots_per_machine=slots,
                           nic_bandwidth_bytes_per_s=nic_bandwidth_bytes_per_s,
                           disk_bandwidth_bytes_per_s=disk_bandwidth_bytes_per_s, oversubscription=oversubscription)


def _machine_names(nodes: list[NodeReport]) -> list[str]:
    """Host names, or NodeManager ids where several NodeManagers share a host (a mini cluster)."""
    hosts = [n.host for n in nodes]
    return hosts if len(set(hosts)) == len(hosts) else [n.node_id for n in nodes]


def live_datanodes(namenode_http: str, timeout_s: float = 30.0, retry: Retry = Retry()) -> list[DataNodeInfo]:
    """Live DataNodes from the NameNode's JMX bean ``NameNodeInfo`` (its ``LiveNodes`` JSON string)."""
    rest = RestClient("NameNode", namenode_http, timeout_s=timeout_s, retry=retry)
    beans = expect(rest.get("/jmx", params={"qry": NAMENODE_INFO}), "beans", service="NameNode")
    if not beans:
        raise MalformedResponseError(f"NameNode at {namenode_http} has no JMX bean {NAMENODE_INFO}")
    try:
        live: dict[str, Any] = json.loads(beans[0]["LiveNodes"])
        return sorted((_datanode(key, d) for key, d in live.items()), key=lambda d: (d.rack, d.name))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedResponseError(f"NameNode LiveNodes is not the documented JSON: {exc}") from None


def _datanode(key: str, d: dict[str, Any]) -> DataNodeInfo:
    return DataNodeInfo(name=key, host=key.rsplit(":", 1)[0], rack=str(d.get("location", "/default-rack")),
                        http_address=str(d["infoAddr"]), capacity_bytes=int(d.get("capacity", 0)),
                        remaining_bytes=int(d.get("remaining", 0)), admin_state=str(d.get("adminState", "In Service")))


def discover(namenode_http: str, rm: ResourceManager) -> Topology:
    """Both views and their disagreements (logged as warnings)."""
    datanodes = live_datanodes(namenode_http, timeout_s=rm.rest.timeout_s, retry=rm.rest.retry)
    nodemanagers = rm.nodes()
    disagreements = reconcile(datanodes, nodemanagers)
    for d in disagreements:
        log.warning("topology: %s", d)
    return Topology(tuple(datanodes), tuple(nodemanagers), tuple(disagreements))


def reconcile(datanodes: list[DataNodeInfo], nodemanagers: list[NodeReport]) -> list[str]:
    """Sentences saying where the NameNode's and the RM's views of racks differ; empty if they agree."""
    dn_racks = _count_by_rack(d.rack for d in datanodes if d.writable)
    nm_racks = _count_by_rack(n.rack for n in nodemanagers if n.state == "RUNNING")
    found = [f"rack {r} has {dn_racks[r]} live DataNode(s) but no running NodeManager" for r in sorted(dn_racks.keys() - nm_racks.keys())]
    found += [f"rack {r} has {nm_racks[r]} running NodeManager(s) but no live DataNode" for r in sorted(nm_racks.keys() - dn_racks.keys())]
    found += [f"rack {r}: the NameNode sees {dn_racks[r]} DataNode(s), the ResourceManager {nm_racks[r]} NodeManager(s)"
              for r in sorted(dn_racks.keys() & nm_racks.keys()) if dn_racks[r] != nm_racks[r]]
    found += _host_conflicts(datanodes, nodemanagers)
    found += [f"NodeManager {n.node_id} is {n.state}" for n in nodemanagers if n.state != "RUNNING"]
    return found


def _count_by_rack(racks: Any) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for r in racks:
        counts[r] += 1
    return dict(counts)


def _host_conflicts(datanodes: list[DataNodeInfo], nodemanagers: list[NodeReport]) -> list[str]:
    """Hosts that the NameNode and the RM put in different racks (only where a host has one of each)."""
    dn_rack = _single_rack_hosts((d.host, d.rack) for d in datanodes)
    nm_rack = _single_rack_hosts((n.host, n.rack) for n in nodemanagers)
    return [f"host {h} is in rack {dn_rack[h]} for the NameNode but in rack {nm_rack[h]} for the ResourceManager"
            for h in sorted(dn_rack.keys() & nm_rack.keys()) if dn_rack[h] != nm_rack[h]]


def _single_rack_hosts(pairs: Any) -> dict[str, str]:
    racks: dict[str, set[str]] = defaultdict(set)
    for host, rack in pairs:
        racks[host].add(rack)
    return {h: next(iter(rs)) for h, rs in racks.items() if len(rs) == 1}
