package io.corralyarn.yarn;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.corralyarn.minicluster.EmbeddedCluster;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;

/**
 * A real YARN application on the embedded cluster whose AM container runs {@code sleep}, while
 * the test itself registers as that attempt's ApplicationMaster (with the attempt's AMRM token)
 * and asks for containers. Containers are allocated but never launched, so many fit on a small
 * machine; everything else goes through the ResourceManager and scheduler unchanged.
 */
final class YarnTestApp implements AutoCloseable {

  static final int CONTAINER_MB = 512;
  private static final long TIMEOUT_MS = 120_000;  // generous: the CI machine's 2 cores are shared

  private final EmbeddedCluster cluster;
  private final YarnClient yarn;
  private final ApplicationId appId;
  private final List<Container> allocated = new ArrayList<>();
  private final List<ContainerRequest> outstanding = new ArrayList<>();
  private UserGroupInformation ugi;
  private AMRMClient<ContainerRequest> amrm;

  private YarnTestApp(EmbeddedCluster cluster, YarnClient yarn, ApplicationId appId) {
    this.cluster = cluster;
    this.yarn = yarn;
    this.appId = appId;
  }

  /** Submits an application with these tags and priority; returns once its AM container runs. */
  static YarnTestApp submit(EmbeddedCluster cluster, Set<String> tags, int priority)
      throws Exception {
    YarnTestApp testApp = submitStarting(cluster, tags, priority);
    testApp.register();
    return testApp;
  }

  /**
   * Submits an application whose AM container is launched but never registers, as an AM whose
   * JVM is still starting; returns once the container is launched.
   */
  static YarnTestApp submitStarting(EmbeddedCluster cluster, Set<String> tags, int priority)
      throws Exception {
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(cluster.clientConf());
    yarn.start();
    YarnClientApplication app = yarn.createApplication();
    ApplicationSubmissionContext context = app.getApplicationSubmissionContext();
    context.setApplicationName("corral-test");
    context.setApplicationTags(tags);
    context.setPriority(Priority.newInstance(priority));
    context.setResource(Resource.newInstance(CONTAINER_MB, 1));
    context.setAMContainerSpec(ContainerLaunchContext.newInstance(Map.of(), Map.of(),
        List.of("sleep 600"), null, null, null));
    ApplicationId appId = yarn.submitApplication(context);
    YarnTestApp testApp = new YarnTestApp(cluster, yarn, appId);
    testApp.await("AM container of " + appId + " launched",
        () -> testApp.attempt() != null
            && testApp.attempt().getAppAttemptState() == RMAppAttemptState.LAUNCHED);
    return testApp;
  }

  ApplicationId id() {
    return appId;
  }

  RMAppAttempt attempt() {
    return cluster.resourceManager().getRMContext().getRMApps().get(appId)
        .getCurrentAppAttempt();
  }

  /** Host of the AM container. */
  String amHost() {
    return attempt().getMasterContainer().getNodeId().getHost();
  }

  private void register() throws Exception {
    Configuration conf = cluster.clientConf();
    Token<AMRMTokenIdentifier> token = new Token<>(attempt().getAMRMToken());
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    ugi = UserGroupInformation.createRemoteUser(UserGroupInformation.getCurrentUser()
        .getShortUserName());
    ugi.addToken(token);
    amrm = as(() -> {
      AMRMClient<ContainerRequest> client = AMRMClient.createAMRMClient();
      client.init(conf);
      client.start();
      client.registerApplicationMaster("", 0, "");
      return client;
    });
  }

  /** Asks for {@code count} more containers anywhere (the scheduler decides where). */
  void request(int count) {
    for (int i = 0; i < count; i++) {
      ask(new ContainerRequest(Resource.newInstance(CONTAINER_MB, 1), null, null,
          Priority.newInstance(1)));
    }
  }

  /**
   * Asks for {@code count} more containers on {@code host}, as a map asks for its data's node: only
   * there ({@code relaxLocality} false, priority 2) or preferably there (priority 3).
   */
  void requestOn(String host, int count, boolean relaxLocality) {
    for (int i = 0; i < count; i++) {
      ask(new ContainerRequest(Resource.newInstance(CONTAINER_MB, 1), new String[] {host}, null,
          Priority.newInstance(relaxLocality ? 3 : 2), relaxLocality));
    }
  }

  private void ask(ContainerRequest request) {
    amrm.addContainerRequest(request);
    outstanding.add(request);
  }

