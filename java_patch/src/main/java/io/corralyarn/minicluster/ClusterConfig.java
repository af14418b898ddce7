package io.corralyarn.minicluster;

import static io.corralyarn.minicluster.EmbeddedCluster.dir;
import static io.corralyarn.minicluster.EmbeddedCluster.freePort;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * The configuration of the embedded cluster: the four client site files, and the per-worker
 * overrides of each DataNode and NodeManager (its own address, directories and ports).
 * docs/minicluster.md and docs/deploy.md explain the Corral-specific keys.
 */
final class ClusterConfig {

  private static final String MASTER = ClusterLayout.MASTER_HOST;
  /** The reservable queue that holds YARN reservations. */
  static final String RESERVATIONS = "reservations";
  /** System property naming a shared library every container preloads (the testbed's shim). */
  static final String CONTAINER_PRELOAD_KEY = "corral.minicluster.container-preload";
  /** System property naming the ResourceManager's scheduler class (default Corral's). */
  static final String SCHEDULER_KEY = "corral.minicluster.scheduler";
  static final String CORRAL_SCHEDULER = "io.corralyarn.yarn.CorralCapacityScheduler";

  private ClusterConfig() {
  }

  /** Site file name to its properties; {@code kerberos} null for an insecure cluster. */
  static Map<String, Map<String, String>> sites(ClusterLayout layout, Path baseDir, Path confDir,
      List<String> applicationClasspath, EmbeddedCluster.Options options, Kerberos kerberos) {
    Map<String, Map<String, String>> sites = new LinkedHashMap<>();
    sites.put("core-site.xml", core(baseDir, confDir, options));
    sites.put("hdfs-site.xml", hdfs(layout, baseDir));
    sites.put("yarn-site.xml", yarn(baseDir, confDir, applicationClasspath, options));
    sites.put("mapred-site.xml", mapred(applicationClasspath));
    if (kerberos != null) {
      kerberos.sites().forEach((site, secure) -> sites.get(site).putAll(secure));
    }
    return sites;
  }

  private static Map<String, String> core(Path baseDir, Path confDir,
      EmbeddedCluster.Options options) {
    Map<String, String> c = new LinkedHashMap<>();
    if (options.hdfs()) {
      c.put("fs.defaultFS", "hdfs://" + MASTER + ":" + freePort(MASTER));
    }
    c.put("hadoop.tmp.dir", dir(baseDir, "tmp"));
    // One rack table for HDFS and YARN: both resolve a worker's address to the same rack.
    c.put("net.topology.node.switch.mapping.impl", "org.apache.hadoop.net.TableMapping");
    c.put("net.topology.table.file.name", confDir.resolve("topology.table").toString());
    c.put("ipc.client.connect.max.retries", "3");
    c.put("hadoop.http.staticuser.user", System.getProperty("user.name"));
    return c;
  }

