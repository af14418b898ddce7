package io.corralyarn.yarn;

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

  static EmbeddedCluster start(Path baseDir) throws Exception {
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
