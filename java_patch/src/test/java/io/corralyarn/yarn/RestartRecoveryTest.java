package io.corralyarn.yarn;

import static io.corralyarn.yarn.YarnClusterSupport.metrics;
import static io.corralyarn.yarn.YarnClusterSupport.racksOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import io.corralyarn.minicluster.ClusterLayout;
import io.corralyarn.minicluster.EmbeddedCluster;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restarts of the embedded cluster's masters (issue 20 item 1): the ResourceManager with
 * work-preserving recovery, and the NameNode on the same ports and metadata directory.
 */
class RestartRecoveryTest {

  @TempDir
  static Path baseDir;
  static EmbeddedCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = new EmbeddedCluster(new ClusterLayout(3, 2), baseDir, List.of(),
        new EmbeddedCluster.Options(true, false, YarnClusterSupport.NODE_MB, 8, 120_000));
    cluster.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * A running application confined to /rack-b with priority 5 keeps its attempt, its AM container,
   * its priority and its rack set through a restart; the restart lifts no restriction, and the
   * containers it gets afterwards are all in /rack-b.
   */
  @Test
  void runningApplicationKeepsRackSetAndPriorityThroughResourceManagerRestart() throws Exception {
    try (YarnTestApp app = YarnTestApp.submit(cluster, Set.of("corral-racks-0:/rack-b",
        "corral-job:restart", "corral-plan:p1"), 5)) {
      app.request(2);
      app.awaitAllocated(2);
      ApplicationAttemptId attempt = app.attempt().getAppAttemptId();
      String amHost = app.amHost();

      cluster.restartResourceManager();

      RMApp recovered = cluster.resourceManager().getRMContext().getRMApps().get(app.id());
      assertEquals(attempt, recovered.getCurrentAppAttempt().getAppAttemptId(),
          "work-preserving: the same attempt goes on");
      assertEquals(amHost, app.amHost());
      assertEquals(5, recovered.getApplicationPriority().getPriority());
      var scheduler = (AbstractYarnScheduler<?, ?>) cluster.resourceManager()
          .getResourceScheduler();
      assertEquals(5, scheduler.getApplicationAttempt(attempt).getPriority().getPriority());
      var amContainer = recovered.getCurrentAppAttempt().getMasterContainer().getId();
      long deadline = System.currentTimeMillis() + 60_000;
      while (scheduler.getApplicationAttempt(attempt).getLiveContainers().stream()
          .noneMatch(c -> c.getContainerId().equals(amContainer))) {
        assertTrue(System.currentTimeMillis() < deadline,
            "the AM container is taken back from its NodeManager");
        Thread.sleep(200);
      }

      app.request(4);
      app.awaitAllocated(6);  // the AM registers again (AMRMClient's resync) and asks again
      assertEquals(RMAppState.RUNNING, recovered.getState());
      assertEquals(1, recovered.getAppAttempts().size(), "no new attempt");
      assertEquals(Set.of("/rack-b"), racksOf(cluster, app.allocatedHosts()), app.usage());
      assertEquals(Set.of("/rack-a", "/rack-c"), app.blacklist());
      assertEquals(0, metrics(cluster).getRackSetFallbacks(), "no restriction lifted");
      assertEquals(1, metrics(cluster).getRestrictedApplications());
    }
  }

  @Test
  void fileWrittenBeforeNameNodeRestartIsReadAfterIt() throws Exception {
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/restart/words.txt");
    byte[] data = "a b c d e f\n".repeat(10_000).getBytes(StandardCharsets.UTF_8);
    try (FileSystem fs = FileSystem.newInstance(cluster.clientConf())) {
      try (FSDataOutputStream out = fs.create(file)) {
        out.write(data);
      }
      cluster.restartNameNode();
      byte[] read = new byte[data.length];
      try (var in = fs.open(file)) {
        IOUtils.readFully(in, read, 0, read.length);
      }
      assertEquals(new String(data, StandardCharsets.UTF_8), new String(read,
          StandardCharsets.UTF_8));
      assertEquals(data.length, fs.getFileStatus(file).getLen());
    }
  }
}
