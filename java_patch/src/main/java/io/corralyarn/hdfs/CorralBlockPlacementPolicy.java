package io.corralyarn.hdfs;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;


import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy.NotEnoughReplicasException;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicyDefault;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.net.NodeBase;
import org.apache.hadoop.util.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Corral's data placement (thesis §4.1, §4.5.1): one replica of every block in the writer's rack,
 * every further replica on a distinct other rack, least-used racks first (the data-balance
 * refinement of §4.3.4).
 *
 * <p>Corral uploads a job's input through a DataNode of one of the job's racks R_j, so "the
 * writer's rack" is the rack the planner chose. Within that rack the first replica goes to a good
 * node drawn at random with weight 1 / (1 + active transfers + blocks scheduled), not always the
 * writer itself, so one uploader does not fill one disk and busy nodes get fewer blocks. When the writer is not a
 * DataNode, and for any replica this policy cannot place, the behaviour of
 * {@link BlockPlacementPolicyDefault} applies unchanged: node state (decommissioning, stale, full,
 * excluded), storage policies and the per-rack limit are all checked by the inherited
 * {@code chooseRandom}, which every choice here goes through.
 *
 * <p>Configure with {@code dfs.block.replicator.classname=io.corralyarn.hdfs.CorralBlockPlacementPolicy}.
 */
public class CorralBlockPlacementPolicy extends BlockPlacementPolicyDefault {

  private static final Logger LOG = LoggerFactory.getLogger(CorralBlockPlacementPolicy.class);

  private volatile RackUsage usage;

  @Override
  protected Node chooseTargetInOrder(int numOfReplicas, Node writer, Set<Node> excludedNodes,
      long blocksize, int maxNodesPerRack, List<DatanodeStorageInfo> results,
      boolean avoidStaleNodes, boolean newBlock, EnumMap<StorageType, Integer> storageTypes)
      throws NotEnoughReplicasException {
    boolean writerIsDataNode = writer instanceof DatanodeDescriptor && clusterMap.contains(writer);
    if (results.isEmpty() && !writerIsDataNode) {
      return super.chooseTargetInOrder(numOfReplicas, writer, excludedNodes, blocksize,
          maxNodesPerRack, results, avoidStaleNodes, newBlock, storageTypes);
    }
    int remaining = numOfReplicas;
    if (results.isEmpty()) {
      DatanodeStorageInfo first = chooseInWriterRack(writer, excludedNodes, blocksize,
          maxNodesPerRack, results, avoidStaleNodes, storageTypes);
      remaining--;
      if (first == null) {
        LOG.debug("No good node in writer rack {}; first replica placed at random",
            writer.getNetworkLocation());
      }
    }
    remaining -= chooseOnUnusedRacks(remaining, excludedNodes, blocksize, maxNodesPerRack,
        results, avoidStaleNodes, storageTypes);
    if (remaining > 0) {
      // Fewer usable racks than replicas: the default policy fills up under maxNodesPerRack.
      chooseRandom(remaining, NodeBase.ROOT, excludedNodes, blocksize, maxNodesPerRack, results,
          avoidStaleNodes, storageTypes);
    }
    return writer instanceof DatanodeDescriptor ? writer : results.get(0).getDatanodeDescriptor();
  }

  /**
   * First replica: a good node of the writer's rack, drawn with weight 1 / (1 + load); if the rack
   * has none, a node chosen at random anywhere (the default policy's fallback). Returns null in the
   * latter case.
   */
  private DatanodeStorageInfo chooseInWriterRack(Node writer, Set<Node> excludedNodes,
      long blocksize, int maxNodesPerRack, List<DatanodeStorageInfo> results,
      boolean avoidStaleNodes, EnumMap<StorageType, Integer> storageTypes)
      throws NotEnoughReplicasException {
    String rack = writer.getNetworkLocation();
    DatanodeStorageInfo chosen = chooseOneInRack(rack, byLoad(rack, excludedNodes), excludedNodes,
        blocksize, maxNodesPerRack, results, avoidStaleNodes, storageTypes);
    if (chosen != null) {
      rackUsage(blocksize).placed(rack, blocksize);
      return chosen;
    }
    chooseRandom(NodeBase.ROOT, excludedNodes, blocksize, maxNodesPerRack, results,
        avoidStaleNodes, storageTypes);
    return null;
  }

  /**
   * Places up to {@code count} replicas, one per rack that holds none yet, least-used racks first.
   * Returns how many were placed.
   */
  private int chooseOnUnusedRacks(int count, Set<Node> excludedNodes, long blocksize,
      int maxNodesPerRack, List<DatanodeStorageInfo> results, boolean avoidStaleNodes,
      EnumMap<StorageType, Integer> storageTypes) {
    int placed = 0;
    Set<String> usedRacks = new HashSet<>();
    for (DatanodeStorageInfo storage : results) {
      usedRacks.add(storage.getDatanodeDescriptor().getNetworkLocation());
    }
    for (String rack : racksByUsage(blocksize)) {
      if (placed == count) {
        break;
      }
      if (usedRacks.contains(rack)) {
        continue;
      }
      List<DatanodeDescriptor> candidates = new ArrayList<>(candidatesIn(rack, excludedNodes));
      Collections.shuffle(candidates);
      if (chooseOneInRack(rack, candidates, excludedNodes, blocksize, maxNodesPerRack, results,
          avoidStaleNodes, storageTypes) != null) {
        usedRacks.add(rack);
        rackUsage(blocksize).placed(rack, blocksize);
        placed++;
      }
    }
    return placed;
  }

