package io.corralyarn.yarn;

import static io.corralyarn.yarn.YarnClusterSupport.metrics;
import static io.corralyarn.yarn.YarnClusterSupport.racksOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Set;

import io.corralyarn.minicluster.ClusterLayout;
import io.corralyarn.minicluster.EmbeddedCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When half of a rack set's NodeManagers are gone, its application runs anywhere. */
class RackSetFallbackTest {

  @TempDir
  static Path baseDir;
  static EmbeddedCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = YarnClusterSupport.start(baseDir);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void restrictionIsLiftedWhenHalfOfTheRackIsLost() throws Exception {
    try (YarnTestApp app = YarnTestApp.submit(cluster, Set.of("corral-racks-0:/rack-b"), 0)) {
      app.request(3);
      app.awaitAllocated(3);
      assertEquals(Set.of("/rack-b"), racksOf(cluster, app.allocatedHosts()));
      assertEquals(0, metrics(cluster).getRackSetFallbacks());
      app.release(3);

      ClusterLayout.Node other = cluster.layout().nodes().stream()
          .filter(n -> n.rack().equals("/rack-b") && !n.host().equals(app.amHost()))
          .findFirst().orElseThrow();
      cluster.stopNodeManager(other);
      app.request(10);
      app.awaitAllocated(10);

      assertEquals(1, metrics(cluster).getRackSetFallbacks());
      assertTrue(racksOf(cluster, app.allocatedHosts()).size() >= 2,
          "with one of two rack-b nodes left the app must be able to use other racks");
      assertTrue(app.allocatedHosts().stream().noneMatch(other.host()::equals));
    }
  }
}
