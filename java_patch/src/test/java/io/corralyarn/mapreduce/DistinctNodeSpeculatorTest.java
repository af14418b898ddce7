package io.corralyarn.mapreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptEventType;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.mapreduce.v2.app.speculate.SpeculatorEvent;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.util.SystemClock;
import org.junit.jupiter.api.Test;

/** The copy-placement rule against Hadoop 3.5.0's MR AM types: no cluster (the cluster run is bench_kwiken_yarn). */
class DistinctNodeSpeculatorTest {

  private static final JobId JOB = MRBuilderUtils.newJobId(ApplicationId.newInstance(1L, 1), 1);
  private static final TaskId MAP = MRBuilderUtils.newTaskId(JOB, 0, TaskType.MAP);
  private static final NodeId SLOW = NodeId.newInstance("127.0.100.10", 40000);
  private static final NodeId OTHER = NodeId.newInstance("127.0.101.10", 40000);

  private static TaskAttempt attempt(int id, NodeId node, boolean finished) {
    TaskAttemptId attemptId = MRBuilderUtils.newTaskAttemptId(MAP, id);
    return (TaskAttempt) Proxy.newProxyInstance(TaskAttempt.class.getClassLoader(),
        new Class<?>[] {TaskAttempt.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getID" -> attemptId;
          case "getNodeId" -> node;
          case "isFinished" -> finished;
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }

  @Test
  void aCopyOnItsRunningOriginalsNodeSharesIt() {
    TaskAttempt original = attempt(0, SLOW, false);
    TaskAttempt copy = attempt(1, SLOW, false);
    assertEquals(SLOW, DistinctNodeSpeculator.sharedNode(copy, List.of(original, copy)));
  }

  @Test
  void aCopyElsewhereOrAfterItsOriginalEndedOrAFirstAttemptIsKept() {
    TaskAttempt copy = attempt(1, SLOW, false);
    assertNull(DistinctNodeSpeculator.sharedNode(attempt(1, OTHER, false), List.of(attempt(0, SLOW, false))));
    assertNull(DistinctNodeSpeculator.sharedNode(copy, List.of(attempt(0, SLOW, true), copy)));
    assertNull(DistinctNodeSpeculator.sharedNode(copy, List.of(copy)));
    assertNull(DistinctNodeSpeculator.sharedNode(attempt(0, SLOW, false), List.of(attempt(0, SLOW, false), copy)),
        "only the later attempt is the copy");
    assertNull(DistinctNodeSpeculator.sharedNode(copy, List.of(attempt(2, null, false), copy)));
    assertNull(DistinctNodeSpeculator.sharedNode(attempt(1, null, false), List.of(attempt(0, SLOW, false))));
  }

  /** Through the MR AM's entry point: an ATTEMPT_START of a copy on its original's node sends one kill of the copy. */
  @Test
  void theSpeculatorKillsTheStartedCopyAndOnlyIt() {
    Map<TaskAttemptId, TaskAttempt> attempts = new LinkedHashMap<>();
    TaskAttempt original = attempt(0, SLOW, false);
    TaskAttempt copy = attempt(1, SLOW, false);
    attempts.put(original.getID(), original);
    attempts.put(copy.getID(), copy);
    Task task = (Task) Proxy.newProxyInstance(Task.class.getClassLoader(), new Class<?>[] {Task.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getAttempts" -> attempts;
          case "getAttempt" -> attempts.get((TaskAttemptId) args[0]);
          default -> throw new UnsupportedOperationException(method.getName());
        });
    Job job = (Job) Proxy.newProxyInstance(Job.class.getClassLoader(), new Class<?>[] {Job.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getTask" -> MAP.equals(args[0]) ? task : null;
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> throw new UnsupportedOperationException(method.getName());
        });
    List<Event> sent = new ArrayList<>();
    EventHandler<Event> handler = sent::add;
    AppContext context = (AppContext) Proxy.newProxyInstance(AppContext.class.getClassLoader(),
        new Class<?>[] {AppContext.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getClock" -> SystemClock.getInstance();
          case "getEventHandler" -> handler;
          case "getJob" -> JOB.equals(args[0]) ? job : null;
          case "getAllJobs" -> Map.of(JOB, job);
          default -> throw new UnsupportedOperationException(method.getName());
        });
    DistinctNodeSpeculator speculator = new DistinctNodeSpeculator(new Configuration(false), context);

    speculator.handle(new SpeculatorEvent(original.getID(), true, 1000L));
    assertTrue(sent.isEmpty(), "an original is never killed, even with its copy beside it");
    speculator.handle(new SpeculatorEvent(copy.getID(), true, 2000L));
    assertEquals(1, sent.size());
    TaskAttemptKillEvent kill = (TaskAttemptKillEvent) sent.get(0);
    assertEquals(copy.getID(), kill.getTaskAttemptID());
    assertEquals(TaskAttemptEventType.TA_KILL, kill.getType());
    assertTrue(kill.getMessage().startsWith(DistinctNodeSpeculator.KILLED_ON_ORIGINAL_NODE));
  }
}