  /**
   * Tries the candidates of one rack in order; each try goes through the inherited
   * {@code chooseRandom} restricted to that single node, so all of the default policy's node
   * checks apply. Returns the chosen storage or null if no candidate is good.
   */
  private DatanodeStorageInfo chooseOneInRack(String rack, List<DatanodeDescriptor> candidates,
      Set<Node> excludedNodes, long blocksize, int maxNodesPerRack,
      List<DatanodeStorageInfo> results, boolean avoidStaleNodes,
      EnumMap<StorageType, Integer> storageTypes) {
    for (DatanodeDescriptor candidate : candidates) {
      Set<Node> onlyCandidate = new HashSet<>(excludedNodes);
      for (DatanodeDescriptor other : candidatesIn(rack, excludedNodes)) {
        if (other != candidate) {
          onlyCandidate.add(other);
        }
      }
      try {
        DatanodeStorageInfo storage = chooseRandom(rack, onlyCandidate, blocksize,
            maxNodesPerRack, results, avoidStaleNodes, storageTypes);
        addToExcludedNodes(candidate, excludedNodes);
        return storage;
      } catch (NotEnoughReplicasException e) {
        excludedNodes.add(candidate);
      }
    }
    return null;
  }

  /**
   * Nodes of the rack in a random order biased towards light load: a node comes first with
   * probability proportional to 1 / (1 + active transfers + blocks scheduled), so one writer's
   * blocks spread over its rack and busy nodes get fewer of them.
   */
  private List<DatanodeDescriptor> byLoad(String rack, Set<Node> excludedNodes) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    Map<DatanodeDescriptor, Double> keys = new HashMap<>();
    for (DatanodeDescriptor node : candidatesIn(rack, excludedNodes)) {
      double load = 1.0 + node.getXceiverCount() + node.getBlocksScheduled();
      keys.put(node, -Math.log(1.0 - random.nextDouble()) * load);
    }
    List<DatanodeDescriptor> nodes = new ArrayList<>(keys.keySet());
    nodes.sort(Comparator.comparingDouble(keys::get));
    return nodes;
  }

  private List<DatanodeDescriptor> candidatesIn(String rack, Set<Node> excludedNodes) {
    List<DatanodeDescriptor> nodes = new ArrayList<>();
    for (Node node : clusterMap.getLeaves(rack)) {
      if (node instanceof DatanodeDescriptor && !excludedNodes.contains(node)) {
        nodes.add((DatanodeDescriptor) node);
      }
    }
    return nodes;
  }

  /**
   * All racks, least used first: used fraction of capacity from the cached {@link RackUsage},
   * which counts blocks scheduled but not yet reported (as one block each) and the blocks this
   * policy placed since the last scan, so a burst of writes does not pile onto one rack. Ties are
   * broken at random. O(racks log racks); the DataNodes are scanned at most once per DataNode
   * heartbeat interval ({@code dfs.heartbeat.interval}), the only time their figures change.
   */
  private List<String> racksByUsage(long blocksize) {
    RackUsage current = rackUsage(blocksize);
    List<String> racks = current.racks();
    Collections.shuffle(racks, ThreadLocalRandom.current());
    racks.sort(Comparator.comparingDouble(current::fraction));
    return racks;
  }

  private RackUsage rackUsage(long blocksize) {
    RackUsage current = usage;
    if (current != null && Time.monotonicNow() - current.scannedAt < heartbeatInterval) {
      return current;
    }
    synchronized (this) {
      if (usage == current) {
        usage = RackUsage.scan(clusterMap, blocksize);
      }
      return usage;
    }
  }

  /**
   * Bytes used (plus blocks scheduled) and capacity per rack from one scan of the DataNodes, and the
   * bytes this policy placed on each rack since; DataNodes report usage only on heartbeats, so a
   * scan per block would read the same figures again.
   */
  private static final class RackUsage {
    final long scannedAt = Time.monotonicNow();
    final Map<String, long[]> usedAndCapacity = new HashMap<>();
    final Map<String, LongAdder> placedSince = new ConcurrentHashMap<>();

    static RackUsage scan(NetworkTopology clusterMap, long blocksize) {
      RackUsage usage = new RackUsage();
      for (Node node : clusterMap.getLeaves(NodeBase.ROOT)) {
        if (node instanceof DatanodeDescriptor) {
          DatanodeDescriptor dn = (DatanodeDescriptor) node;
          long[] used = usage.usedAndCapacity.computeIfAbsent(dn.getNetworkLocation(), r -> new long[2]);
          used[0] += dn.getDfsUsed() + dn.getBlocksScheduled() * blocksize;
          used[1] += dn.getCapacity();
        }
      }
      return usage;
    }

    List<String> racks() {
      return new ArrayList<>(usedAndCapacity.keySet());
    }

    double fraction(String rack) {
      long[] used = usedAndCapacity.get(rack);
      long placed = placedSince.containsKey(rack) ? placedSince.get(rack).sum() : 0;
      return used == null || used[1] <= 0 ? 1.0 : (double) (used[0] + placed) / used[1];
    }

    void placed(String rack, long bytes) {
      placedSince.computeIfAbsent(rack, r -> new LongAdder()).add(bytes);
    }
  }
}
