package io.corralyarn.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockStoragePolicySuite;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.datanode.SimulatedFSDataset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A full DataNode is never chosen, even when it is the writer's only rack-mate. */
class CorralPlacementFullNodeTest {

  private static final String[] RACKS = {"/rack-a", "/rack-a", "/rack-b", "/rack-b", "/rack-c",
      "/rack-c", "/rack-d", "/rack-d"};
  private static final long BLOCK = 64 * 1024;
  private static final long ROOMY = 1024 * BLOCK;
  private static final long FULL = 1024;

  static MiniDFSCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    Configuration conf = new Configuration();
    conf.set("dfs.block.replicator.classname", CorralBlockPlacementPolicy.class.getName());
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
    SimulatedFSDataset.setFactory(conf);
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(RACKS.length).racks(RACKS)
        .simulatedCapacities(new long[] {ROOMY, ROOMY, FULL, ROOMY, ROOMY, ROOMY, ROOMY, ROOMY})
        .build();
    cluster.waitActive();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.shutdown();
    }
  }

  @Test
  void fullNodeIsNeverChosen() {
    BlockPlacementPolicy policy = cluster.getNamesystem().getBlockManager()
        .getBlockPlacementPolicy();
    List<DatanodeDescriptor> nodes = new ArrayList<>(cluster.getNamesystem().getBlockManager()
        .getDatanodeManager().getDatanodeListForReport(HdfsConstants.DatanodeReportType.LIVE));
    DatanodeDescriptor full = nodes.stream().filter(n -> n.getRemaining() < BLOCK)
        .findFirst().orElseThrow();
    for (DatanodeDescriptor writer : nodes) {
      for (int i = 0; i < 100; i++) {
        DatanodeStorageInfo[] targets = policy.chooseTarget("/f", 3, writer, new ArrayList<>(),
            false, new HashSet<>(), BLOCK, BlockStoragePolicySuite.createDefaultSuite()
                .getPolicy(HdfsConstants.HOT_STORAGE_POLICY_NAME),
            EnumSet.noneOf(AddBlockFlag.class));
        Set<String> racks = new HashSet<>();
        for (DatanodeStorageInfo target : targets) {
          assertNotEquals(full, target.getDatanodeDescriptor(), "full node chosen");
          racks.add(target.getDatanodeDescriptor().getNetworkLocation());
        }
        assertEquals(3, racks.size());
        assertTrue(racks.contains(writer.getNetworkLocation()));
      }
    }
  }
}
