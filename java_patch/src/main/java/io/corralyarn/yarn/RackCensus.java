package io.corralyarn.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * A snapshot of the NodeManagers the ResourceManager knows, by rack: every host ever seen (active
 * or inactive: lost, shut down, decommissioned) and the hosts whose NodeManager is RUNNING. Hosts,
 * not NodeIds, are counted so a NodeManager restarted on a new port is one machine.
 */
final class RackCensus {

  private final Map<String, Set<String>> allHosts = new HashMap<>();
  private final Map<String, Set<String>> liveHosts = new HashMap<>();
  private final Map<String, List<Resource>> liveCapacities = new HashMap<>();
  private final Map<String, Set<String>> racksByLowerName = new HashMap<>();

  private RackCensus() {
  }

  static RackCensus of(RMContext context) {
    RackCensus census = new RackCensus();
    for (RMNode node : context.getInactiveRMNodes().values()) {
      census.add(node, false);
    }
    for (RMNode node : context.getRMNodes().values()) {
      census.add(node, node.getState() == NodeState.RUNNING);
    }
    return census;
  }

  private void add(RMNode node, boolean live) {
    String rack = node.getRackName();
    allHosts.computeIfAbsent(rack, r -> new HashSet<>()).add(node.getHostName());
    racksByLowerName.computeIfAbsent(rack.toLowerCase(Locale.ROOT), r -> new HashSet<>()).add(rack);
    if (live) {
      liveHosts.computeIfAbsent(rack, r -> new HashSet<>()).add(node.getHostName());
      liveCapacities.computeIfAbsent(rack, r -> new ArrayList<>()).add(node.getTotalCapability());
    }
  }

  /** The racks of the cluster whose names are in the (lower-case) rack set. */
  Set<String> racksIn(Collection<String> rackSet) {
    Set<String> racks = new HashSet<>();
    for (String wanted : rackSet) {
      racks.addAll(racksByLowerName.getOrDefault(wanted.toLowerCase(Locale.ROOT), Set.of()));
    }
    return racks;
  }

  /** The racks of the cluster that are not in the rack set. */
  List<String> racksOutside(Collection<String> rackSet) {
    Set<String> inside = racksIn(rackSet);
    List<String> outside = new ArrayList<>();
    for (String rack : allHosts.keySet()) {
      if (!inside.contains(rack)) {
        outside.add(rack);
      }
    }
    return outside;
  }

  List<String> allRacks() {
    return new ArrayList<>(allHosts.keySet());
  }

  int hostsIn(Collection<String> rackSet) {
    return count(allHosts, racksIn(rackSet));
  }

  int liveHostsIn(Collection<String> rackSet) {
    return count(liveHosts, racksIn(rackSet));
  }

  /** Whether some live NodeManager of the rack set is big enough for the resource. */
  boolean canHost(Collection<String> rackSet, Resource resource) {
    for (String rack : racksIn(rackSet)) {
      for (Resource capacity : liveCapacities.getOrDefault(rack, List.of())) {
        if (Resources.fitsIn(resource, capacity)) {
          return true;
        }
      }
    }
    return false;
  }

  private static int count(Map<String, Set<String>> hostsByRack, Set<String> racks) {
    int n = 0;
    for (String rack : racks) {
      n += hostsByRack.getOrDefault(rack, Set.of()).size();
    }
    return n;
  }
}