  private static Map<String, String> hdfs(ClusterLayout layout, Path baseDir) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("dfs.namenode.http-address", MASTER + ":" + freePort(MASTER));
    c.put("dfs.namenode.name.dir", dir(baseDir, "hdfs", "name"));
    c.put("dfs.block.replicator.classname", "io.corralyarn.hdfs.CorralBlockPlacementPolicy");
    c.put("dfs.replication", String.valueOf(Math.min(3, layout.nodes().size())));
    c.put("dfs.permissions.enabled", "false");
    c.put("dfs.namenode.safemode.extension", "0");
    c.put("dfs.heartbeat.interval", "1");
    // Workers are bare loopback addresses with no reverse DNS entry.
    c.put("dfs.namenode.datanode.registration.ip-hostname-check", "false");
    // Small blocks are allowed so tests and the demo can make multi-block files cheaply.
    c.put("dfs.namenode.fs-limits.min-block-size", "65536");
    c.put("dfs.datanode.du.reserved", "0");
    // All DataNodes share one machine's disk and CPU, so one node's transfer count says nothing
    // about its load; with considerLoad an upload's own pipeline made its rack's nodes "busier than
    // twice the average", and the NameNode put R_j's replica on another rack (thesis §4.1).
    c.put("dfs.namenode.redundancy.considerLoad", "false");
    // HDFS clients (tasks, AMs) ride out a NameNode restart: a dropped connection, a refused one or
    // safe mode is retried every second up to 15 times, instead of failing the call at once
    c.put("dfs.client.retry.policy.enabled", "true");
    c.put("dfs.client.retry.policy.spec", "1000,15");
    return c;
  }

  private static Map<String, String> yarn(Path baseDir, Path confDir,
      List<String> applicationClasspath, EmbeddedCluster.Options options) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("yarn.resourcemanager.hostname", MASTER);
    for (String key : List.of("address", "scheduler.address", "resource-tracker.address",
        "admin.address", "webapp.address")) {
      c.put("yarn.resourcemanager." + key, MASTER + ":" + freePort(MASTER));
    }
    // Corral's scheduler; the soak benchmark also runs the stock CapacityScheduler to compare.
    c.put("yarn.resourcemanager.scheduler.class", System.getProperty(SCHEDULER_KEY, CORRAL_SCHEDULER));
    // Standard YARN priorities order jobs sharing a rack; 0 (the default) disables them.
    c.put("yarn.cluster.max-application-priority", "1000");
    c.put("yarn.scheduler.capacity.root.queues", "default," + RESERVATIONS);
    c.putAll(reservations());
    c.put("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    // One container per node heartbeat spreads containers over nodes as on a busy real cluster
    // instead of packing a small cluster's first heartbeating node.
    c.put("yarn.scheduler.capacity.per-node-heartbeat.multiple-assignments-enabled", "false");
    // A latency file in the conf directory orders latency-sensitive applications' nodes (docs/deploy.md).
    Path latency = confDir.resolve(EmbeddedCluster.LATENCY_FILE);
    if (Files.exists(latency)) {
      c.put("yarn.scheduler.corral.latency.file", latency.toString());
    }
    c.put("yarn.scheduler.minimum-allocation-mb", "128");
    c.put("yarn.scheduler.maximum-allocation-mb", String.valueOf(options.nodeMemoryMb()));
    c.put("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "250");
    c.putAll(recovery(baseDir));
    c.put("yarn.nodemanager.resource.memory-mb", String.valueOf(options.nodeMemoryMb()));
    c.put("yarn.nodemanager.resource.cpu-vcores", String.valueOf(options.nodeVcores()));
    c.put("yarn.nodemanager.vmem-check-enabled", "false");
    c.put("yarn.nodemanager.pmem-check-enabled", "false");
    c.put("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage",
        "99");
    c.put("yarn.nodemanager.aux-services", "mapreduce_shuffle");
    c.put("yarn.nodemanager.aux-services.mapreduce_shuffle.class",
        "org.apache.hadoop.mapred.ShuffleHandler");
    c.put("yarn.nodemanager.remote-app-log-dir", dir(baseDir, "app-logs"));
    // Containers run the JVM of this launcher; NodeManagers inherit no JAVA_HOME otherwise.
    c.put("yarn.nodemanager.admin-env", "MALLOC_ARENA_MAX=2,JAVA_HOME="
        + System.getProperty("java.home") + containerPreload());
    if (!applicationClasspath.isEmpty()) {
      c.put("yarn.application.classpath", classpath(confDir, applicationClasspath));
    }
    return c;
  }

  /**
   * ResourceManager restart with work-preserving recovery (docs/minicluster.md): applications kept
   * in a LevelDB state store under the base directory, running containers taken back from the
   * NodeManagers as they register again; clients, AMs and NodeManagers retry the RM every second.
   */
  private static Map<String, String> recovery(Path baseDir) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("yarn.resourcemanager.recovery.enabled", "true");
    c.put("yarn.resourcemanager.work-preserving-recovery.enabled", "true");
    c.put("yarn.resourcemanager.store.class",
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.LeveldbRMStateStore");
    c.put("yarn.resourcemanager.leveldb-state-store.path", dir(baseDir, "yarn", "rm-state"));
    // no new containers for this long after a restart, while the NodeManagers register again
    c.put("yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms", "5000");
    c.put("yarn.resourcemanager.connect.retry-interval.ms", "1000");
    c.put("yarn.nodemanager.recovery.enabled", "true");
    return c;
  }

  /**
   * The YARN reservation system (docs/deploy.md): a reservable plan queue beside {@code default}.
   * {@code default} is guaranteed half the cluster but, with a maximum capacity of 100 % and a
   * user limit factor of 2, one user's ad hoc jobs still get the whole cluster while no
   * reservation runs.
   */
  private static Map<String, String> reservations() {
    Map<String, String> c = new LinkedHashMap<>();
    String root = "yarn.scheduler.capacity.root.";
    c.put("yarn.resourcemanager.reservation-system.enable", "true");
    c.put(root + "default.capacity", "50");
    c.put(root + "default.maximum-capacity", "100");
    c.put(root + "default.user-limit-factor", "2");
    c.put(root + RESERVATIONS + ".capacity", "50");
    c.put(root + RESERVATIONS + ".reservable", "true");
    return c;
  }

  private static Map<String, String> mapred(List<String> applicationClasspath) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("mapreduce.framework.name", "yarn");
    c.put("mapreduce.jobhistory.address", MASTER + ":" + freePort(MASTER));
    c.put("mapreduce.jobhistory.webapp.address", MASTER + ":" + freePort(MASTER));
    c.put("mapreduce.jobhistory.admin.address", MASTER + ":" + freePort(MASTER));
    c.put("mapreduce.jobhistory.move.interval-ms", "1000");
    if (!applicationClasspath.isEmpty()) {
      c.put("mapreduce.application.classpath", String.join(",", applicationClasspath));
    }
    c.put("yarn.app.mapreduce.am.resource.mb", "512");
    c.put("yarn.app.mapreduce.am.command-opts", "-Xmx384m -XX:TieredStopAtLevel=1");
    c.put("mapreduce.map.memory.mb", "512");
    c.put("mapreduce.reduce.memory.mb", "512");
    c.put("mapreduce.map.java.opts", "-Xmx384m -XX:TieredStopAtLevel=1");
    c.put("mapreduce.reduce.java.opts", "-Xmx384m -XX:TieredStopAtLevel=1");
    c.put("mapreduce.shuffle.port", "0");
    return c;
  }

  /**
   * On the shaped testbed (docs/testbed.md) every container preloads the shim that binds its
   * client sockets to its node's address, so tc sees which rack a task's traffic leaves.
   */
  private static String containerPreload() {
    String library = System.getProperty(CONTAINER_PRELOAD_KEY, "");
    return library.isEmpty() ? "" : ",LD_PRELOAD=" + library;
  }

  private static String classpath(Path confDir, List<String> entries) {
    return confDir + "," + String.join(",", entries);
  }

  /** A DataNode's configuration: its own address for every endpoint and for its RPC clients. */
  static Configuration dataNode(Configuration base, ClusterLayout.Node node, Path baseDir) {
    Configuration c = new Configuration(base);
    String host = node.host();
    c.set("dfs.datanode.address", host + ":" + freePort(host));
    c.set("dfs.datanode.http.address", host + ":" + freePort(host));
    c.set("dfs.datanode.ipc.address", host + ":" + freePort(host));
    // the DataNode's internal web proxy binds localhost; left at port 0 the kernel may hand it a
    // port already given to a master daemon that has not bound it yet (a failed CI start-up)
    c.set("dfs.datanode.http.internal-proxy.port", String.valueOf(freePort("localhost")));
    c.set("dfs.datanode.hostname", host);
    c.set("dfs.datanode.data.dir", dir(baseDir, "hdfs", "data", host));
    c.set("hadoop.rpc.socket.factory.class.default", BoundSocketFactory.class.getName());
    c.set(BoundSocketFactory.BIND_ADDRESS_KEY, host);
    return c;
  }

  /** A NodeManager's configuration: its own address, ports and directories (recovery's too). */
  static Configuration nodeManager(Configuration base, ClusterLayout.Node node, Path baseDir) {
    Configuration c = new Configuration(base);
    String host = node.host();
    c.set("yarn.nodemanager.hostname", host);
    c.set("yarn.nodemanager.address", host + ":" + freePort(host));
    c.set("yarn.nodemanager.localizer.address", host + ":" + freePort(host));
    c.set("yarn.nodemanager.webapp.address", host + ":" + freePort(host));
    c.set("yarn.nodemanager.local-dirs", dir(baseDir, "yarn", host, "local"));
    c.set("yarn.nodemanager.log-dirs", dir(baseDir, "yarn", host, "logs"));
    c.set("yarn.nodemanager.recovery.dir", dir(baseDir, "yarn", host, "recovery"));
    return c;
  }
}
