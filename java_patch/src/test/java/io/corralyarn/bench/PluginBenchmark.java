package io.corralyarn.bench;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

import io.corralyarn.hdfs.CorralBlockPlacementPolicy;
import io.corralyarn.yarn.CorralCapacityScheduler;
import io.corralyarn.yarn.RackSetTags;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.AddBlockFlag;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicy;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockPlacementPolicyDefault;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockStoragePolicySuite;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeDescriptor;
import org.apache.hadoop.hdfs.server.blockmanagement.DatanodeStorageInfo;
import org.apache.hadoop.hdfs.server.blockmanagement.FSClusterStats;
import org.apache.hadoop.hdfs.server.blockmanagement.PlacementBenchAccess;
import org.apache.hadoop.hdfs.server.blockmanagement.StorageTypeStats;
import org.apache.hadoop.hdfs.net.DFSNetworkTopology;
import org.apache.hadoop.net.NetworkTopology;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.net.NodeBase;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * Per-decision cost of Corral's Hadoop plugins against the stock classes they extend, measured
 * side by side on one synthetic topology (issue 16 item 7): {@link CorralCapacityScheduler#allocate}
 * against {@link CapacityScheduler#allocate} (a real ResourceManager in this JVM, NodeManagers
 * added as scheduler node events, applications submitted with unmanaged AMs and rack-set tags),
 * and {@link CorralBlockPlacementPolicy#chooseTarget} against {@link BlockPlacementPolicyDefault}
 * (DataNode descriptors with usage, a DataNode writer). Stock and Corral run at the same time in
 * this JVM and their calls are interleaved, so both see the same JIT, GC and machine load. Prints
 * one JSON line; the headline ratios are of median costs (on a shared machine the means carry
 * other processes' and the GC's pauses), the ratios of means are in the line too.
 *
 * <p>Usage: {@code PluginBenchmark [nodes] [racks] [applications] [calls]}.
 */
public final class PluginBenchmark {

  private static final long GB = 1L << 30;
  private static final long BLOCK = 128L << 20;

  private PluginBenchmark() {
  }

  public static void main(String[] args) throws Exception {
    try {
      run(args);
    } finally {
      System.exit(0);  // the ResourceManagers' non-daemon threads
    }
  }

  private static void run(String[] args) throws Exception {
    int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 4000;
    int racks = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    int apps = args.length > 2 ? Integer.parseInt(args[2]) : 200;
    int calls = args.length > 3 ? Integer.parseInt(args[3]) : 20000;
    DefaultMetricsSystem.setMiniClusterMode(true);  // two ResourceManagers in one JVM
    AllocateCost[] allocate = allocateCost(List.of(CapacityScheduler.class,
        CorralCapacityScheduler.class), nodes, racks, apps, calls);
    AllocateCost stockAllocate = allocate[0];
    AllocateCost corralAllocate = allocate[1];
    double[][] choose = chooseTargetCost(List.of(PlacementBenchAccess.stockPolicy(),
        new CorralBlockPlacementPolicy()), nodes, racks, calls);
    double[] stockChoose = choose[0];
    double[] corralChoose = choose[1];
    System.out.println(String.format(Locale.ROOT, "{\"benchmark\": \"java_plugins\", \"nodes\": %d, "
        + "\"racks\": %d, \"applications\": %d, \"calls\": %d, "
        + "\"allocate_us\": {\"stock\": %s, \"corral\": %s}, "
        + "\"node_added_us\": {\"stock\": %.1f, \"corral\": %.1f}, "
        + "\"choose_target_us\": {\"stock\": %s, \"corral\": %s}, "
        + "\"allocate_ratio_vs_stock\": %.3f, \"choose_target_ratio_vs_stock\": %.3f, "
        + "\"allocate_mean_ratio_vs_stock\": %.3f, \"choose_target_mean_ratio_vs_stock\": %.3f}",
        nodes, racks, apps, calls, quantiles(stockAllocate.allocateUs()),
        quantiles(corralAllocate.allocateUs()), stockAllocate.nodeAddedUs(),
        corralAllocate.nodeAddedUs(), quantiles(stockChoose), quantiles(corralChoose),
        median(corralAllocate.allocateUs()) / median(stockAllocate.allocateUs()),
        median(corralChoose) / median(stockChoose),
        mean(corralAllocate.allocateUs()) / mean(stockAllocate.allocateUs()),
        mean(corralChoose) / mean(stockChoose)));
  }

  /** Microseconds per allocate call, and the mean microseconds per node-added event. */
  private record AllocateCost(double[] allocateUs, double nodeAddedUs) {
  }

  /**
   * Allocate calls (each with a one-container ask) round-robin over the applications, for each
   * scheduler in its own ResourceManager, all running at once with the schedulers' calls
   * interleaved so each sees the same JIT, GC and machine load.
   */
  private static AllocateCost[] allocateCost(List<Class<? extends ResourceScheduler>> schedulers,
      int nodes, int racks, int apps, int calls) throws Exception {
    List<ResourceManager> rms = new ArrayList<>();
    try {
      List<List<ApplicationAttemptId>> attempts = new ArrayList<>();
      double[] nodeAddedUs = new double[schedulers.size()];
      for (Class<? extends ResourceScheduler> scheduler : schedulers) {
        Configuration conf = resourceManagerConf(scheduler);
        ResourceUtils.resetResourceTypes(conf);
        ResourceManager rm = new ResourceManager();
        rms.add(rm);
        rm.init(conf);
        rm.start();
        nodeAddedUs[rms.size() - 1] = timed(() -> {
          for (int i = 0; i < nodes; i++) {
            rm.getResourceScheduler().handle(new NodeAddedSchedulerEvent(node(rm.getRMContext(), i, racks)));
          }
          return 0;
        }) / 1e3 / nodes;
        attempts.add(submit(rm, conf, apps, racks));
      }
      List<ResourceRequest> ask = List.of(ResourceRequest.newInstance(Priority.newInstance(1),
          ResourceRequest.ANY, Resource.newInstance(1024, 1), 1));
      double[][] costs = new double[schedulers.size()][calls];
      for (int i = 0; i < calls + calls / 10; i++) {  // the first tenth warms the JIT
        for (int k = 0; k < rms.size(); k++) {
          ResourceScheduler scheduler = rms.get(k).getResourceScheduler();
          ApplicationAttemptId attempt = attempts.get(k).get(i % apps);
          long ns = timed(() -> {
            scheduler.allocate(attempt, ask, null, List.of(), null, null, new ContainerUpdates());
            return 0;
          });
          if (i >= calls / 10) {
            costs[k][i - calls / 10] = ns / 1e3;
          }
        }
      }
      AllocateCost[] result = new AllocateCost[schedulers.size()];
      for (int k = 0; k < result.length; k++) {
        result[k] = new AllocateCost(costs[k], nodeAddedUs[k]);
      }
      return result;
    } finally {
      rms.forEach(ResourceManager::stop);
    }
  }

  private static Configuration resourceManagerConf(Class<? extends ResourceScheduler> scheduler)
      throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, scheduler.getName());
    conf.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    conf.set("yarn.scheduler.capacity.root.queues", "default");
    conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
    conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 1.0f);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, false);
    conf.setBoolean("yarn.resourcemanager.webapp.ui-actions.enabled", false);
    for (String key : List.of(YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS)) {
      conf.set(key, "127.0.0.1:" + freePort());
    }
    return conf;
  }

  private static RMNode node(RMContext context, int i, int racks) {
    String host = String.format("node-%05d", i);
    String rack = String.format("/rack-%03d", i % racks);
    return new RMNodeImpl(NodeId.newInstance(host, 8041), context, host, 8042, 8043,
        new NodeBase(host, rack), Resource.newInstance(64 * 1024, 32), "3.5.0");
  }

  /** Applications with unmanaged AMs, each tagged with a rack set of two racks. */
  private static List<ApplicationAttemptId> submit(ResourceManager rm, Configuration conf,
      int apps, int racks) throws Exception {
    YarnClient client = YarnClient.createYarnClient();
    client.init(conf);
    client.start();
    List<ApplicationId> ids = new ArrayList<>();
    for (int j = 0; j < apps; j++) {
      ApplicationSubmissionContext context = client.createApplication().getApplicationSubmissionContext();
      context.setApplicationName("bench-" + j);
      context.setUnmanagedAM(true);
      context.setMaxAppAttempts(1);
      context.setPriority(Priority.newInstance(j % 10));
      context.setResource(Resource.newInstance(1024, 1));
      context.setAMContainerSpec(ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of(),
          null, null, null));
      Set<String> tags = new HashSet<>(RackSetTags.encode(List.of(
          String.format("/rack-%03d", j % racks), String.format("/rack-%03d", (j + 1) % racks)), 100));
      tags.add("corral-job:bench-" + j);
      context.setApplicationTags(tags);
      ids.add(client.submitApplication(context));
    }
    client.stop();
    List<ApplicationAttemptId> attempts = new ArrayList<>();
    for (ApplicationId id : ids) {
      attempts.add(awaitAttempt(rm, id));
    }
    return attempts;
  }

  private static ApplicationAttemptId awaitAttempt(ResourceManager rm, ApplicationId id)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      var app = rm.getRMContext().getRMApps().get(id);
      if (app != null && app.getCurrentAppAttempt() != null) {
        ApplicationAttemptId attempt = app.getCurrentAppAttempt().getAppAttemptId();
        SchedulerApplicationAttempt known = ((org.apache.hadoop.yarn.server.resourcemanager
            .scheduler.AbstractYarnScheduler<?, ?>) rm.getResourceScheduler())
            .getApplicationAttempt(attempt);
        if (known != null) {
          return attempt;
        }
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("no attempt of " + id + " reached the scheduler in 60 s");
  }

  /**
   * Microseconds per chooseTarget of a 3-replica block written by a DataNode, for each policy on
   * the same DataNodes, the policies' calls interleaved so both see the same JIT and GC.
   */
  private static double[][] chooseTargetCost(List<BlockPlacementPolicy> policies, int nodes,
      int racks, int calls) {
    Configuration conf = new Configuration();
    conf.setBoolean(DFSConfigKeys.DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, false);
    NetworkTopology topology = DFSNetworkTopology.getInstance(conf);  // as the NameNode's DatanodeManager
    String[] racksOf = new String[nodes];
    String[] hosts = new String[nodes];
    for (int i = 0; i < nodes; i++) {
      racksOf[i] = String.format("/rack-%03d", i % racks);
      hosts[i] = String.format("10.%d.%d.%d", i / 65536, (i / 256) % 256, i % 256);
    }
    DatanodeStorageInfo[] storages = DFSTestUtil.createDatanodeStorageInfos(nodes, racksOf, hosts);
    DatanodeDescriptor[] dataNodes = DFSTestUtil.toDatanodeDescriptor(storages);
    for (int i = 0; i < nodes; i++) {
      topology.add(dataNodes[i]);
      long used = (i % 7) * 10 * GB;
      dataNodes[i].getStorageInfos()[0].setUtilizationForTesting(100 * GB, used, 100 * GB - used, used);
      PlacementBenchAccess.heartbeat(dataNodes[i]);
    }
    policies.forEach(policy -> PlacementBenchAccess.initialize(policy, conf, new IdleCluster(), topology));
    BlockStoragePolicy storagePolicy = BlockStoragePolicySuite.createDefaultSuite().getDefaultPolicy();
    double[][] costs = new double[policies.size()][calls];
    for (int i = 0; i < calls + calls / 10; i++) {  // the first tenth warms the JIT
      DatanodeDescriptor writer = dataNodes[i % nodes];
      for (int p = 0; p < policies.size(); p++) {
        BlockPlacementPolicy policy = policies.get(p);
        long ns = timed(() -> policy.chooseTarget("/bench/file", 3, writer, new ArrayList<>(), false,
            new HashSet<Node>(), BLOCK, storagePolicy, EnumSet.noneOf(AddBlockFlag.class)).length);
        if (i >= calls / 10) {
          costs[p][i - calls / 10] = ns / 1e3;
        }
      }
    }
    return costs;
  }

  /** Cluster statistics of an idle cluster (no load to avoid). */
  private static final class IdleCluster implements FSClusterStats {
    @Override
    public int getTotalLoad() {
      return 0;
    }

    @Override
    public boolean isAvoidingStaleDataNodesForWrite() {
      return false;
    }

    @Override
    public int getNumDatanodesInService() {
      return 0;
    }

    @Override
    public double getInServiceXceiverAverage() {
      return 0;
    }

    @Override
    public double getInServiceXceiverAverageForVolume() {
      return 0;
    }

    @Override
    public Map<StorageType, StorageTypeStats> getStorageTypeStats() {
      return Map.of();
    }
  }

  private static long timed(LongSupplier work) {
    long start = System.nanoTime();
    work.getAsLong();
    return System.nanoTime() - start;
  }

  private static String quantiles(double[] costs) {
    double[] sorted = Arrays.copyOf(costs, costs.length);
    Arrays.sort(sorted);
    return String.format(Locale.ROOT, "{\"mean\": %.2f, \"median\": %.2f, \"p99\": %.2f}",
        mean(costs), sorted[sorted.length / 2], sorted[(int) (sorted.length * 0.99)]);
  }

  private static double median(double[] costs) {
    double[] sorted = Arrays.copyOf(costs, costs.length);
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static double mean(double[] costs) {
    return Arrays.stream(costs).average().orElse(Double.NaN);
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return socket.getLocalPort();
    }
  }
}
