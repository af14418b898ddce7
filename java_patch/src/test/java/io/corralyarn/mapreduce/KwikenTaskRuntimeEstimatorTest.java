package io.corralyarn.mapreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.JobId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.util.MRBuilderUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.util.Clock;
import org.junit.jupiter.api.Test;

/** The estimator against DefaultSpeculator's rule (3.5.0, speculationValue): no cluster. */
class KwikenTaskRuntimeEstimatorTest {

  private static final JobId JOB = MRBuilderUtils.newJobId(ApplicationId.newInstance(1L, 1), 1);
  /** A clock the test sets. */
  private static final class TestClock implements Clock {
    private long time;

    @Override
    public long getTime() {
      return time;
    }

    void setTime(long ms) {
      time = ms;
    }
  }

  private final TestClock clock = new TestClock();

  private KwikenTaskRuntimeEstimator estimator(String map, String reduce) {
    Configuration conf = new Configuration(false);
    if (map != null) {
      conf.set(KwikenTaskRuntimeEstimator.MAP_TIMEOUT, map);
    }
    if (reduce != null) {
      conf.set(KwikenTaskRuntimeEstimator.REDUCE_TIMEOUT, reduce);
    }
    AppContext context = (AppContext) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {AppContext.class}, (proxy, method, args) -> {
          if (method.getName().equals("getClock")) {
            return clock;
          }
          throw new UnsupportedOperationException(method.getName());
        });
    KwikenTaskRuntimeEstimator e = new KwikenTaskRuntimeEstimator();
    e.contextualize(conf, context);
    return e;
  }

  private static TaskAttemptId attempt(TaskType type, int task) {
    return MRBuilderUtils.newTaskAttemptId(MRBuilderUtils.newTaskId(JOB, task, type), 0);
  }

  private static TaskAttemptStatus status(TaskAttemptId id, TaskAttemptState state, long sortFinish) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    s.taskState = state;
    s.sortFinishTime = sortFinish;
    return s;
  }

  /** DefaultSpeculator.speculationValue for one running attempt: > 0 means a copy may be launched. */
  private long speculationValue(KwikenTaskRuntimeEstimator e, TaskAttemptId id) {
    long now = clock.getTime();
    if (e.thresholdRuntime(id.getTaskId()) == Long.MAX_VALUE) {
      return Long.MIN_VALUE; // ON_SCHEDULE
    }
    long start = e.attemptEnrolledTime(id);
    if (start > now) {
      return Long.MIN_VALUE + 2; // TOO_NEW
    }
    long end = start + e.estimatedRuntime(id);
    long replacementEnd = now + e.estimatedNewAttemptRuntime(id.getTaskId());
    if (end < now) {
      return Long.MIN_VALUE + 3; // PROGRESS_IS_GOOD
    }
    return replacementEnd >= end ? Long.MIN_VALUE + 5 : end - replacementEnd;
  }

  @Test
  void aMapIsCopiedOnlyOnceItRunsPastItsTimeout() {
    KwikenTaskRuntimeEstimator e = estimator("30000", null);
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    clock.setTime(1_000_000L);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), clock.getTime());
    assertTrue(speculationValue(e, map) < 0, "just started");
    clock.setTime(1_000_000L + 30_000L);
    assertTrue(speculationValue(e, map) < 0, "at the timeout, not past it");
    clock.setTime(1_000_000L + 30_001L);
    assertTrue(speculationValue(e, map) > 0, "past the timeout");
  }

  @Test
  void theLongestRunningOverdueTaskRanksFirst() {
    KwikenTaskRuntimeEstimator e = estimator("10000", null);
    TaskAttemptId early = attempt(TaskType.MAP, 0);
    TaskAttemptId late = attempt(TaskType.MAP, 1);
    clock.setTime(0L);
    e.enrollAttempt(status(early, TaskAttemptState.RUNNING, 0), 0L);
    clock.setTime(5_000L);
    e.enrollAttempt(status(late, TaskAttemptState.RUNNING, 0), 5_000L);
    clock.setTime(60_000L);
    long first = speculationValue(e, early);
    long second = speculationValue(e, late);
    assertTrue(second > 0);
    assertEquals(5_000L, first - second, "the value grows with the time run");
  }

  @Test
  void aTypeWithoutATimeoutIsNeverCopied() {
    KwikenTaskRuntimeEstimator e = estimator("10000", null);
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 0);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 1L), 1L);
    clock.setTime(10_000_000L);
    assertEquals(Long.MAX_VALUE, e.thresholdRuntime(reduce.getTaskId()));
    assertTrue(speculationValue(e, reduce) < 0);
  }

  @Test
  void aReducesClockStartsWithItsReducePhase() {
    KwikenTaskRuntimeEstimator e = estimator(null, "20000");
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 0);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    clock.setTime(100_000L);
    assertTrue(speculationValue(e, reduce) < 0, "still shuffling");
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 90_000L), 100_000L);
    clock.setTime(110_000L);
    assertTrue(speculationValue(e, reduce) < 0, "20 s into its reduce phase, not past it");
    clock.setTime(110_001L);
    assertTrue(speculationValue(e, reduce) > 0);
  }

  @Test
  void aFinishedAttemptIsForgotten() {
    KwikenTaskRuntimeEstimator e = estimator("0", null);
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(map, TaskAttemptState.SUCCEEDED, 0), 10L);
    assertEquals(Long.MAX_VALUE, e.attemptEnrolledTime(map));
    assertEquals(0L, e.estimatedRuntime(map));
  }

  @Test
  void aBadTimeoutNamesItsKey() {
    String message = assertThrows(IllegalArgumentException.class, () -> estimator("-5", null)).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.MAP_TIMEOUT), message);
    message = assertThrows(IllegalArgumentException.class, () -> estimator(null, "1.5s")).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.REDUCE_TIMEOUT), message);
    assertFalse(estimator("", "").thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()) < Long.MAX_VALUE);
  }
}
