package io.corralyarn.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockManagerTestUtil;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockStoragePolicySuite;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeManager;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataNodeTestUtils;
import org.apache.hadoop.net.Node;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Placement invariants of the Corral policy on a MiniDFSCluster of 4 racks x 2 DataNodes, each
 * with a DISK and an SSD volume. With 4 racks and 3 replicas, "a replica in the writer's rack"
 * is a real constraint (not implied by spreading over all racks).
 */
class CorralBlockPlacementPolicyTest {

  private static final String[] RACKS = {"/rack-a", "/rack-a", "/rack-b", "/rack-b", "/rack-c",
      "/rack-c", "/rack-d", "/rack-d"};
  private static final long BLOCK = 64 * 1024;
  private static final int TRIALS = 200;
  private static final BlockStoragePolicySuite POLICIES =
      BlockStoragePolicySuite.createDefaultSuite();
  private static final BlockStoragePolicy HOT =
      POLICIES.getPolicy(HdfsConstants.HOT_STORAGE_POLICY_NAME);

  static MiniDFSCluster cluster;
  static BlockPlacementPolicy policy;

  @BeforeAll
  static void startCluster() throws Exception {
    Configuration conf = new Configuration();
    conf.set("dfs.block.replicator.classname", CorralBlockPlacementPolicy.class.getName());
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
    conf.setBoolean("dfs.namenode.avoid.write.stale.datanode", true);
    // heartbeats every second, stale after 5 s, dead after 70 s: only the node the test silences
    // goes stale, even when a loaded machine delays the others' heartbeats by a few seconds
    conf.setLong("dfs.heartbeat.interval", 1);
    conf.setLong("dfs.namenode.stale.datanode.interval", 5_000);
    conf.setInt("dfs.namenode.heartbeat.recheck-interval", 30_000);
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(RACKS.length).racks(RACKS)
        .storageTypes(new StorageType[] {StorageType.DISK, StorageType.SSD}).build();
    cluster.waitActive();
    policy = cluster.getNamesystem().getBlockManager().getBlockPlacementPolicy();
    assertTrue(policy instanceof CorralBlockPlacementPolicy);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.shutdown();
    }
  }

  private static DatanodeManager datanodes() {
    return cluster.getNamesystem().getBlockManager().getDatanodeManager();
  }

  private static List<DatanodeDescriptor> liveNodes() {
    List<DatanodeDescriptor> nodes = new ArrayList<>();
    for (DatanodeDescriptor node : datanodes().getDatanodeListForReport(
        HdfsConstants.DatanodeReportType.LIVE)) {
      nodes.add(node);
    }
    return nodes;
  }

  private static DatanodeStorageInfo[] choose(Node writer, int replicas, Set<Node> excluded,
      BlockStoragePolicy storagePolicy) {
    return policy.chooseTarget("/f", replicas, writer, new ArrayList<>(), false,
        new HashSet<>(excluded), BLOCK, storagePolicy, EnumSet.noneOf(
            org.apache.hadoop.hdfs.AddBlockFlag.class));
  }

  private static Set<String> racks(DatanodeStorageInfo[] targets) {
    Set<String> racks = new HashSet<>();
    for (DatanodeStorageInfo target : targets) {
      racks.add(target.getDatanodeDescriptor().getNetworkLocation());
    }
    return racks;
  }

  /**
   * Waits until every DataNode is a fair candidate again: none stale or decommissioning, and all with
   * the same load (active transfers plus blocks scheduled), which the policy's two-choice draw
   * compares. Other tests' writes, decommissions and silenced heartbeats (JUnit runs them in any
   * order) otherwise leave one node of a rack preferred for a while; so do the blocks the policy
   * placed since a node's last heartbeat, hence every node must have sent a heartbeat since the call.
   */
  private static void awaitFairCandidates() throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    Map<String, Long> beatsAtCall = new HashMap<>();
    liveNodes().forEach(n -> beatsAtCall.put(n.getDatanodeUuid(), n.getLastUpdateMonotonic()));
    while (true) {
      BlockManagerTestUtil.checkHeartbeat(cluster.getNamesystem().getBlockManager());
      List<DatanodeDescriptor> nodes = liveNodes();
      boolean fair = nodes.size() == RACKS.length && datanodes().getNumStaleNodes() == 0
          && nodes.stream().allMatch(n -> n.getLastUpdateMonotonic() > beatsAtCall.getOrDefault(n.getDatanodeUuid(), Long.MIN_VALUE))
          && nodes.stream().allMatch(DatanodeInfo::isInService)
          && nodes.stream().mapToInt(n -> n.getXceiverCount() + n.getBlocksScheduled()).distinct().count() == 1;
      if (fair) {
        return;
      }
      assertTrue(System.currentTimeMillis() < deadline, "the DataNodes never settled to equal, in-service candidates");
      Thread.sleep(200);
    }
  }

  @Test
  void dataNodeWriterGetsOneReplicaInItsRackAndTheOthersOnDistinctRacks() throws InterruptedException {
    awaitFairCandidates();
    for (DatanodeDescriptor writer : liveNodes()) {
      Map<String, Integer> firstReplicaNodes = new HashMap<>();
      for (int i = 0; i < TRIALS; i++) {
        DatanodeStorageInfo[] targets = choose(writer, 3, Set.of(), HOT);
        assertEquals(3, targets.length);
        assertEquals(3, racks(targets).size(), "three replicas on three racks");
        for (DatanodeStorageInfo target : targets) {
          DatanodeDescriptor node = target.getDatanodeDescriptor();
          if (node.getNetworkLocation().equals(writer.getNetworkLocation())) {
            firstReplicaNodes.merge(node.getXferAddr(), 1, Integer::sum);
          }
        }
      }
      assertEquals(TRIALS, firstReplicaNodes.values().stream().mapToInt(Integer::intValue).sum(),
          "exactly one replica in the writer's rack every time");
      assertEquals(2, firstReplicaNodes.size(),
          "the writer-rack replica is spread over the rack's nodes, not always the writer");
    }
  }

  /**
   * One upload, within one heartbeat: the rack-mate whose last figures were higher by one block
   * still gets its share, because the blocks placed since count as load (before, every block of the
   * upload went to the node that looked less busy: 4 of 28 multi-block inputs on the testbed).
   */
  @Test
  void oneUploadIsSpreadOverTheWritersRackThoughItsLoadFiguresAreAHeartbeatOld() throws InterruptedException {
    awaitFairCandidates();
    DatanodeDescriptor busier = liveNodes().stream()
        .filter(n -> n.getNetworkLocation().equals("/rack-a")).findFirst().orElseThrow();
    DatanodeStorageInfo disk = java.util.Arrays.stream(busier.getStorageInfos())
        .filter(st -> st.getStorageType() == StorageType.DISK).findFirst().orElseThrow();
    DatanodeStorageInfo.incrementBlocksScheduled(disk);
    Map<String, Integer> nodes = new HashMap<>();
    try {
      for (int i = 0; i < 20; i++) {
        DatanodeStorageInfo[] targets = choose(busier, 1, Set.of(), HOT);
        nodes.merge(targets[0].getDatanodeDescriptor().getXferAddr(), 1, Integer::sum);
      }
    } finally {
      DatanodeStorageInfo.decrementBlocksScheduled(disk);
    }
    assertTrue(nodes.getOrDefault(busier.getXferAddr(), 0) >= 6,
        "the node one block busier at its heartbeat still gets blocks of the upload: " + nodes);
  }

  @Test
  void twoReplicasGoToTheWriterRackAndOneOtherRack() {
    DatanodeDescriptor writer = liveNodes().get(0);
    for (int i = 0; i < TRIALS; i++) {
      Set<String> racks = racks(choose(writer, 2, Set.of(), HOT));
      assertEquals(2, racks.size());
      assertTrue(racks.contains(writer.getNetworkLocation()));
    }
  }

  @Test
  void additionalReplicasGoToRacksWithoutOne() {
    List<DatanodeDescriptor> nodes = liveNodes();
    DatanodeDescriptor a = nodes.stream().filter(n -> n.getNetworkLocation().equals("/rack-a"))
        .findFirst().orElseThrow();
    DatanodeDescriptor b = nodes.stream().filter(n -> n.getNetworkLocation().equals("/rack-b"))
        .findFirst().orElseThrow();
    List<DatanodeStorageInfo> chosen = List.of(a.getStorageInfos()[0], b.getStorageInfos()[0]);
    for (int i = 0; i < TRIALS; i++) {
      DatanodeStorageInfo[] added = policy.chooseTarget("/f", 1, a, new ArrayList<>(chosen),
          false, new HashSet<>(), BLOCK, HOT, EnumSet.noneOf(
              org.apache.hadoop.hdfs.AddBlockFlag.class));
      assertEquals(1, added.length);
      String rack = added[0].getDatanodeDescriptor().getNetworkLocation();
      assertTrue(rack.equals("/rack-c") || rack.equals("/rack-d"), "re-replicated onto " + rack);
    }
  }

  @Test
  void clientOutsideTheClusterGetsTheDefaultPlacement() {
    for (int i = 0; i < TRIALS; i++) {
      DatanodeStorageInfo[] targets = choose(null, 3, Set.of(), HOT);
      assertEquals(3, targets.length);
      assertEquals(2, racks(targets).size(),
          "the default policy puts the 2nd and 3rd replica on one remote rack");
    }
  }

  @Test
  void excludedNodesAreNeverChosen() {
    DatanodeDescriptor writer = liveNodes().get(0);
    Set<Node> excluded = new HashSet<>();
    for (DatanodeDescriptor node : liveNodes()) {
      if (node.getNetworkLocation().equals(writer.getNetworkLocation()) && node != writer) {
        excluded.add(node);
      }
    }
    excluded.add(liveNodes().stream().filter(n -> !n.getNetworkLocation().equals(
        writer.getNetworkLocation())).findFirst().orElseThrow());
    for (int i = 0; i < TRIALS; i++) {
      DatanodeStorageInfo[] targets = choose(writer, 3, excluded, HOT);
      assertEquals(3, racks(targets).size());
      for (DatanodeStorageInfo target : targets) {
        assertFalse(excluded.contains(target.getDatanodeDescriptor()));
      }
      assertTrue(racks(targets).contains(writer.getNetworkLocation()));
    }
  }

  @Test
  void oneSsdStoragePolicyIsHonoured() {
    BlockStoragePolicy oneSsd = POLICIES.getPolicy(HdfsConstants.ONESSD_STORAGE_POLICY_NAME);
    DatanodeDescriptor writer = liveNodes().get(3);
    for (int i = 0; i < TRIALS; i++) {
      DatanodeStorageInfo[] targets = choose(writer, 3, Set.of(), oneSsd);
      long ssd = java.util.Arrays.stream(targets)
          .filter(t -> t.getStorageType() == StorageType.SSD).count();
      assertEquals(1, ssd);
      assertEquals(3, racks(targets).size());
      assertTrue(racks(targets).contains(writer.getNetworkLocation()));
    }
  }

  @Test
  void realFilesHaveEveryBlockOnThreeRacks() throws Exception {
    DistributedFileSystem fs = cluster.getFileSystem();
    for (int f = 0; f < 10; f++) {
      Path file = new Path("/invariants/file-" + f);
      DFSTestUtil.createFile(fs, file, 4096, 6 * BLOCK, BLOCK, (short) 3, f);
      // the NameNode lists a replica once its DataNode reports it, late on a loaded machine
      DFSTestUtil.waitReplication(fs, file, (short) 3);
      FileStatus status = fs.getFileStatus(file);
      BlockLocation[] blocks = fs.getFileBlockLocations(status, 0, status.getLen());
      assertEquals(6, blocks.length);
      for (BlockLocation block : blocks) {
        Set<String> racks = new HashSet<>();
        for (String path : block.getTopologyPaths()) {
          racks.add(path.substring(0, path.lastIndexOf('/')));
        }
        assertEquals(3, racks.size(), "block " + block + " on racks " + racks);
      }
    }
  }

  /** Decommissions one node and stales another, and gives both back when it ends. */
  @Test
  void decommissioningAndStaleNodesAreNotChosen() throws Exception {
    List<DatanodeDescriptor> nodes = liveNodes();
    DatanodeDescriptor decommissioning = nodes.get(4);
    DatanodeDescriptor stale = nodes.get(6);
    DataNode staleDataNode = cluster.getDataNodes().stream()
        .filter(dn -> dn.getDatanodeUuid().equals(stale.getDatanodeUuid()))
        .findFirst().orElseThrow();
    try {
      datanodes().getDatanodeAdminManager().startDecommission(decommissioning);
      DataNodeTestUtils.setHeartbeatsDisabledForTests(staleDataNode, true);
      DFSTestUtil.resetLastUpdatesWithOffset(stale, -10_000);
      long deadline = System.currentTimeMillis() + 30_000;
      while (!datanodes().shouldAvoidStaleDataNodesForWrite()
          || datanodes().getNumStaleNodes() < 1) {
        assertTrue(System.currentTimeMillis() < deadline, "the NameNode never saw a stale node");
        BlockManagerTestUtil.checkHeartbeat(cluster.getNamesystem().getBlockManager());
        Thread.sleep(100);
      }
      for (DatanodeDescriptor writer : nodes) {
        for (int i = 0; i < TRIALS / 4; i++) {
          DatanodeStorageInfo[] targets = choose(writer, 3, Set.of(), HOT);
          assertEquals(3, racks(targets).size());
          for (DatanodeStorageInfo target : targets) {
            DatanodeInfo node = target.getDatanodeDescriptor();
            assertFalse(node.equals(decommissioning), "decommissioning node chosen");
            assertFalse(node.equals(stale), "stale node chosen");
          }
        }
      }
    } finally {
      DataNodeTestUtils.setHeartbeatsDisabledForTests(staleDataNode, false);
      datanodes().getDatanodeAdminManager().stopDecommission(decommissioning);
    }
  }
}
