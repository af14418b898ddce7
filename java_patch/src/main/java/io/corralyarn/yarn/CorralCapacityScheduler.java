package io.corralyarn.yarn;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.ConfigurationProvider;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceLimits;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.QueueEntitlement;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CapacityScheduler, plus Corral's task placement (thesis §4.1, §4.5.1): an application
 * tagged with a rack set R_j (see {@link RackSetTags}) gets containers, its AM container included,
 * only on nodes of R_j. Applications without the tag are untouched. Standard YARN application
 * priority (given at submission; {@code yarn.cluster.max-application-priority} must be above 0)
 * orders applications competing for a node of a shared rack, as in the CapacityScheduler.
 *
 * <p>The restriction is YARN's own per-application blacklist, holding every rack outside R_j; the
 * CapacityScheduler skips blacklisted racks on every allocation path. It is set when an attempt
 * starts, again on the attempt's first allocate call once its AM runs (YARN keeps the AM
 * container's blacklist apart), and whenever a node joins, leaves or is resized; the racks' health
 * comes from a {@link RackCensus} kept up to date by those node events. A running application's
 * blacklist catches up with a node event on its next allocate call, so an allocate call costs O(1)
 * unless the census changed (then O(racks)), and a node event O(restricted applications) plus
 * O(racks) per application still waiting for its AM container. When the live
 * NodeManagers of R_j fall to {@value #FALLBACK_FRACTION_DEFAULT} (configurable with
 * {@value #FALLBACK_FRACTION_KEY}) or less of the machines ever seen there, or no live node of
 * R_j could hold the AM container, the restriction is lifted for that application (logged, counted
 * in {@link CorralSchedulerMetrics} and kept with its reason in {@link RackSetFallbackLog}) and
 * restored once enough NodeManagers are back.
 * A malformed tag is logged and the application is scheduled as by the CapacityScheduler. With
 * a grant secret ({@value RackSetGrant#SECRET_KEY} or {@value RackSetGrant#SECRET_FILE_KEY}), a
 * rack set or a priority above the queue's default is honoured only under a valid planner grant
 * ({@link RackSetGrant}); otherwise the application is scheduled as an ordinary one at the
 * queue's default priority (logged, metric {@code UngrantedTags}).
 *
 * <p>A confined application whose pending asks are its AM container or name no node (reduces; maps
 * whose preferred nodes are elsewhere) holds a heartbeating node of R_j off with its blacklist while
 * that node runs more containers (of any application) than another live node of R_j that can hold
 * the smallest of those asks; the node's next heartbeat decides again. An ask naming the node (a
 * data-local map) keeps it open: locality wins. The CapacityScheduler alone gives a container to
 * the first node of R_j that heartbeats with room, and on the testbed's nodes of a third of a core
 * jobs' JVMs started and ran beside one another while the rack-mate sat idle (docs/planner.md). No
 * starvation: a node's hold ends at its next heartbeat unless the application got a container
 * elsewhere meanwhile, so a pending ask waits at most one heartbeat interval per hold while it gets
 * nothing, and is held again only after another node took one of its asks. O(applications confined
 * to the node's rack x (their scheduler keys + nodes of R_j)) per node heartbeat.
 *
 * <p>With a latency file ({@value NodeLatency#FILE_KEY}, read when the scheduler starts), an
 * application tagged {@code corral-latency:<function>} and confined to R_j gets its containers on
 * the nodes of R_j in order of their network latency to its AM container, the root task (NoMora;
 * {@link LatencyOrder}): on each allocate call the nodes beyond the nearest ones that can hold its
 * pending asks are held back with YARN's per-application blacklist, at O(nodes of R_j) per call.
 * Pending there excludes what the AM's absolute ask counts repeat for containers allocated to it
 * but not yet pulled (see {@link #noteStaleAsks}).
 * The AM container itself is placed as before. The tag narrows placement only, so it needs no
 * grant.
 *
 * <p>After a ResourceManager restart with work-preserving recovery, the CapacityScheduler's own
 * recovery re-adds every application from the state store (same tags, priority and submit time,
 * so the same verdict, planner grant included) and its running containers as the NodeManagers
 * register again; this class changes one thing there: a rack set none of whose NodeManagers has
 * registered with the restarted RM yet is not taken for lost (no fallback) until the NodeManager
 * liveness expiry ({@code yarn.nm.liveness-monitor.expiry-interval-ms}) has passed since the
 * recovery, as the RM itself would declare a silent node lost only then.
 *
 * <p>Configure with
 * {@code yarn.resourcemanager.scheduler.class=io.corralyarn.yarn.CorralCapacityScheduler}.
 */
public class CorralCapacityScheduler extends CapacityScheduler {

  private static final Logger LOG = LoggerFactory.getLogger(CorralCapacityScheduler.class);

  /** Live fraction of a rack set's NodeManagers at or below which its restriction is lifted. */
  public static final String FALLBACK_FRACTION_KEY =
      "yarn.scheduler.corral.rack-set.fallback-live-fraction";
  public static final double FALLBACK_FRACTION_DEFAULT = 0.5;

  /**
   * The CapacityScheduler's asynchronous scheduling, on by default in Hadoop 3.5
   * (CapacitySchedulerConfiguration.DEFAULT_SCHEDULE_ASYNCHRONOUSLY_ENABLE). Its scheduling thread
   * offers every node's free resources to the applications every few milliseconds, apart from the
   * node heartbeats, and a slot freed on a shared rack then went to a lower-priority application
   * (CorralCapacitySchedulerTest, docs/rack-tags.md); Corral's priorities (the planner's order,
   * thesis §4.3.3) need the node-heartbeat allocation, which offers each freed slot to the
   * applications in priority order. Unset in yarn-site.xml and capacity-scheduler.xml, it is turned
   * off; set explicitly, it is respected (and warned of when true).
   */
  public static final String ASYNC_SCHEDULING_KEY =
      "yarn.scheduler.capacity.schedule-asynchronously.enable";

  private final ConcurrentMap<ApplicationId, Set<String>> rackSets = new ConcurrentHashMap<>();
  private final Set<ApplicationId> lifted = ConcurrentHashMap.newKeySet();
  // per application: the census version and AM phase its blacklist was last computed for
  private final ConcurrentMap<ApplicationId, Long> enforcedAt = new ConcurrentHashMap<>();
  private final RackCensus census = new RackCensus();
  private volatile double fallbackFraction = FALLBACK_FRACTION_DEFAULT;
  private volatile CorralSchedulerMetrics metrics;
  private final RackSetFallbackLog fallbackLog = new RackSetFallbackLog();
  private volatile RackSetGrant grant;  // null: unsigned mode
  private volatile NodeLatency latency;  // null: no latency ordering
  private final Set<ApplicationId> latencySensitive = ConcurrentHashMap.newKeySet();
  // per latency-sensitive application: the hosts its blacklist holds back for latency now
  private final ConcurrentMap<ApplicationId, Set<String>> heldBack = new ConcurrentHashMap<>();
  // per latency-sensitive application: asks its AM's last counts repeat for containers it had not seen
  private final ConcurrentMap<ApplicationId, Resource> staleAsks = new ConcurrentHashMap<>();
  // confined applications whose current attempt may still wait for its AM container (pruned lazily)
  private final Set<ApplicationId> waitingForAm = ConcurrentHashMap.newKeySet();
  // per rack (lower case): the applications whose rack set holds it
  private final ConcurrentMap<String, Set<ApplicationId>> confinedByRack = new ConcurrentHashMap<>();
  // per confined application: the nodes held off as busier than a rack-mate, with the application's
  // allocated-container count when each hold began (in the current AM phase)
  private final ConcurrentMap<ApplicationId, Map<String, Integer>> heldOff = new ConcurrentHashMap<>();
  // after a restart: until when R_j's NodeManagers not registered again count as not lost (0: none)
  private volatile long recoveryGraceEndMs;

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    double fraction = conf.getDouble(FALLBACK_FRACTION_KEY, FALLBACK_FRACTION_DEFAULT);
    if (fraction < 0 || fraction >= 1) {
      throw new IllegalArgumentException(FALLBACK_FRACTION_KEY + " must be in [0, 1), got "
          + fraction);
    }
    fallbackFraction = fraction;
    grant = RackSetGrant.fromConfiguration(conf);
    latency = latencyTable(conf);
    String async = asyncScheduling(conf);
    if (async == null) {
      conf.setBoolean(ASYNC_SCHEDULING_KEY, false);  // read by the CapacityScheduler's own conf too
      LOG.info("{} unset: off (allocation on node heartbeats, in priority order)",
          ASYNC_SCHEDULING_KEY);
    } else if (Boolean.parseBoolean(async.trim())) {
      LOG.warn("{} is true: a slot freed on a shared rack may go to a lower-priority application",
          ASYNC_SCHEDULING_KEY);
    }
    LOG.info("Corral tags: {}", grant == null ? "unsigned mode, every rack-set and priority tag is"
        + " trusted (no " + RackSetGrant.SECRET_KEY + ")" : "honoured only with a valid planner grant");
    metrics = CorralSchedulerMetrics.register();
    fallbackLog.register();
    super.serviceInit(conf);
  }

  /**
   * Hadoop 3.5 computes a queue's effective resources only when the cluster resource changes, so
   * the reservation queues the plan follower creates and resizes would keep none: recompute them.
   */
  @Override
  public void setEntitlement(String queue, QueueEntitlement entitlement) throws YarnException {
    super.setEntitlement(queue, entitlement);
    writeLock.lock();
    try {
      Resource cluster = getClusterResource();
      getRootQueue().updateClusterResource(cluster, new ResourceLimits(cluster));
    } finally {
      writeLock.unlock();
    }
  }

  @Override
  public void serviceStop() throws Exception {
    super.serviceStop();
    CorralSchedulerMetrics.unregister();
    fallbackLog.unregister();
  }

  /** The scheduler's Corral metrics (for tests and monitoring). */
  public CorralSchedulerMetrics getCorralMetrics() {
    return metrics;
  }

  /** The latest rack-set fallback events with their reasons (also a JMX bean). */
  public RackSetFallbackLogMXBean getRackSetFallbackLog() {
    return fallbackLog;
  }

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
      case APP_ADDED:
        AppAddedSchedulerEvent added = (AppAddedSchedulerEvent) event;
        TagVerdict verdict = readTags(added);
        super.handle(verdict.priorityStands() ? added : withDefaultPriority(added));
        confine(added.getApplicationId(), verdict);
        break;
      case APP_ATTEMPT_ADDED:
        super.handle(event);
        AppAttemptAddedSchedulerEvent attemptAdded = (AppAttemptAddedSchedulerEvent) event;
        if (attemptAdded.getIsAttemptRecovering() && recoveryGraceEndMs == 0) {
          // recovered before any NodeManager registered again; they count as lost only as late as
          // the ResourceManager would declare them lost (NodeManager liveness expiry)
          recoveryGraceEndMs = System.currentTimeMillis() + Math.max(nmExpireInterval, 1);
        }
        ApplicationId attemptApp = attemptAdded.getApplicationAttemptId().getApplicationId();
        enforcedAt.remove(attemptApp);  // a new attempt has a blacklist of its own
        heldBack.remove(attemptApp);
        heldOff.remove(attemptApp);
        staleAsks.remove(attemptApp);
        if (rackSets.containsKey(attemptApp)) {
          waitingForAm.add(attemptApp);
        }
        enforce(attemptApp);
        break;
      case APP_REMOVED:
        super.handle(event);
        forget(((AppRemovedSchedulerEvent) event).getApplicationID());
        break;
      case NODE_ADDED:
        super.handle(event);
        census.nodeAdded(((NodeAddedSchedulerEvent) event).getAddedRMNode());
        enforceWaitingForAm();
        break;
      case NODE_REMOVED:
        super.handle(event);
        census.nodeRemoved(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        enforceWaitingForAm();
        break;
      case NODE_UPDATE:
        if (recoveryGraceOver()) {
          rackSets.keySet().forEach(this::enforce);
        }
        spreadOverRackSet(((NodeUpdateSchedulerEvent) event).getRMNode());
        super.handle(event);
        break;
      case NODE_RESOURCE_UPDATE:
        super.handle(event);
        NodeResourceUpdateSchedulerEvent update = (NodeResourceUpdateSchedulerEvent) event;
        census.nodeResized(update.getRMNode(), update.getResourceOption().getResource());
        enforceWaitingForAm();
        break;
      default:
        super.handle(event);
    }
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release,
      List<String> blacklistAdditions, List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    enforce(attemptId.getApplicationId());
    orderByLatency(attemptId.getApplicationId());
    noteStaleAsks(attemptId.getApplicationId(), ask);
    return super.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions,
        blacklistRemovals, updateRequests);
  }

  /** The verdict on the application's tags (a planner grant checked when a secret is set). */
  private TagVerdict readTags(AppAddedSchedulerEvent event) {
    RMApp app = rmContext.getRMApps().get(event.getApplicationId());
    if (app == null) {
      return new TagVerdict(Set.of(), true, TagVerdict.Problem.NONE, null);
    }
    Priority priority = event.getApplicatonPriority();
    RackSetGrant.Application identity = new RackSetGrant.Application(app.getName(),
        event.getUser(), event.getQueue(), priority == null ? 0 : priority.getPriority());
    return TagVerdict.of(app.getApplicationTags(), identity, defaultPriority(event).getPriority(),
        app.getSubmitTime() / 1000, grant);
  }

  /** The priority an ordinary application of the event's queue gets. */
  private Priority defaultPriority(AppAddedSchedulerEvent event) {
    try {
      return checkAndGetApplicationPriority(null, UserGroupInformation.createRemoteUser(
          event.getUser()), event.getQueue(), event.getApplicationId());
    } catch (YarnException | RuntimeException e) {
      return Priority.newInstance(0);
    }
  }

  /** The event with the queue's default priority instead of an ungranted one (RM's record too). */
  private AppAddedSchedulerEvent withDefaultPriority(AppAddedSchedulerEvent event) {
    RMApp app = rmContext.getRMApps().get(event.getApplicationId());
    Priority priority = defaultPriority(event);
    app.getApplicationSubmissionContext().setPriority(priority);
    if (app instanceof RMAppImpl) {
      ((RMAppImpl) app).setApplicationPriority(priority);
    }
    return new AppAddedSchedulerEvent(event.getUser(), app.getApplicationSubmissionContext(),
        event.getIsAppRecovering(), priority, event.getPlacementContext());
  }

  private void confine(ApplicationId appId, TagVerdict verdict) {
    switch (verdict.problem()) {
      case MALFORMED:
        metrics.malformedRackSetTags.incr();
        LOG.warn("{}: malformed Corral tags ({}); scheduling it without a rack set", appId,
            verdict.reason());
        break;
      case UNGRANTED:
        metrics.ungrantedTags.incr();
        LOG.warn("{}: Corral rack set or priority without a valid planner grant ({}); scheduling"
            + " it as an ordinary application", appId, verdict.reason());
        break;
      default:
    }
    if (!verdict.racks().isEmpty()) {
      rackSets.put(appId, verdict.racks());
      verdict.racks().forEach(rack -> confinedByRack.computeIfAbsent(rack,
          r -> ConcurrentHashMap.newKeySet()).add(appId));
      metrics.restrictedApplications.incr();
      LOG.info("{}: confined to rack set {}", appId, verdict.racks());
      RMApp app = rmContext.getRMApps().get(appId);
      if (latency != null && app != null && LatencyOrder.sensitive(app.getApplicationTags())) {
        latencySensitive.add(appId);
        LOG.info("{}: latency-sensitive, nodes of {} ordered by latency to its AM", appId,
            verdict.racks());
      }
    }
  }

  /**
   * The asynchronous-scheduling setting of yarn-site.xml, else of capacity-scheduler.xml as the RM's
   * configuration provider serves it (where the CapacityScheduler reads it), or null if neither sets it.
   */
  private String asyncScheduling(Configuration conf) throws IOException {
    if (conf.get(ASYNC_SCHEDULING_KEY) != null) {
      return conf.get(ASYNC_SCHEDULING_KEY);
    }
    ConfigurationProvider provider = rmContext == null ? null : rmContext.getConfigurationProvider();
    if (provider == null) {
      return null;
    }
    try (InputStream in = provider.getConfigurationInputStream(conf,
        YarnConfiguration.CS_CONFIGURATION_FILE)) {
      if (in == null) {
        return null;
      }
      Configuration file = new Configuration(false);
      file.addResource(in);
      return file.get(ASYNC_SCHEDULING_KEY);  // reads the stream while it is open
    } catch (YarnException e) {
      throw new IOException(e);
    }
  }

  private static NodeLatency latencyTable(Configuration conf) throws IOException {
    NodeLatency table = NodeLatency.fromConfiguration(conf);
    LOG.info("Corral latency ordering: {}", table == null ? "off (no " + NodeLatency.FILE_KEY
        + ")" : "on, latencies from " + conf.getTrimmed(NodeLatency.FILE_KEY));
    return table;
  }

  /**
   * Holds back, for a latency-sensitive application whose AM runs, the nodes of its rack set
   * beyond the nearest ones to the AM that can hold its pending asks ({@link LatencyOrder}); lets
   * them all go when its rack-set restriction is lifted. O(nodes of R_j).
   */
  private void orderByLatency(ApplicationId appId) {
    NodeLatency table = latency;
    Set<String> racks = rackSets.get(appId);
    SchedulerApplication<FiCaSchedulerApp> app = getSchedulerApplications().get(appId);
    FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
    RMNode am = amNode(appId);
    if (table == null || racks == null || attempt == null || am == null
        || !latencySensitive.contains(appId) || attempt.isWaitingForAMContainer()) {
      return;
    }
    List<String> held = List.of();
    if (!lifted.contains(appId)) {
      List<LatencyOrder.Candidate> nodes = new ArrayList<>();
      for (String rack : census.racksOf(racks)) {
        for (FiCaSchedulerNode node : getNodeTracker().getNodesByResourceName(rack)) {
          nodes.add(new LatencyOrder.Candidate(node.getNodeName(), table.between(am.getHostName(),
              am.getRackName(), node.getNodeName(), node.getRackName()),
              node.getUnallocatedResource()));
        }
      }
      Resource pending = Resources.subtractNonNegative(Resources.clone(
          attempt.getAppAttemptResourceUsage().getPending()),
          staleAsks.getOrDefault(appId, Resources.none()));
      held = LatencyOrder.heldBack(nodes, pending);
    }
    Set<String> before = heldBack.getOrDefault(appId, Set.of());
    Set<String> now = new HashSet<>(held);
    if (!now.equals(before)) {
      List<String> released = new ArrayList<>(before);
      released.removeAll(now);
      List<String> added = new ArrayList<>(now);
      added.removeAll(before);
      attempt.updateBlacklist(added, released);
      heldBack.put(appId, now);
      LOG.debug("{}: holding back {} for latency to its AM on {}", appId, now, am.getHostName());
    }
  }

  /**
   * Before a latency-sensitive application's asks are applied: the part of their ANY counts that
   * stands for containers already allocated to it but not yet pulled by its AM. YARN's asks are
   * absolute outstanding counts, computed by the AM from the containers it has received, so the
   * RM's pending resources overstate the AM's need by those containers until its next asks
   * (YARN-11702; Hadoop 3.5's yarn.resourcemanager.scheduler.autocorrect.container.allocation
   * corrects the asks themselves, host and rack entries included, and is off by default). Counted
   * as pending, they opened the far racks while the AM's side still had room for its real asks.
   * O(containers of the application) on calls that carry asks.
   */
  private void noteStaleAsks(ApplicationId appId, List<ResourceRequest> ask) {
    SchedulerApplication<FiCaSchedulerApp> app = getSchedulerApplications().get(appId);
    FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
    if (attempt == null || !latencySensitive.contains(appId) || ask == null || ask.isEmpty()) {
      return;
    }
    List<RMContainer> unseen = new ArrayList<>();
    for (RMContainer container : attempt.getLiveContainers()) {
      if (container.getState() == RMContainerState.ALLOCATED) {  // not yet pulled by the AM
        unseen.add(container);
      }
    }
    Resource stale = Resources.createResource(0, 0);
    for (ResourceRequest request : ask) {
      if (ResourceRequest.isAnyLocation(request.getResourceName())) {
        int repeated = 0;
        for (RMContainer container : unseen) {
          Container c = container.getContainer();
          if (repeated < request.getNumContainers() && c.getPriority().equals(request.getPriority())
              && c.getAllocationRequestId() == request.getAllocationRequestId()) {
            repeated++;
            Resources.addTo(stale, c.getResource());
          }
        }
      }
    }
    staleAsks.put(appId, stale);
  }

  /** The node of the application's AM container, once it has one. */
  private RMNode amNode(ApplicationId appId) {
    RMApp app = rmContext.getRMApps().get(appId);
    RMAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    Container master = attempt == null ? null : attempt.getMasterContainer();
    return master == null ? null : rmContext.getRMNodes().get(master.getNodeId());
  }

  /**
   * Before a node heartbeat's allocation: each application confined to a rack set holding the node's
   * rack holds the node off (its blacklist) while it is busier than a rack-mate for the application's
   * asks ({@link #busierThanARackMate}), and lets it go otherwise. A hold ends at the node's next
   * heartbeat unless the application got a container meanwhile (another node took one of its asks),
   * so no ask waits more than one heartbeat interval per hold (no starvation). Latency-sensitive
   * applications whose AM runs are placed by {@link #orderByLatency} instead. Without it the
   * CapacityScheduler gives a container to the first node of R_j that heartbeats with room; on the
   * testbed's nodes of a third of a core (thesis §4.5.1) a job's AM and reduce started beside another
   * job's JVMs while the rack-mate ran nothing (docs/planner.md).
   */
  private void spreadOverRackSet(RMNode heartbeating) {
    String host = heartbeating.getHostName();
    FiCaSchedulerNode node = getNode(heartbeating.getNodeID());
    String rack = heartbeating.getRackName().toLowerCase(Locale.ROOT);
    for (ApplicationId appId : confinedByRack.getOrDefault(rack, Set.of())) {
      SchedulerApplication<FiCaSchedulerApp> app = getSchedulerApplications().get(appId);
      FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
      if (attempt == null || node == null) {
        continue;
      }
      boolean waiting = attempt.isWaitingForAMContainer();
      if (!waiting && waitingForAm.remove(appId)) {
        heldOff.remove(appId);  // AM holds sat on the AM's own blacklist (YARN keeps it apart)
      }
      Map<String, Integer> held = heldOff.computeIfAbsent(appId, a -> new ConcurrentHashMap<>());
      int allocated = allocatedContainers(appId);
      Integer since = held.get(host);
      boolean hold = !lifted.contains(appId) && (waiting || !latencySensitive.contains(appId))
          && (since == null || since != allocated) && busierThanARackMate(appId, attempt, node);
      if (hold && held.put(host, allocated) == null) {
        attempt.updateBlacklist(List.of(host), List.of());
        LOG.info("{}: {} held off {}: it runs more containers than a node of its racks with room",
            appId, waiting ? "AM container" : "containers", host);
      } else if (!hold && held.remove(host) != null) {
        attempt.updateBlacklist(List.of(), List.of(host));
      }
    }
  }

  /**
   * Whether the node runs more containers than another live node of the application's rack set that
   * can hold the smallest of its pending asks, all of which name no node or other nodes. O(scheduler
   * keys + nodes of R_j).
   */
  private boolean busierThanARackMate(ApplicationId appId, FiCaSchedulerApp attempt,
      FiCaSchedulerNode node) {
    Resource ask = smallestAskNotNaming(attempt, node.getNodeName());
    int here = node.getNumContainers();
    if (ask == null || here == 0) {
      return false;
    }
    for (String rack : census.racksOf(rackSets.get(appId))) {
      for (FiCaSchedulerNode other : getNodeTracker().getNodesByResourceName(rack)) {
        if (!other.getNodeID().equals(node.getNodeID()) && other.getNumContainers() < here
            && Resources.fitsIn(ask, other.getUnallocatedResource())) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The smallest pending ask of the attempt (its AM container while it waits for it), or null if
   * none is pending or one names this node (a data-local map: locality wins over spreading).
   */
  private static Resource smallestAskNotNaming(FiCaSchedulerApp attempt, String host) {
    Resource smallest = null;
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      if (attempt.getOutstandingAsksCount(key, host) > 0) {
        return null;
      }
      var any = attempt.getPendingAsk(key, ResourceRequest.ANY);
      if (any.getCount() > 0 && (smallest == null
          || Resources.fitsIn(any.getPerAllocationResource(), smallest))) {
        smallest = any.getPerAllocationResource();
      }
    }
    return smallest;
  }

  /** Containers allocated to the application's current attempt so far (RMAppAttemptMetrics). */
  private int allocatedContainers(ApplicationId appId) {
    RMApp app = rmContext.getRMApps().get(appId);
    RMAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    return attempt == null ? 0 : attempt.getRMAppAttemptMetrics().getTotalAllocatedContainers();
  }

  private void forget(ApplicationId appId) {
    enforcedAt.remove(appId);
    waitingForAm.remove(appId);
    heldOff.remove(appId);
    latencySensitive.remove(appId);
    heldBack.remove(appId);
    staleAsks.remove(appId);
    Set<String> racks = rackSets.remove(appId);
    if (racks != null) {
      racks.forEach(rack -> confinedByRack.getOrDefault(rack, Set.of()).remove(appId));
      if (!lifted.remove(appId)) {
        metrics.restrictedApplications.decr();
      }
    }
  }

  /**
   * After a node event: the applications still waiting for their AM container, which make no
   * allocate calls of their own; running ones catch up on their next allocate (the census changed).
   */
  private void enforceWaitingForAm() {
    attemptsWaitingForAm().forEach(attempt -> enforce(attempt.getApplicationId()));
  }

  /**
   * The current attempts of confined applications that wait for their AM container; drops the ones
   * that got it, so a node event costs O(applications waiting for an AM), not O(confined applications).
   */
  private List<FiCaSchedulerApp> attemptsWaitingForAm() {
    List<FiCaSchedulerApp> waiting = new ArrayList<>();
    for (ApplicationId appId : waitingForAm) {
      SchedulerApplication<FiCaSchedulerApp> app = getSchedulerApplications().get(appId);
      FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
      if (attempt != null && attempt.isWaitingForAMContainer()) {
        waiting.add(attempt);
      } else {
        waitingForAm.remove(appId);  // it has its AM; a later attempt is added again
        heldOff.remove(appId);  // AM holds sat on the AM's own blacklist
      }
    }
    return waiting;
  }

  /**
   * Brings the application's blacklist in line with its rack set and the racks' health, unless it
   * already is: nothing changed in the census or the attempt's AM phase since the last time.
   */
  private void enforce(ApplicationId appId) {
    Set<String> racks = rackSets.get(appId);
    SchedulerApplication<FiCaSchedulerApp> app = racks == null ? null : getSchedulerApplications().get(appId);
    FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
    if (attempt == null) {
      return;
    }
    Long previous = enforcedAt.get(appId);
    if (previous != null && previous == stamp(attempt)) {
      return;
    }
    synchronized (census) {  // no census change, and no other enforce, until the blacklist is set
      enforcedAt.put(appId, stamp(attempt));
      String liftReason = liftReason(appId, racks, attempt);
      List<String> outside = liftReason == null ? census.racksOutside(racks) : List.of();
      List<String> inside = new ArrayList<>(census.allRacks());
      inside.removeAll(outside);
      attempt.updateBlacklist(outside, inside);
      recordTransition(appId, racks, liftReason);
    }
  }

  private long stamp(FiCaSchedulerApp attempt) {
    return 4 * census.version() + (recoveryGraceEndMs != 0 ? 2 : 0)
        + (attempt.isWaitingForAMContainer() ? 1 : 0);
  }

  /** True once, on the first node heartbeat after a restart's grace for NodeManagers has ended. */
  private boolean recoveryGraceOver() {
    long end = recoveryGraceEndMs;
    if (end == 0 || System.currentTimeMillis() < end) {
      return false;
    }
    recoveryGraceEndMs = 0;
    LOG.info("NodeManager grace after recovery over; rack sets enforced on the NodeManagers seen");
    return true;
  }

  /** Why the restriction must be lifted now, or null if it holds. */
  private String liftReason(ApplicationId appId, Set<String> racks, FiCaSchedulerApp attempt) {
    if (recoveryGraceEndMs != 0 && (census.hostsIn(racks) == 0
        || !rmContext.isSchedulerReadyForAllocatingContainers())) {
      return null;  // after a restart: R_j's NodeManagers not registered again yet, not lost
    }
    int all = census.hostsIn(racks);
    int live = census.liveHostsIn(racks);
    if (all == 0) {
      return "no NodeManager was ever seen in racks " + racks;
    }
    if (live <= fallbackFraction * all) {
      return live + " of " + all + " NodeManagers of racks " + racks + " are live (threshold "
          + fallbackFraction + ")";
    }
    if (attempt.isWaitingForAMContainer()) {
      RMApp app = rmContext.getRMApps().get(appId);
      List<ResourceRequest> amRequests = app == null ? null : app.getAMResourceRequests();
      if (amRequests != null && !amRequests.isEmpty()
          && !census.canHost(racks, amRequests.get(0).getCapability())) {
        return "no live NodeManager of racks " + racks + " can hold the AM container "
            + amRequests.get(0).getCapability();
      }
    }
    return null;
  }

  private void recordTransition(ApplicationId appId, Set<String> racks, String liftReason) {
    if (liftReason != null && lifted.add(appId)) {
      metrics.rackSetFallbacks.incr();
      metrics.restrictedApplications.decr();
      fallbackLog.lifted(appId, liftReason);
      LOG.warn("{}: rack-set restriction lifted, scheduling anywhere: {}", appId, liftReason);
    } else if (liftReason == null && lifted.remove(appId)) {
      metrics.restrictedApplications.incr();
      fallbackLog.confinedAgain(appId);
      LOG.info("{}: enough NodeManagers back; confined to rack set {} again", appId, racks);
    }
  }
}