  /** Heartbeats once; collects newly allocated containers. Returns how many arrived. */
  int heartbeat() throws Exception {
    AllocateResponse response = as(() -> amrm.allocate(0.1f));
    List<Container> fresh = response.getAllocatedContainers();
    for (Container container : fresh) {
      for (ContainerRequest request : outstanding) {
        if (request.getPriority().equals(container.getPriority())) {
          amrm.removeContainerRequest(request);  // the one it answers, its node and rack included
          outstanding.remove(request);
          break;
        }
      }
    }
    allocated.addAll(fresh);
    return fresh.size();
  }

  /** Heartbeats until the app holds {@code count} containers. */
  void awaitAllocated(int count) throws Exception {
    await(count + " containers for " + appId, () -> {
      try {
        heartbeat();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      return allocated.size() >= count;
    });
  }

  /** Heartbeats {@code beats} times, a few node heartbeats apart; returns new allocations. */
  int observe(int beats) throws Exception {
    int fresh = 0;
    for (int i = 0; i < beats; i++) {
      fresh += heartbeat();
      Thread.sleep(300);
    }
    return fresh;
  }

  /** Gives back {@code count} held containers. */
  void release(int count) throws Exception {
    for (int i = 0; i < count; i++) {
      ContainerId id = allocated.remove(allocated.size() - 1).getId();
      amrm.releaseAssignedContainer(id);
    }
    heartbeat();
  }

  List<Container> allocated() {
    return List.copyOf(allocated);
  }

  List<String> allocatedHosts() {
    List<String> hosts = new ArrayList<>();
    for (Container container : allocated) {
      hosts.add(container.getNodeId().getHost());
    }
    return hosts;
  }

  /** The places (hosts, racks) the scheduler currently blacklists for this application. */
  Set<String> blacklist() {
    var scheduler = (AbstractYarnScheduler<?, ?>) cluster.resourceManager().getResourceScheduler();
    return scheduler.getApplicationAttempt(attempt().getAppAttemptId()).getAppSchedulingInfo()
        .getBlackListCopy();
  }

  private <T> T as(PrivilegedExceptionAction<T> action) throws IOException, InterruptedException {
    return ugi.doAs(action);
  }

  private void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting for " + what + "; " + usage());
      }
      Thread.sleep(200);
    }
  }

  /**
   * What the ResourceManager says the application holds, and the scheduler's view of it and of
   * every node, for failure messages (a flaky failure must say where the containers went).
   */
  String usage() {
    String held = "this client holds " + allocated.size();
    try {
      var report = yarn.getApplicationReport(appId).getApplicationResourceUsageReport();
      return held + "; the RM reports " + report.getNumUsedContainers() + " used and "
          + report.getNumReservedContainers() + " reserved containers; " + schedulerView();
    } catch (Exception e) {
      return held + " (no report from the RM: " + e + ")";
    }
  }

  private String schedulerView() {
    var scheduler = (AbstractYarnScheduler<?, ?>) cluster.resourceManager().getResourceScheduler();
    var app = scheduler.getApplicationAttempt(attempt().getAppAttemptId());
    StringBuilder view = new StringBuilder("scheduler: ");
    if (app != null) {
      view.append("pending ").append(app.getAppSchedulingInfo().getAllResourceRequests())
          .append(", blacklisted ").append(app.getAppSchedulingInfo().getBlackListCopy())
          .append(", live containers ").append(app.getLiveContainers().size());
    }
    for (var node : cluster.resourceManager().getRMContext().getRMNodes().values()) {
      var schedulerNode = scheduler.getSchedulerNode(node.getNodeID());
      if (schedulerNode != null) {
        view.append("; ").append(node.getRackName()).append(' ').append(node.getNodeID())
            .append(": ").append(schedulerNode.getNumContainers()).append(" containers, ")
            .append(schedulerNode.getUnallocatedResource()).append(" free, reserved ")
            .append(schedulerNode.getReservedContainer());
      }
    }
    return view.toString();
  }

  /** Kills the application (releasing all its containers at once) and waits until it is gone. */
  @Override
  public void close() throws Exception {
    try {
      if (amrm != null) {
        amrm.stop();
      }
      yarn.killApplication(appId);
      await(appId + " killed", () -> cluster.resourceManager().getRMContext().getRMApps()
          .get(appId).getFinalApplicationStatus() == FinalApplicationStatus.KILLED
          && cluster.resourceManager().getResourceScheduler().getSchedulerAppInfo(
              attempt().getAppAttemptId()) == null);
    } finally {
      yarn.stop();
    }
  }
}
