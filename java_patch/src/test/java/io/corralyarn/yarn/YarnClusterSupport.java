package io.corralyarn.yarn;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.corralyarn.minicluster.ClusterLayout;
import io.corralyarn.minicluster.EmbeddedCluster;

/** An embedded YARN cluster (no HDFS) for scheduler tests: 3 racks x 2 nodes of 4 containers. */
final class YarnClusterSupport {

  static final int NODE_MB = 4 * YarnTestApp.CONTAINER_MB;

  private YarnClusterSupport() {
  }

  /**
   * Rack-pair latencies (µs) the scheduler reads: 20 inside a rack, 500 between racks, so a
   * latency-sensitive application's near side is its AM's rack. Injected, not measured.
   */
  static final String LATENCY_CSV = "/rack-a,/rack-b,/rack-c\n20,500,500\n500,20,500\n500,500,20\n";

  static EmbeddedCluster start(Path baseDir) throws Exception {
    Files.createDirectories(baseDir.resolve("conf"));
    Files.writeString(baseDir.resolve("conf").resolve(EmbeddedCluster.LATENCY_FILE), LATENCY_CSV);
    EmbeddedCluster cluster = new EmbeddedCluster(new ClusterLayout(3, 2), baseDir, List.of(),
        new EmbeddedCluster.Options(false, false, NODE_MB, 8, 120_000));
    cluster.start();
    return cluster;
  }

  static Map<String, String> rackOfHost(EmbeddedCluster cluster) {
    Map<String, String> racks = new HashMap<>();
    for (ClusterLayout.Node node : cluster.layout().nodes()) {
      racks.put(node.host(), node.rack());
    }
    return racks;
  }

  static Set<String> racksOf(EmbeddedCluster cluster, List<String> hosts) {
    Map<String, String> racks = rackOfHost(cluster);
    Set<String> result = new TreeSet<>();
    for (String host : hosts) {
      result.add(racks.get(host));
    }
    return result;
  }

  static CorralSchedulerMetrics metrics(EmbeddedCluster cluster) {
    return ((CorralCapacityScheduler) cluster.resourceManager().getResourceScheduler())
        .getCorralMetrics();
  }
}
