package io.corralyarn.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The NodeManagers the scheduler knows, by rack, kept up to date from the scheduler's own node
 * events (added, removed, resized) rather than rebuilt from every node: every host ever seen
 * (including NodeManagers since lost, shut down or decommissioned) and the hosts whose
 * NodeManager the scheduler holds now. Hosts, not NodeIds, are counted, so a NodeManager
 * restarted on a new port is one machine. An event costs O(1); a question about a rack set costs
 * O(racks in it) (O(its live nodes) for {@link #canHost}). Every change bumps {@link #version},
 * so a caller can tell whether what it derived from the census is still current. Thread-safe; a
 * caller holding the census's monitor sees no change until it lets go.
 */
final class RackCensus {

  private final Map<String, Set<String>> allHosts = new HashMap<>();
  private final Map<String, Map<String, Integer>> liveHosts = new HashMap<>();  // rack -> host -> NMs
  private final Map<String, Map<NodeId, Resource>> liveCapacities = new HashMap<>();
  private final Map<String, Set<String>> racksByLowerName = new HashMap<>();
  private volatile long version;

  synchronized void nodeAdded(RMNode node) {
    String rack = node.getRackName();
    allHosts.computeIfAbsent(rack, r -> new HashSet<>()).add(node.getHostName());
    racksByLowerName.computeIfAbsent(rack.toLowerCase(Locale.ROOT), r -> new HashSet<>()).add(rack);
    liveHosts.computeIfAbsent(rack, r -> new HashMap<>()).merge(node.getHostName(), 1, Integer::sum);
    liveCapacities.computeIfAbsent(rack, r -> new HashMap<>()).put(node.getNodeID(),
        node.getTotalCapability());
    version++;
  }

  synchronized void nodeRemoved(RMNode node) {
    String rack = node.getRackName();
    Map<NodeId, Resource> capacities = liveCapacities.getOrDefault(rack, Map.of());
    if (!capacities.containsKey(node.getNodeID())) {
      return;
    }
    capacities.remove(node.getNodeID());
    liveHosts.get(rack).computeIfPresent(node.getHostName(), (host, n) -> n > 1 ? n - 1 : null);
    version++;
  }

  synchronized void nodeResized(RMNode node, Resource capability) {
    Map<NodeId, Resource> capacities = liveCapacities.get(node.getRackName());
    if (capacities != null && capacities.replace(node.getNodeID(), capability) != null) {
      version++;
    }
  }

  /** A number that changes whenever the census does. */
  long version() {
    return version;
  }

  /** The racks of the cluster that are not in the (lower-case) rack set. */
  synchronized List<String> racksOutside(Collection<String> rackSet) {
    Set<String> inside = racksIn(rackSet);
    List<String> outside = new ArrayList<>();
    for (String rack : allHosts.keySet()) {
      if (!inside.contains(rack)) {
        outside.add(rack);
      }
    }
    return outside;
  }

  synchronized List<String> allRacks() {
    return new ArrayList<>(allHosts.keySet());
  }

  synchronized int hostsIn(Collection<String> rackSet) {
    int n = 0;
    for (String rack : racksIn(rackSet)) {
      n += allHosts.get(rack).size();
    }
    return n;
  }

  synchronized int liveHostsIn(Collection<String> rackSet) {
    int n = 0;
    for (String rack : racksIn(rackSet)) {
      n += liveHosts.getOrDefault(rack, Map.of()).size();
    }
    return n;
  }

  /** Whether some live NodeManager of the rack set is big enough for the resource. */
  synchronized boolean canHost(Collection<String> rackSet, Resource resource) {
    for (String rack : racksIn(rackSet)) {
      for (Resource capacity : liveCapacities.getOrDefault(rack, Map.of()).values()) {
        if (Resources.fitsIn(resource, capacity)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The racks of the cluster named in the (lower-case) rack set, as the cluster spells them. */
  synchronized Set<String> racksOf(Collection<String> rackSet) {
    return racksIn(rackSet);
  }

  /** The racks of the cluster whose names are in the (lower-case) rack set. */
  private Set<String> racksIn(Collection<String> rackSet) {
    Set<String> racks = new HashSet<>();
    for (String wanted : rackSet) {
      racks.addAll(racksByLowerName.getOrDefault(wanted.toLowerCase(Locale.ROOT), Set.of()));
    }
    return racks;
  }
}
