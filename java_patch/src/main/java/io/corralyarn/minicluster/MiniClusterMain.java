package io.corralyarn.minicluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Command-line entry of the embedded cluster, run by {@code python -m corral_yarn.minicluster
 * start}. Starts the cluster, writes the cluster description JSON (docs/minicluster.md) once every
 * daemon is healthy, and runs until SIGTERM/SIGINT, which stops every daemon. While it runs, its
 * {@link ControlServer} takes commands (stop and start a worker's daemons) on 127.0.0.1.
 *
 * <pre>
 * MiniClusterMain --racks K --nodes-per-rack M --base-dir DIR --out FILE
 *                 --app-classpath CP --examples-jar JAR [--exit-with-pid PID] [--secure true]
 * </pre>
 *
 * <p>With {@code --secure true} the cluster is Kerberized with its own KDC ({@link Kerberos}).
 *
 * With {@code --exit-with-pid} the cluster also stops when that process ends (a test session that
 * dies without stopping its cluster leaves nothing behind).
 */
public final class MiniClusterMain {

  private static final Logger LOG = LoggerFactory.getLogger(MiniClusterMain.class);
  static final String SCHEMA_VERSION = "corral-yarn/minicluster/v1";
  private static final List<String> OPTIONAL = List.of("--exit-with-pid", "--secure");

  private MiniClusterMain() {
  }

  /** A directory the launcher puts first on this JVM's classpath (for {@link Kerberos#publishJvmDefaults}). */
  static final String JVM_CONF_DIR = "jvm-conf";

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = parse(args);
    ClusterLayout layout = new ClusterLayout(Integer.parseInt(flags.get("--racks")),
        Integer.parseInt(flags.get("--nodes-per-rack")));
    Path baseDir = Path.of(flags.get("--base-dir")).toAbsolutePath();
    Path out = Path.of(flags.get("--out")).toAbsolutePath();
    List<String> classpath = List.of(flags.get("--app-classpath").split(":"));
    Kerberos kerberos = Boolean.parseBoolean(flags.getOrDefault("--secure", "false"))
        ? Kerberos.start(baseDir.resolve("kerberos"), layout) : null;
    if (kerberos != null) {
      Kerberos.publishJvmDefaults(baseDir.resolve(JVM_CONF_DIR));
    }
    EmbeddedCluster cluster = new EmbeddedCluster(layout, baseDir, classpath,
        EmbeddedCluster.Options.full(), kerberos);
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicReference<ControlServer> control = new AtomicReference<>();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      LOG.info("Stopping the embedded cluster");
      if (control.get() != null) {
        control.get().close();
      }
      cluster.close();
      if (kerberos != null) {
        kerberos.close();
      }
      stopped.countDown();
    }, "corral-minicluster-shutdown"));
    if (flags.containsKey("--exit-with-pid")) {
      long owner = Long.parseLong(flags.get("--exit-with-pid"));
      ProcessHandle.of(owner).ifPresentOrElse(
          handle -> handle.onExit().thenRun(() -> {
            LOG.info("Owner process {} ended", owner);
            System.exit(0);
          }),
          () -> System.exit(0));
    }
    long begin = System.nanoTime();
    try {
      cluster.start();
    } catch (Throwable e) {
      LOG.error("Embedded cluster failed to start", e);
      System.exit(1);
    }
    long startupMs = (System.nanoTime() - begin) / 1_000_000L;
    control.set(ControlServer.start(ControlServer.clusterCommands(cluster)));
    writeDescription(cluster, out, baseDir, flags.get("--examples-jar"), startupMs,
        flags.get("--app-classpath"), control.get().address(), kerberos);
    LOG.info("Cluster description written to {} (start-up {} ms)", out, startupMs);
    stopped.await();
  }

  private static Map<String, String> parse(String[] args) {
    List<String> required = List.of("--racks", "--nodes-per-rack", "--base-dir", "--out",
        "--app-classpath", "--examples-jar");
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!required.contains(args[i]) && !OPTIONAL.contains(args[i])) {
        throw new IllegalArgumentException("unknown flag " + args[i] + "; expected " + required
            + " and optionally " + OPTIONAL);
      }
      flags.put(args[i], args[i + 1]);
    }
    for (String flag : required) {
      if (!flags.containsKey(flag)) {
        throw new IllegalArgumentException("missing flag " + flag + "; required: " + required);
      }
    }
    return flags;
  }

  private static void writeDescription(EmbeddedCluster cluster, Path out, Path baseDir,
      String examplesJar, long startupMs, String classpath, String controlAddress,
      Kerberos kerberos) throws IOException {
    Configuration conf = cluster.clientConf();
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("schema_version", SCHEMA_VERSION);
    d.put("namenode_rpc", conf.get("fs.defaultFS"));
    d.put("webhdfs", "http://" + conf.get("dfs.namenode.http-address"));
    d.put("resourcemanager", "http://" + conf.get("yarn.resourcemanager.webapp.address"));
    d.put("jobhistory", "http://" + conf.get("mapreduce.jobhistory.webapp.address"));
    d.put("racks", racks(cluster));
    d.put("conf_dir", cluster.confDir().toString());
    d.put("log_dir", baseDir.resolve("logs").toString());
    d.put("pid", ProcessHandle.current().pid());
    d.put("examples_jar", Path.of(examplesJar).toAbsolutePath().toString());
    d.put("client_classpath", cluster.confDir() + ":" + classpath);
    d.put("base_dir", baseDir.toString());
    d.put("startup_ms", startupMs);
    d.put("control", Map.of("address", controlAddress));
    if (kerberos != null) {
      d.put("kerberos", kerberos.description());
    }
    Files.createDirectories(out.getParent());
    Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(tmp.toFile(), d);
    Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static List<Map<String, Object>> racks(EmbeddedCluster cluster) {
    ClusterLayout layout = cluster.layout();
    List<Map<String, Object>> racks = new ArrayList<>();
    for (int r = 0; r < layout.racks(); r++) {
      String rack = layout.rackName(r);
      List<Map<String, Object>> nodes = new ArrayList<>();
      for (int i = 0; i < cluster.nodeManagerHosts().size(); i++) {
        ClusterLayout.Node node = cluster.nodeManagerHosts().get(i);
        if (node.rack().equals(rack)) {
          nodes.add(node(node, cluster.nodeManagers().get(i), cluster.dataNodeOn(node.host())));
        }
      }
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", rack);
      entry.put("nodes", nodes);
      racks.add(entry);
    }
    return racks;
  }

  private static Map<String, Object> node(ClusterLayout.Node node, NodeManager nodeManager,
      DataNode dataNode) {
    Map<String, Object> n = new LinkedHashMap<>();
    n.put("host", node.host());
    n.put("datanode_http", "http://" + node.host() + ":" + dataNode.getInfoPort());
    n.put("nodemanager_http", "http://" + node.host() + ":"
        + nodeManager.getNMContext().getHttpPort());
    n.put("nodemanager_id", nodeManager.getNMContext().getNodeId().toString());
    return n;
  }
}
