package io.corralyarn.hdfs;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;


import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy.NotEnoughReplicasException;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicyDefault;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.net.InnerNode;
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
 * writer's rack" is the rack the planner chose. Within that rack the first replica goes to the
 * less loaded (active transfers + blocks scheduled, as of its last heartbeat, plus the blocks this
 * policy placed on it since) of two good nodes drawn at random (the power of two choices), not always
 * the writer itself, so one uploader does not fill one disk and busy nodes get fewer blocks. Counting
 * the placements since the heartbeat keeps a whole upload, often shorter than one heartbeat
 * interval, from herding onto the node whose last figures happened to be lower. A decision costs O(1) node checks in the common case, O(nodes of a
 * rack) only when a rack's drawn nodes are refused, and never a scan of the cluster (rack usage is
 * cached per DataNode heartbeat interval). When the writer is not a
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

  /** Per DataNode: the heartbeat its load figures are from, and the blocks placed on it since. */
  private final Map<DatanodeDescriptor, long[]> placedSinceHeartbeat = new ConcurrentHashMap<>();

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
    DatanodeStorageInfo chosen = chooseOneInRack(rack, 2, excludedNodes, blocksize,
        maxNodesPerRack, results, avoidStaleNodes, storageTypes);
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
    for (Iterator<String> racks = rackUsage(blocksize).leastUsedFirst(); racks.hasNext()
        && placed < count;) {
      String rack = racks.next();
      if (!usedRacks.contains(rack) && chooseOneInRack(rack, 1, excludedNodes, blocksize,
          maxNodesPerRack, results, avoidStaleNodes, storageTypes) != null) {
        usedRacks.add(rack);
        rackUsage(blocksize).placed(rack, blocksize);
        placed++;
      }
    }
    return placed;
  }

  /**
   * One good node of the rack: first the least loaded of {@code draws} nodes drawn at random, then,
   * if the rack refused them, every other node in random order. Returns null if none is good.
   */
  private DatanodeStorageInfo chooseOneInRack(String rack, int draws, Set<Node> excludedNodes,
      long blocksize, int maxNodesPerRack, List<DatanodeStorageInfo> results,
      boolean avoidStaleNodes, EnumMap<StorageType, Integer> storageTypes) {
    List<DatanodeDescriptor> drawn = drawFrom(rack, draws, excludedNodes);
    drawn.sort(Comparator.comparingLong(this::load));
    DatanodeStorageInfo chosen = tryInOrder(drawn, excludedNodes, blocksize, maxNodesPerRack,
        results, avoidStaleNodes, storageTypes);
    if (chosen != null) {
      return chosen;
    }
    List<DatanodeDescriptor> rest = candidatesIn(rack, excludedNodes);
    Collections.shuffle(rest, ThreadLocalRandom.current());
    return tryInOrder(rest, excludedNodes, blocksize, maxNodesPerRack, results, avoidStaleNodes,
        storageTypes);
  }

  /**
   * Tries the candidates in order; each try goes through the inherited {@code chooseRandom} with
   * the candidate's own topology path as its scope (NetworkTopology picks a leaf scope itself), so
   * all of the default policy's node checks apply and a try costs what one default choice does.
   */
  private DatanodeStorageInfo tryInOrder(List<DatanodeDescriptor> candidates,
      Set<Node> excludedNodes, long blocksize, int maxNodesPerRack,
      List<DatanodeStorageInfo> results, boolean avoidStaleNodes,
      EnumMap<StorageType, Integer> storageTypes) {
    for (DatanodeDescriptor candidate : candidates) {
      if (excludedNodes.contains(candidate)) {
        continue;
      }
      try {
        DatanodeStorageInfo storage = chooseRandom(NodeBase.getPath(candidate), excludedNodes,
            blocksize, maxNodesPerRack, results, avoidStaleNodes, storageTypes);
        addToExcludedNodes(candidate, excludedNodes);
        placedOn(candidate);
        return storage;
      } catch (NotEnoughReplicasException e) {
        excludedNodes.add(candidate);
      }
    }
    return null;
  }

  /** Up to {@code draws} distinct nodes of the rack, not excluded, drawn uniformly at random. */
  private List<DatanodeDescriptor> drawFrom(String rack, int draws, Set<Node> excludedNodes) {
    List<DatanodeDescriptor> drawn = new ArrayList<>(draws);
    Node scope = clusterMap.getNode(rack);
    if (!(scope instanceof InnerNode)) {
      return drawn;
    }
    InnerNode inner = (InnerNode) scope;
    int leaves = inner.getNumOfLeaves();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 2 * draws && drawn.size() < draws && leaves > 0; attempt++) {
      Node node = inner.getLeaf(random.nextInt(leaves), null);
      if (node instanceof DatanodeDescriptor && !excludedNodes.contains(node) && !drawn.contains(node)) {
        drawn.add((DatanodeDescriptor) node);
      }
    }
    return drawn;
  }

  /** How busy a DataNode is: active transfers and blocks scheduled, plus the blocks placed since its heartbeat. */
  private long load(DatanodeDescriptor node) {
    long[] placed = placedSinceHeartbeat.get(node);
    long since = placed != null && placed[0] == node.getLastUpdateMonotonic() ? placed[1] : 0;
    return node.getXceiverCount() + node.getBlocksScheduled() + since;
  }

  /** Counts a block placed on the node until its next heartbeat brings fresh load figures. */
  private void placedOn(DatanodeDescriptor node) {
    long beat = node.getLastUpdateMonotonic();
    placedSinceHeartbeat.merge(node, new long[] {beat, 1},
        (old, one) -> old[0] == beat ? new long[] {beat, old[1] + 1} : one);
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

  private RackUsage rackUsage(long blocksize) {
    RackUsage current = usage;
    if (current != null && Time.monotonicNow() - current.scannedAt < heartbeatInterval) {
      return current;
    }
    synchronized (this) {
      if (usage == current) {
        usage = RackUsage.scan(clusterMap, blocksize);
      }
      usage.byFraction.addAll(usage.usedAndCapacity.keySet());
      Collections.shuffle(usage.byFraction, ThreadLocalRandom.current());  // ties in random order
      usage.byFraction.sort(Comparator.comparingDouble(usage::scanned));
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
    final List<String> byFraction = new ArrayList<>();  // racks by used fraction at the scan

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

    /**
     * The racks in increasing used fraction, the bytes placed since the scan included; lazily, so
     * taking the first few costs O(few log few): a rack's fraction only grows after the scan, so
     * racks are pulled in scan order until none left could come before the best one pulled.
     */
    Iterator<String> leastUsedFirst() {
      PriorityQueue<Map.Entry<Double, String>> pulled = new PriorityQueue<>(Map.Entry.comparingByKey());
      return new Iterator<>() {
        private int next;

        @Override
        public boolean hasNext() {
          return next < byFraction.size() || !pulled.isEmpty();
        }

        @Override
        public String next() {
          while (next < byFraction.size() && (pulled.isEmpty()
              || scanned(byFraction.get(next)) < pulled.peek().getKey())) {
            String rack = byFraction.get(next++);
            pulled.add(Map.entry(fraction(rack), rack));
          }
          return pulled.remove().getValue();
        }
      };
    }

    private double scanned(String rack) {
      long[] used = usedAndCapacity.get(rack);
      return used[1] <= 0 ? 1.0 : (double) used[0] / used[1];
    }

    private double fraction(String rack) {
      long[] used = usedAndCapacity.get(rack);
      LongAdder placed = placedSince.get(rack);
      return used[1] <= 0 ? 1.0 : (double) (used[0] + (placed == null ? 0 : placed.sum())) / used[1];
    }

    void placed(String rack, long bytes) {
      placedSince.computeIfAbsent(rack, r -> new LongAdder()).add(bytes);
    }
  }
}
