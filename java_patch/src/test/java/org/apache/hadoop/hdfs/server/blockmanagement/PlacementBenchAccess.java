package org.apache.hadoop.hdfs.server.blockmanagement;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NetworkTopology;

/**
 * Package-level access the placement benchmark needs to set a policy up outside a NameNode, as
 * Hadoop's own placement tests do from this package: the stock policy's constructor, a policy's
 * initialisation, and a DataNode heartbeat carrying its storages' usage.
 */
public final class PlacementBenchAccess {

  private PlacementBenchAccess() {
  }

  public static BlockPlacementPolicy stockPolicy() {
    return new BlockPlacementPolicyDefault();
  }

  public static void initialize(BlockPlacementPolicy policy, Configuration conf,
      FSClusterStats stats, NetworkTopology topology) {
    policy.initialize(conf, stats, topology, new Host2NodesMap());
  }

  public static void heartbeat(DatanodeDescriptor dataNode) {
    dataNode.updateHeartbeat(BlockManagerTestUtil.getStorageReportsForDatanode(dataNode), 0L, 0L, 0,
        0, null);
  }
}
