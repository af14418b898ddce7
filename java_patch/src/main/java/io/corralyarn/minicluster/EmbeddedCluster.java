package io.corralyarn.minicluster;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.BooleanSupplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A multi-rack Hadoop cluster in one JVM: a NameNode, a DataNode and a NodeManager on every
 * worker address of the {@link ClusterLayout}, a ResourceManager running the Corral scheduler and
 * a MapReduce JobHistory server. HDFS and YARN resolve racks from the same topology table, and
 * the HDFS block placement policy and the YARN scheduler are Corral's.
 *
 * <p>{@link #start()} returns once every daemon is healthy; {@link #close()} stops them all.
 */
public final class EmbeddedCluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedCluster.class);
  /** File in the conf directory that, when present at start, is the scheduler's latency file. */
  public static final String LATENCY_FILE = "latency.csv";
  private static final Set<Integer> HANDED_OUT = new HashSet<>();
  private static final int LOWEST_PORT = 20000;
  private static final Random RANDOM = new Random();

  /** What to start besides YARN. */
  public record Options(boolean hdfs, boolean jobHistory, int nodeMemoryMb, int nodeVcores,
      long startTimeoutMs) {
    /** Everything, sized for a 2-core, 24 GB machine. */
    public static Options full() {
      return new Options(true, true, 4096, 4, 240_000);
    }
  }

  private final ClusterLayout layout;
  private final Path baseDir;
  private final Path confDir;
  private final List<String> applicationClasspath;
  private final Options options;
  private final Kerberos kerberos;
  private final Configuration base = new Configuration();
  private final List<DataNode> dataNodes = new ArrayList<>();
  private final List<NodeManager> nodeManagers = new ArrayList<>();
  private final List<ClusterLayout.Node> nodeManagerHosts = new ArrayList<>();
  // per worker host: the configuration its DataNode / NodeManager first started with (a restart
  // reuses it, so the daemon comes back on the same ports and the description stays true; NodeManager
  // recovery needs them fixed)
  private final Map<String, Configuration> dataNodeConfs = new HashMap<>();
  private final Map<String, Configuration> nodeManagerConfs = new HashMap<>();
  private NameNode nameNode;
  private ResourceManager resourceManager;
  private JobHistoryServer jobHistoryServer;

  /**
   * @param applicationClasspath classpath entries of MapReduce containers (the Hadoop jars);
   *     may be empty when no MapReduce job will run
   */
  public EmbeddedCluster(ClusterLayout layout, Path baseDir, List<String> applicationClasspath,
      Options options) {
    this(layout, baseDir, applicationClasspath, options, null);
  }

  /** A secure cluster when {@code kerberos} (its KDC, started) is not null (docs/minicluster.md). */
  public EmbeddedCluster(ClusterLayout layout, Path baseDir, List<String> applicationClasspath,
      Options options, Kerberos kerberos) {
    this.kerberos = kerberos;
    this.layout = layout;
    this.baseDir = baseDir.toAbsolutePath();
    this.confDir = this.baseDir.resolve("conf");
    this.applicationClasspath = List.copyOf(applicationClasspath);
    this.options = options;
  }

  public ClusterLayout layout() {
    return layout;
  }

  /** The client configuration directory (core, hdfs, yarn and mapred site files). */
  public Path confDir() {
    return confDir;
  }

  /** A copy of the client configuration. */
  public Configuration clientConf() {
    return new Configuration(base);
  }

  public ResourceManager resourceManager() {
    return resourceManager;
  }

  public NameNode nameNode() {
    return nameNode;
  }

  public List<NodeManager> nodeManagers() {
    return Collections.unmodifiableList(nodeManagers);
  }

  /** The worker each NodeManager of {@link #nodeManagers()} runs on (same order). */
  public List<ClusterLayout.Node> nodeManagerHosts() {
    return Collections.unmodifiableList(nodeManagerHosts);
  }

  public List<DataNode> dataNodes() {
    return Collections.unmodifiableList(dataNodes);
  }

  public JobHistoryServer jobHistoryServer() {
    return jobHistoryServer;
  }

  /** Starts every daemon and waits until all are healthy. */
  public void start() throws IOException, InterruptedException {
    DefaultMetricsSystem.setMiniClusterMode(true);
    Files.createDirectories(confDir);
    Files.writeString(confDir.resolve("topology.table"), layout.topologyTable());
    writeClientConf(ClusterConfig.sites(layout, baseDir, confDir, applicationClasspath, options,
        kerberos));
    if (kerberos != null) {
      kerberos.login(base);
    }
    try {
      if (options.hdfs()) {
        startHdfs();
        if (kerberos != null) {
          kerberos.prepareHdfs(new Configuration(base));
        }
      }
      startYarn();
      if (options.jobHistory()) {
        jobHistoryServer = new JobHistoryServer();
        jobHistoryServer.init(new Configuration(base));
        jobHistoryServer.start();
        awaitStarted(jobHistoryServer, "JobHistory server");
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      close();
      throw e;
    }
    LOG.info("Embedded cluster healthy: {} racks x {} nodes", layout.racks(),
        layout.nodesPerRack());
  }

  private void startHdfs() throws IOException, InterruptedException {
    Configuration nnConf = new Configuration(base);
    NameNode.format(nnConf);
    nameNode = NameNode.createNameNode(new String[0], nnConf);
    for (ClusterLayout.Node node : layout.nodes()) {
      startDataNode(node);
    }
    awaitHdfs();
  }

  /** Waits until every running DataNode is registered and the NameNode is out of safe mode. */
  private void awaitHdfs() throws InterruptedException {
    int expected = dataNodes.size();
    await("all " + expected + " DataNodes registered and the NameNode out of safe mode",
        () -> nameNode.getNamesystem().getNumLiveDataNodes() == expected
            && !nameNode.isInSafeMode()
            && dataNodes.stream().allMatch(DataNode::isDatanodeFullyStarted));
  }

  /**
   * Stops the NameNode and starts it again on the same ports and metadata directory (no format);
   * returns once every running DataNode has registered again and safe mode is over.
   */
  public synchronized String restartNameNode() throws IOException, InterruptedException {
    if (nameNode == null) {
      throw new IllegalStateException("this cluster runs no NameNode");
    }
    LOG.info("Restarting the NameNode");
    long begin = System.nanoTime();
    nameNode.stop();
    nameNode.join();
    nameNode = NameNode.createNameNode(new String[0], new Configuration(base));
    awaitHdfs();
    return "NameNode restarted in " + (System.nanoTime() - begin) / 1_000_000L + " ms; "
        + dataNodes.size() + " DataNodes live, out of safe mode";
  }

  private void startYarn() throws InterruptedException {
    startResourceManager();
    for (ClusterLayout.Node node : layout.nodes()) {
      startNodeManager(node);
    }
    awaitRunningNodeManagers(layout.nodes().size());
  }

  private void startResourceManager() {
    // Resource types (and so the minimum allocation) are JVM-wide and fixed by whichever
    // configuration touched them first; make it this cluster's.
    ResourceUtils.resetResourceTypes(new Configuration(base));
    resourceManager = new ResourceManager();
    resourceManager.init(new Configuration(base));
    resourceManager.start();
  }

  /**
   * Stops the ResourceManager and starts a new one on the same ports and state store: with
   * work-preserving recovery (docs/minicluster.md) it recovers every application from the store
   * and its running containers from the NodeManagers. Returns once every running NodeManager has
   * registered again.
   */
  public synchronized String restartResourceManager() throws InterruptedException {
    LOG.info("Restarting the ResourceManager");
    long begin = System.nanoTime();
    int running = nodeManagers.size();
    stopQuietly("ResourceManager", resourceManager);
    startResourceManager();
    awaitRunningNodeManagers(running);
    return "ResourceManager restarted in " + (System.nanoTime() - begin) / 1_000_000L + " ms; "
        + resourceManager.getRMContext().getRMApps().size() + " applications recovered, "
        + running + " NodeManagers RUNNING";
  }

  /** Waits until the ResourceManager sees {@code expected} NodeManagers RUNNING. */
  public void awaitRunningNodeManagers(int expected) throws InterruptedException {
    await(expected + " NodeManagers RUNNING in the ResourceManager",
        () -> runningNodeManagers() == expected);
  }

  /**
   * Starts the NodeManager of a worker (again, e.g. after {@link #stopNodeManager}, on the ports
   * it had before).
   */
  public NodeManager startNodeManager(ClusterLayout.Node node) {
    if (nodeManagerHosts.contains(node)) {
      throw new IllegalArgumentException("a NodeManager is already running on " + node.host());
    }
    Configuration conf = nodeManagerConfs.computeIfAbsent(node.host(),
        host -> ClusterConfig.nodeManager(base, node, baseDir));
    NodeManager nodeManager = new NodeManager();
    nodeManager.init(new Configuration(conf));
    nodeManager.start();
    nodeManagers.add(nodeManager);
    nodeManagerHosts.add(node);
    return nodeManager;
  }

  /**
   * Starts a stopped NodeManager again (the control channel's {@code start-nodemanager}) and
   * waits until the ResourceManager sees it RUNNING.
   */
  public String restartNodeManager(ClusterLayout.Node node) throws InterruptedException {
    NodeManager nodeManager = startNodeManager(node);
    String id = nodeManager.getNMContext().getNodeId().toString();
    await("NodeManager " + id + " RUNNING in the ResourceManager",
        () -> nodeManagerState(node.host()) == NodeState.RUNNING);
    return "NodeManager " + id + " running";
  }

  /**
   * Stops the NodeManager of a worker (for fault-injection tests): it kills its containers and
   * unregisters; returns once the ResourceManager no longer sees it RUNNING.
   */
  public String stopNodeManager(ClusterLayout.Node node) throws InterruptedException {
    int i = nodeManagerHosts.indexOf(node);
    if (i < 0) {
      throw new IllegalArgumentException("no NodeManager running on " + node.host());
    }
    NodeManager nodeManager = nodeManagers.remove(i);
    nodeManagerHosts.remove(i);
    String id = nodeManager.getNMContext().getNodeId().toString();
    nodeManager.stop();
    await("NodeManager " + id + " gone from the ResourceManager's running nodes",
        () -> nodeManagerState(node.host()) != NodeState.RUNNING);
    RMNode inactive = resourceManager.getRMContext().getInactiveRMNodes()
        .get(nodeManager.getNMContext().getNodeId());
    return "NodeManager " + id + " stopped" + (inactive == null ? ""
        : "; the ResourceManager lists it " + inactive.getState());
  }

  /** State of the NodeManager of a host in the ResourceManager (null if it has none active). */
  private NodeState nodeManagerState(String host) {
    for (RMNode node : resourceManager.getRMContext().getRMNodes().values()) {
      if (node.getNodeID().getHost().equals(host)) {
        return node.getState();
      }
    }
    return null;
  }

  /** Starts the DataNode of a worker, on the ports it had before if it ran already. */
  private DataNode startDataNode(ClusterLayout.Node node) throws IOException {
    if (dataNodeOn(node.host()) != null) {
      throw new IllegalArgumentException("a DataNode is already running on " + node.host());
    }
    Configuration conf = dataNodeConfs.computeIfAbsent(node.host(),
        host -> ClusterConfig.dataNode(base, node, baseDir));
    DataNode dataNode = DataNode.createDataNode(new String[0], new Configuration(conf));
    if (dataNode == null) {
      throw new IOException("DataNode on " + node.host() + " did not start (see the log)");
    }
    dataNodes.add(dataNode);
    return dataNode;
  }

  /**
   * Starts a stopped DataNode again with its storage (the control channel's
   * {@code start-datanode}); returns once it is registered and has sent its block report.
   */
  public String restartDataNode(ClusterLayout.Node node) throws IOException, InterruptedException {
    DataNode dataNode = startDataNode(node);
    await("DataNode " + node.host() + " registered", () -> dataNode.isDatanodeFullyStarted(true));
    return "DataNode " + node.host() + " running";
  }

  /**
   * Stops the DataNode of a worker as a crash looks to the rest of HDFS: its transfers and its
   * heartbeats end; the NameNode declares it dead only when its heartbeats expire.
   */
  public String stopDataNode(ClusterLayout.Node node) {
    DataNode dataNode = dataNodeOn(node.host());
    if (dataNode == null) {
      throw new IllegalArgumentException("no DataNode running on " + node.host());
    }
    dataNodes.remove(dataNode);
    dataNode.shutdown();
    return "DataNode " + node.host() + " stopped";
  }

  /** The running DataNode on a worker's address, or null. */
  public DataNode dataNodeOn(String host) {
    for (DataNode dataNode : dataNodes) {
      if (host.equals(dataNode.getXferAddress().getAddress().getHostAddress())) {
        return dataNode;
      }
    }
    return null;
  }

  /** NodeManagers the ResourceManager sees as RUNNING. */
  public int runningNodeManagers() {
    int running = 0;
    for (RMNode node : resourceManager.getRMContext().getRMNodes().values()) {
      if (node.getState() == NodeState.RUNNING) {
        running++;
      }
    }
    return running;
  }

  /** Writes one site file per entry and merges them all into the base configuration. */
  private void writeClientConf(Map<String, Map<String, String>> sites) throws IOException {
    for (Map.Entry<String, Map<String, String>> site : sites.entrySet()) {
      Configuration part = new Configuration(false);
      site.getValue().forEach(part::set);
      site.getValue().forEach(base::set);
      try (OutputStream out = new FileOutputStream(confDir.resolve(site.getKey()).toFile())) {
        part.writeXml(out);
      }
    }
  }

  private void awaitStarted(Service service, String what) throws InterruptedException {
    await(what + " started", () -> service.getServiceState() == Service.STATE.STARTED);
  }

  private void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + options.startTimeoutMs() * 1_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + options.startTimeoutMs()
            + " ms waiting for " + what);
      }
      Thread.sleep(200);
    }
    LOG.info("Ready: {}", what);
  }

  /**
   * Stops every daemon that was started, in reverse order; never throws. Workers stop in parallel
   * (a NodeManager waits up to 10 s for its log-deletion tasks when stopping).
   */
  @Override
  public void close() {
    stopQuietly("JobHistory server", jobHistoryServer);
    jobHistoryServer = null;
    List<Thread> stopping = new ArrayList<>();
    for (int i = 0; i < nodeManagers.size(); i++) {
      NodeManager nodeManager = nodeManagers.get(i);
      String what = "NodeManager " + nodeManagerHosts.get(i).host();
      stopping.add(started(() -> stopQuietly(what, nodeManager)));
    }
    joinAll(stopping);
    nodeManagers.clear();
    nodeManagerHosts.clear();
    stopQuietly("ResourceManager", resourceManager);
    resourceManager = null;
    stopping.clear();
    for (DataNode dataNode : dataNodes) {
      stopping.add(started(() -> shutdownQuietly(dataNode)));
    }
    joinAll(stopping);
    dataNodes.clear();
    if (nameNode != null) {
      try {
        nameNode.stop();
        nameNode.join();
      } catch (RuntimeException e) {
        LOG.warn("NameNode shutdown failed", e);
      }
      nameNode = null;
    }
  }

  private static void shutdownQuietly(DataNode dataNode) {
    try {
      dataNode.shutdown();
    } catch (RuntimeException e) {
      LOG.warn("DataNode shutdown failed", e);
    }
  }

  private static Thread started(Runnable task) {
    Thread thread = new Thread(task, "corral-minicluster-stop");
    thread.start();
    return thread;
  }

  private static void joinAll(List<Thread> threads) {
    for (Thread thread : threads) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static void stopQuietly(String what, Service service) {
    if (service == null) {
      return;
    }
    try {
      service.stop();
    } catch (RuntimeException e) {
      LOG.warn("{} did not stop cleanly", what, e);
    }
  }

  /**
   * A port free on {@code host} now, never handed out before by this JVM, and below the kernel's
   * ephemeral range ({@code net.ipv4.ip_local_port_range}), so no outgoing connection (a DataNode
   * registering, a client) can take it between this choice and its daemon's bind. Chosen by the kernel
   * (port 0) the port came from that range: in a fresh network namespace (the testbed) a client socket
   * took a ResourceManager's port before it bound, and the cluster failed to start.
   */
  static synchronized int freePort(String host) {
    int below = ephemeralRangeStart();
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = LOWEST_PORT + RANDOM.nextInt(Math.max(1, below - LOWEST_PORT));
      if (HANDED_OUT.contains(port)) {
        continue;
      }
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress(InetAddress.getByName(host), port), 1);
        HANDED_OUT.add(port);
        return port;
      } catch (BindException e) {
        // in use: try another
      } catch (IOException e) {
        throw new IllegalStateException("cannot find a free port on " + host, e);
      }
    }
    throw new IllegalStateException("no free port on " + host + " in " + LOWEST_PORT + ".." + (below - 1) + " after 1000 attempts");
  }

  /** The first port of the kernel's ephemeral range (32768, Linux's default, if it cannot be read). */
  static int ephemeralRangeStart() {
    try {
      String[] range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return Math.max(LOWEST_PORT + 1000, Integer.parseInt(range[0]));
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }

  static String dir(Path parent, String... parts) {
    File dir = parent.resolve(String.join(File.separator, parts)).toFile();
    if (!dir.isDirectory() && !dir.mkdirs()) {
      throw new IllegalStateException("cannot create directory " + dir);
    }
    return dir.getAbsolutePath();
  }
}
