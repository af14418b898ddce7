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
    return estimator(map, reduce, "timeout", null);
  }

  private KwikenTaskRuntimeEstimator estimator(String map, String reduce, String rule, String minElapsed) {
    return estimator(map, reduce, rule, minElapsed, null);
  }

  private KwikenTaskRuntimeEstimator estimator(String map, String reduce, String rule, String minElapsed, String reportInterval) {
    return estimator(map, reduce, rule, minElapsed, reportInterval, new Configuration(false));
  }

  /** The relative scale: T_s as ratios to the stage's mean past duration, absolute ms before a task has finished. */
  private KwikenTaskRuntimeEstimator relative(String map, String mapRatio, String reduce, String reduceRatio) {
    Configuration conf = new Configuration(false);
    conf.set(KwikenTaskRuntimeEstimator.SCALE, "relative");
    if (mapRatio != null) {
      conf.set(KwikenTaskRuntimeEstimator.MAP_RATIO, mapRatio);
    }
    if (reduceRatio != null) {
      conf.set(KwikenTaskRuntimeEstimator.REDUCE_RATIO, reduceRatio);
    }
    return estimator(map, reduce, "timeout", null, null, conf);
  }

  private KwikenTaskRuntimeEstimator estimator(String map, String reduce, String rule, String minElapsed, String reportInterval,
      Configuration conf) {
    if (reportInterval != null) {
      conf.set("mapreduce.task.progress-report.interval", reportInterval);
    }
    if (rule != null) {
      conf.set(KwikenTaskRuntimeEstimator.RULE, rule);
    }
    if (minElapsed != null) {
      conf.set(KwikenTaskRuntimeEstimator.MIN_ELAPSED, minElapsed);
    }
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
    return status(id, state, sortFinish, 0.0f);
  }

  private static TaskAttemptStatus status(TaskAttemptId id, TaskAttemptState state, long sortFinish, float progress) {
    TaskAttemptStatus s = new TaskAttemptStatus();
    s.id = id;
    s.taskState = state;
    s.sortFinishTime = sortFinish;
    s.progress = progress;
    return s;
  }

  private static final long OVERDUE = KwikenTaskRuntimeEstimator.OVERDUE;

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
    assertEquals(OVERDUE + 50_000L, speculationValue(e, early), "60 s run - 10 s timeout");
    assertEquals(OVERDUE + 45_000L, speculationValue(e, late), "55 s run - 10 s timeout");
  }

  @Test
  void theTimeoutRuleIgnoresProgress() {
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "timeout", "0.25");
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(map, TaskAttemptState.RUNNING, 0, 0.01f), 50_000L);
    clock.setTime(99_000L);
    assertTrue(speculationValue(e, map) < 0, "projected 5000 s, but 99 s run is within the 100 s timeout");
    clock.setTime(100_500L);
    assertEquals(OVERDUE + 500L, speculationValue(e, map));
  }

  @Test
  void theProgressRuleCopiesAnAttemptProjectedPastItsTimeoutOnceJudged() {
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "progress", "0.25");
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(map, TaskAttemptState.RUNNING, 0, 0.1f), 20_000L);
    clock.setTime(24_999L);
    assertTrue(speculationValue(e, map) < 0, "projected 200 s, but not judged before 0.25 x 100 s");
    clock.setTime(25_000L);
    assertEquals(OVERDUE + 100_000L, speculationValue(e, map), "20 s / 0.1 = 200 s projected - 100 s timeout");
  }

  @Test
  void theProgressRuleLeavesAnAttemptOnScheduleUntilItsTimeout() {
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "progress", "0.25");
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(map, TaskAttemptState.RUNNING, 0, 0.5f), 30_000L);
    clock.setTime(99_000L);
    assertTrue(speculationValue(e, map) < 0, "30 s / 0.5 = 60 s projected");
    clock.setTime(100_001L);
    assertEquals(OVERDUE + 1L, speculationValue(e, map), "past its timeout whatever its projection");
  }

  @Test
  void theProgressRuleRanksTheLargestProjectedOverrunFirst() {
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "progress", "0.25");
    TaskAttemptId slow = attempt(TaskType.MAP, 0);
    TaskAttemptId slower = attempt(TaskType.MAP, 1);
    e.enrollAttempt(status(slow, TaskAttemptState.RUNNING, 0), 0L);
    e.enrollAttempt(status(slower, TaskAttemptState.RUNNING, 0), 10_000L);
    e.updateAttempt(status(slow, TaskAttemptState.RUNNING, 0, 0.25f), 50_000L);
    e.updateAttempt(status(slower, TaskAttemptState.RUNNING, 0, 0.1f), 50_000L);
    clock.setTime(51_000L);
    assertEquals(OVERDUE + 100_000L, speculationValue(e, slow), "50 s / 0.25 = 200 s - 100 s");
    assertEquals(OVERDUE + 300_000L, speculationValue(e, slower), "40 s / 0.1 = 400 s - 100 s, though it started later");
  }

  @Test
  void anAttemptWithoutProgressIsJudgedOnItsTimeRunNotProjected() {
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "progress", "0.25");
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    clock.setTime(25_000L);
    assertTrue(speculationValue(e, map) < 0, "no status at 0.25 x 100 s: nothing to project, 25 s run");
    e.updateAttempt(status(map, TaskAttemptState.RUNNING, 0, 0.0f), 40_000L); // DefaultSpeculator's simulated status
    clock.setTime(99_000L);
    assertTrue(speculationValue(e, map) < 0, "progress 0 at 40 s: still nothing to project, 99 s run");
    clock.setTime(100_001L);
    assertEquals(OVERDUE + 1L, speculationValue(e, map), "past its timeout: 100.001 s - 100 s");
    e.updateAttempt(status(map, TaskAttemptState.RUNNING, 0, 0.25f), 101_000L);
    clock.setTime(101_000L);
    assertEquals(OVERDUE + 304_000L, speculationValue(e, map), "its first progress: 101 s / 0.25 = 404 s - 100 s");
  }

  @Test
  void aReduceStillInItsShuffleHasNoReducePhaseProgressToProject() {
    KwikenTaskRuntimeEstimator e = estimator(null, "20000", "progress", "0.25");
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 0);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 90_000L, 0.6f), 95_000L); // a status from before its sort ended
    clock.setTime(100_000L);
    assertTrue(speculationValue(e, reduce) < 0, "phase progress (0.6 - 2/3) x 3 < 0: 10 s run of 20 s, not projected");
  }

  @Test
  void aReducesProgressIsItsReducePhases() {
    KwikenTaskRuntimeEstimator e = estimator(null, "20000", "progress", "0.25");
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 0);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 0, 0.5f), 80_000L);
    clock.setTime(94_000L);
    assertTrue(speculationValue(e, reduce) < 0, "still shuffling: no clock yet");
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 90_000L, 0.75f), 100_000L);
    clock.setTime(100_000L);
    assertEquals(OVERDUE + 20_000L, speculationValue(e, reduce), "(0.75 - 2/3) x 3 = 0.25 of the phase in 10 s: 40 s - 20 s");
  }

  @Test
  void aShortReducePhaseIsJudgedNoEarlierThanOneStatusInterval() {
    // T = 4 s: 0.25 T = 1 s, but Hadoop's status interval is 0.01 x mapreduce.task.timeout = 3 s by default
    KwikenTaskRuntimeEstimator e = estimator(null, "4000", "progress", "0.25");
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 0);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 90_000L, 0.7f), 91_500L);
    clock.setTime(92_999L);
    assertTrue(speculationValue(e, reduce) < 0, "1.5 s / 0.1 = 15 s projected, but 3 s not yet run");
    clock.setTime(93_000L);
    assertEquals(OVERDUE + 15_000L - 4_000L, speculationValue(e, reduce), "judged at 3 s: 15 s - 4 s");
    KwikenTaskRuntimeEstimator slow = estimator(null, "4000", "progress", "0.25", "10000");
    slow.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    slow.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 90_000L, 0.7f), 91_500L);
    clock.setTime(93_000L);
    assertTrue(speculationValue(slow, reduce) < 0, "a 10 s interval: not judged, and not yet past T");
    clock.setTime(94_001L);
    assertTrue(speculationValue(slow, reduce) > 0, "past T = 4 s: copied by the fallback");
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
    message = assertThrows(IllegalArgumentException.class, () -> estimator("1", null, "eager", null)).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.RULE), message);
    message = assertThrows(IllegalArgumentException.class, () -> estimator("1", null, "progress", "1.5")).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.MIN_ELAPSED), message);
    assertFalse(estimator("", "").thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()) < Long.MAX_VALUE);
  }

  /** Runs a map from start to end (ms) to success. */
  private static void finish(KwikenTaskRuntimeEstimator e, int task, long start, long end) {
    TaskAttemptId id = attempt(TaskType.MAP, task);
    e.enrollAttempt(status(id, TaskAttemptState.RUNNING, 0), start);
    e.updateAttempt(status(id, TaskAttemptState.SUCCEEDED, 0), end);
  }

  @Test
  void theRelativeScaleUsesTheAbsoluteTimeoutUntilAMapHasSucceeded() {
    KwikenTaskRuntimeEstimator e = relative("100000", "1.5", null, null);
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    assertEquals(100_000L, e.thresholdRuntime(map.getTaskId()));
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(map, TaskAttemptState.KILLED, 0), 10_000L);
    assertEquals(100_000L, e.thresholdRuntime(map.getTaskId()), "a killed attempt is no duration");
  }

  @Test
  void theRelativeScaleIsTheRatioTimesTheMeanSucceededDuration() {
    KwikenTaskRuntimeEstimator e = relative("100000", "1.5", null, null);
    finish(e, 1, 0L, 40_000L);
    assertEquals(60_000L, e.thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()), "1.5 x 40 s");
    finish(e, 2, 5_000L, 65_000L);
    assertEquals(75_000L, e.thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()), "1.5 x mean(40 s, 60 s)");
    e.updateAttempt(status(attempt(TaskType.MAP, 2), TaskAttemptState.SUCCEEDED, 0), 99_000L);
    assertEquals(75_000L, e.thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()), "a repeated status is counted once");
    TaskAttemptId map = attempt(TaskType.MAP, 0);
    clock.setTime(10_000L);
    e.enrollAttempt(status(map, TaskAttemptState.RUNNING, 0), 10_000L);
    clock.setTime(85_000L);
    assertTrue(speculationValue(e, map) < 0, "75 s run: at the scaled timeout, not past it");
    clock.setTime(85_001L);
    assertTrue(speculationValue(e, map) > 0, "past 75 s, well before the absolute 100 s");
    assertEquals(NONE_REDUCE, e.thresholdRuntime(attempt(TaskType.REDUCE, 0).getTaskId()), "maps do not scale reduces");
  }

  private static final long NONE_REDUCE = Long.MAX_VALUE;

  @Test
  void aReducesRelativeTimeoutScalesByItsReducePhases() {
    KwikenTaskRuntimeEstimator e = relative(null, null, "50000", "2.0");
    TaskAttemptId reduce = attempt(TaskType.REDUCE, 1);
    e.enrollAttempt(status(reduce, TaskAttemptState.RUNNING, 0), 0L);
    e.updateAttempt(status(reduce, TaskAttemptState.RUNNING, 30_000L, 0.7f), 31_000L);
    e.updateAttempt(status(reduce, TaskAttemptState.SUCCEEDED, 30_000L, 1.0f), 42_000L);
    assertEquals(24_000L, e.thresholdRuntime(attempt(TaskType.REDUCE, 0).getTaskId()), "2 x its 12 s reduce phase, not its 42 s");
    assertEquals(Long.MAX_VALUE, e.thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()), "no map timeout, no ratio: never");
  }

  @Test
  void theAbsoluteScaleIgnoresRatiosAndFinishedTasks() {
    Configuration conf = new Configuration(false);
    conf.set(KwikenTaskRuntimeEstimator.MAP_RATIO, "1.5");
    KwikenTaskRuntimeEstimator e = estimator("100000", null, "timeout", null, null, conf);
    finish(e, 1, 0L, 40_000L);
    assertEquals(100_000L, e.thresholdRuntime(attempt(TaskType.MAP, 0).getTaskId()));
  }

  @Test
  void aBadScaleOrRatioNamesItsKey() {
    Configuration conf = new Configuration(false);
    conf.set(KwikenTaskRuntimeEstimator.SCALE, "history");
    String message = assertThrows(IllegalArgumentException.class, () -> estimator("1", null, "timeout", null, null, conf)).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.SCALE), message);
    message = assertThrows(IllegalArgumentException.class, () -> relative("1", "-0.5", null, null)).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.MAP_RATIO), message);
    message = assertThrows(IllegalArgumentException.class, () -> relative(null, null, "1", "fast")).getMessage();
    assertTrue(message.startsWith(KwikenTaskRuntimeEstimator.REDUCE_RATIO), message);
  }
}
