package io.corralyarn.mapreduce;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptState;
import org.apache.hadoop.mapreduce.v2.api.records.TaskId;
import org.apache.hadoop.mapreduce.v2.api.records.TaskType;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptStatusUpdateEvent.TaskAttemptStatus;
import org.apache.hadoop.mapreduce.v2.app.speculate.TaskRuntimeEstimator;
import org.apache.hadoop.yarn.util.Clock;

/**
 * Kwiken's reissue rule (thesis §3.2.2, §5.3.1) for Hadoop's DefaultSpeculator: a task gets a
 * speculative copy once its attempt has run longer than its stage's planned timeout T_s, the
 * (1 - r_s) quantile of the stage's past task durations (docs/kwiken.md, "Kwiken for YARN").
 *
 * <p>A per-job class: {@code yarn.app.mapreduce.am.job.task.estimator.class} names it and
 * {@value #MAP_TIMEOUT} / {@value #REDUCE_TIMEOUT} carry T_s in ms; a type without one is never
 * copied. DefaultSpeculator copies the task of largest (estimated end - replacement end) that is
 * positive, so an attempt within T_s is estimated to have ended already (PROGRESS_IS_GOOD) and one
 * past it to end {@link #OVERDUE} + 2 x elapsed after its start, which ranks the longest-running
 * first. A reduce's clock starts when its reduce phase does (sortFinishTime), as the history's
 * reduce durations are the reduce phase (elapsedReduceTime).
 */
public class KwikenTaskRuntimeEstimator implements TaskRuntimeEstimator {

  public static final String MAP_TIMEOUT = "corral.kwiken.map.timeout-ms";
  public static final String REDUCE_TIMEOUT = "corral.kwiken.reduce.timeout-ms";
  /** Added to an overdue attempt's estimate: its end is far beyond any replacement's. */
  static final long OVERDUE = 1L << 50;
  private static final long NONE = -1L;

  private final Map<TaskAttemptId, Long> enrolled = new ConcurrentHashMap<>();
  private final Map<TaskAttemptId, Long> reducePhase = new ConcurrentHashMap<>();
  private long mapTimeout = NONE;
  private long reduceTimeout = NONE;
  private Clock clock;

  @Override
  public void contextualize(Configuration conf, AppContext context) {
    mapTimeout = timeout(conf, MAP_TIMEOUT);
    reduceTimeout = timeout(conf, REDUCE_TIMEOUT);
    clock = context.getClock();
  }

  private static long timeout(Configuration conf, String key) {
    String value = conf.getTrimmed(key);
    if (value == null || value.isEmpty()) {
      return NONE;
    }
    long ms;
    try {
      ms = Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + ": not a whole number of ms: " + value, e);
    }
    if (ms < 0) {
      throw new IllegalArgumentException(key + ": must be >= 0 ms, got " + ms);
    }
    return ms;
  }

  private long timeoutOf(TaskType type) {
    return type == TaskType.MAP ? mapTimeout : reduceTimeout;
  }

  @Override
  public void enrollAttempt(TaskAttemptStatus status, long timestamp) {
    enrolled.putIfAbsent(status.id, timestamp);
  }

  @Override
  public long attemptEnrolledTime(TaskAttemptId attemptID) {
    return enrolled.getOrDefault(attemptID, Long.MAX_VALUE);
  }

  @Override
  public void updateAttempt(TaskAttemptStatus status, long timestamp) {
    TaskAttemptState state = status.taskState;
    if (state == TaskAttemptState.SUCCEEDED || state == TaskAttemptState.FAILED
        || state == TaskAttemptState.KILLED) {
      enrolled.remove(status.id);
      reducePhase.remove(status.id);
    } else if (status.sortFinishTime > 0) {
      reducePhase.putIfAbsent(status.id, status.sortFinishTime);
    }
  }

  /** Long.MAX_VALUE (DefaultSpeculator: ON_SCHEDULE, no copy) for a type without a timeout. */
  @Override
  public long thresholdRuntime(TaskId taskID) {
    long timeout = timeoutOf(taskID.getTaskType());
    return timeout == NONE ? Long.MAX_VALUE : timeout;
  }

  @Override
  public long estimatedRuntime(TaskAttemptId id) {
    Long start = enrolled.get(id);
    long timeout = timeoutOf(id.getTaskId().getTaskType());
    Long clockStart = id.getTaskId().getTaskType() == TaskType.MAP ? start : reducePhase.get(id);
    if (start == null || clockStart == null || timeout == NONE) {
      return 0L;
    }
    long now = clock.getTime();
    return now - clockStart > timeout ? OVERDUE + 2 * (now - start) : 0L;
  }

  /** A copy is expected to take about the stage's timeout (it is a fresh draw from the same stage). */
  @Override
  public long estimatedNewAttemptRuntime(TaskId id) {
    return Math.max(0L, timeoutOf(id.getTaskType()));
  }

  @Override
  public long runtimeEstimateVariance(TaskAttemptId id) {
    return -1L;
  }
}
