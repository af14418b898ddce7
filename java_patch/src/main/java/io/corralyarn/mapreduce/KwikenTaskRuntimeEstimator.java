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
import org.apache.hadoop.mapreduce.util.MRJobConfUtil;
import org.apache.hadoop.yarn.util.Clock;

/**
 * Kwiken's reissue decision (thesis §3.2.2, §5.3.1) for Hadoop's DefaultSpeculator: a task gets a
 * speculative copy when its attempt will run longer than its stage's planned timeout T_s, the
 * (1 - r_s) quantile of the stage's past task durations (docs/kwiken.md, "Kwiken for YARN").
 *
 * <p>{@value #RULE} picks how "will run longer than T_s" is seen, per job:
 * <ul>
 * <li>{@code timeout} (the thesis's rule, §5.3.1): once the attempt has run past T_s;</li>
 * <li>{@code progress} (ours, beyond the thesis; the default): once its projected runtime, elapsed /
 * progress at its last status (as Hadoop's LegacyTaskRuntimeEstimator projects), exceeds T_s; an
 * attempt is judged once it has run max({@value #MIN_ELAPSED} x T_s (default {@value #DEFAULT_MIN_ELAPSED}),
 * one task status interval, {@code mapreduce.task.progress-report.interval}: 3 s by default), before that
 * only past T_s, so it copies every task the timeout rule copies, and earlier. An attempt that has reported
 * no progress (no status, or progress 0, as DefaultSpeculator's simulated status of a silent attempt) has
 * nothing to project: it is judged on its time run against T_s, as under the timeout rule (a map JVM on a
 * loaded node may send its first status only seconds before its end).</li>
 * </ul>
 *
 * <p>A per-job class: {@code yarn.app.mapreduce.am.job.task.estimator.class} names it and
 * {@value #MAP_TIMEOUT} / {@value #REDUCE_TIMEOUT} carry T_s in ms; a type without one is never
 * copied. DefaultSpeculator copies the task of largest (estimated end - replacement end) that is
 * positive, so an attempt not judged overdue is estimated to have ended already (PROGRESS_IS_GOOD)
 * and an overdue one of projected runtime R to end so that this value is {@link #OVERDUE} + R - T_s:
 * the largest projected overrun first (under the timeout rule R is the time run). A reduce's clock and progress are its reduce phase's (from
 * sortFinishTime; Hadoop's reduce progress is 2/3 at its start), as the history's reduce durations
 * are the reduce phase (elapsedReduceTime). O(1) time and memory per attempt and update.
 *
 * <p>{@value #SCALE} picks what T_s is measured against, per job:
 * <ul>
 * <li>{@code absolute} (the default, and the only one of settings without ratios): T_s is
 * {@value #MAP_TIMEOUT} / {@value #REDUCE_TIMEOUT} ms, a quantile of the history's durations;</li>
 * <li>{@code relative} (ours, beyond the thesis): {@value #MAP_RATIO} / {@value #REDUCE_RATIO} carry
 * T_s over the mean of the stage's past durations, and once {@link #MIN_FINISHED} task(s) of the type
 * have succeeded in this job, T_s is that ratio x the mean duration (its timed part) of the type's
 * succeeded attempts so far, a running sum and count as Hadoop's DataStatistics keeps (O(1)), so T_s
 * follows this run's load as DefaultSpeculator's judgement against finished tasks does; before that,
 * the absolute T_s. The first tasks to finish are the fastest, so the early mean is low: copies come
 * earlier, not later, while it is.</li>
 * </ul>
 */
public class KwikenTaskRuntimeEstimator implements TaskRuntimeEstimator {

  public static final String MAP_TIMEOUT = "corral.kwiken.map.timeout-ms";
  public static final String REDUCE_TIMEOUT = "corral.kwiken.reduce.timeout-ms";
  public static final String RULE = "corral.kwiken.rule";
  public static final String SCALE = "corral.kwiken.timeout-scale";
  public static final String MAP_RATIO = "corral.kwiken.map.timeout-ratio";
  public static final String REDUCE_RATIO = "corral.kwiken.reduce.timeout-ratio";
  /** Succeeded tasks of a type before the relative scale replaces the absolute T_s (DefaultSpeculator also waits for one). */
  static final int MIN_FINISHED = 1;
  public static final String MIN_ELAPSED = "corral.kwiken.progress.min-elapsed-fraction";
  public static final double DEFAULT_MIN_ELAPSED = 0.25;
  /** Added to an overdue attempt's estimate: its end is far beyond any replacement's. */
  static final long OVERDUE = 1L << 50;
  /** Hadoop's floor on progress in a projection (LegacyTaskRuntimeEstimator). */
  static final double MIN_PROGRESS = 0.0001;
  /** Hadoop's reduce progress at the start of the reduce phase (copy, sort, reduce: a third each). */
  static final double REDUCE_PHASE_START = 2.0 / 3.0;
  private static final long NONE = -1L;

  /** How an attempt that will run past T_s is seen (§5.3.1's timeout, or our progress projection). */
  enum Rule { TIMEOUT, PROGRESS }

  /** The timed durations of a type's succeeded attempts: a running sum and count (O(1) per update). */
  private static final class Finished {
    private long sum;
    private long count;

    synchronized void add(long duration) {
      sum += duration;
      count++;
    }

    /** ratio x the mean duration, or NONE before {@link #MIN_FINISHED} have succeeded. */
    synchronized long scaled(double ratio) {
      return count < MIN_FINISHED ? NONE : Math.round(ratio * sum / count);
    }
  }

  /** An attempt's start, its clock's start and its projected runtime at its last status of progress &gt; 0 (ms; NONE: none yet). */
  private static final class Attempt {
    final long start;
    volatile long clockStart;
    volatile long projected = NONE;

    Attempt(long start, long clockStart) {
      this.start = start;
      this.clockStart = clockStart;
    }
  }

  private final Map<TaskAttemptId, Attempt> attempts = new ConcurrentHashMap<>();
  private long mapTimeout = NONE;
  private long reduceTimeout = NONE;
  private double mapRatio = Double.NaN;
  private double reduceRatio = Double.NaN;
  private final Finished mapsFinished = new Finished();
  private final Finished reducesFinished = new Finished();
  private Rule rule = Rule.PROGRESS;
  private double minElapsed = DEFAULT_MIN_ELAPSED;
  private long reportInterval;
  private Clock clock;

  @Override
  public void contextualize(Configuration conf, AppContext context) {
    mapTimeout = timeout(conf, MAP_TIMEOUT);
    reduceTimeout = timeout(conf, REDUCE_TIMEOUT);
    rule = rule(conf);
    if (relative(conf)) {
      mapRatio = ratio(conf, MAP_RATIO);
      reduceRatio = ratio(conf, REDUCE_RATIO);
    }
    minElapsed = minElapsed(conf);
    reportInterval = MRJobConfUtil.getTaskProgressReportInterval(conf);
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

  private static Rule rule(Configuration conf) {
    String value = conf.getTrimmed(RULE, "progress");
    switch (value) {
      case "progress":
        return Rule.PROGRESS;
      case "timeout":
        return Rule.TIMEOUT;
      default:
        throw new IllegalArgumentException(RULE + ": must be progress or timeout, got " + value);
    }
  }

  private static boolean relative(Configuration conf) {
    String value = conf.getTrimmed(SCALE, "absolute");
    if (!value.equals("absolute") && !value.equals("relative")) {
      throw new IllegalArgumentException(SCALE + ": must be absolute or relative, got " + value);
    }
    return value.equals("relative");
  }

  /** T_s over the stage's mean past duration; NaN (the absolute T_s throughout) when unset. */
  private static double ratio(Configuration conf, String key) {
    String value = conf.getTrimmed(key);
    if (value == null || value.isEmpty()) {
      return Double.NaN;
    }
    double ratio;
    try {
      ratio = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + ": not a number: " + value, e);
    }
    if (!(ratio >= 0.0 && ratio < Double.POSITIVE_INFINITY)) {
      throw new IllegalArgumentException(key + ": must be a finite number >= 0, got " + value);
    }
    return ratio;
  }

  private static double minElapsed(Configuration conf) {
    String value = conf.getTrimmed(MIN_ELAPSED, String.valueOf(DEFAULT_MIN_ELAPSED));
    double fraction;
    try {
      fraction = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(MIN_ELAPSED + ": not a number: " + value, e);
    }
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
      throw new IllegalArgumentException(MIN_ELAPSED + ": must be in [0, 1], got " + value);
    }
    return fraction;
  }

  /** T_s in ms: the ratio x the job's mean succeeded duration of the type (relative scale, once known), else the absolute T_s. */
  long timeoutOf(TaskType type) {
    boolean map = type == TaskType.MAP;
    double ratio = map ? mapRatio : reduceRatio;
    long scaled = Double.isNaN(ratio) ? NONE : (map ? mapsFinished : reducesFinished).scaled(ratio);
    return scaled != NONE ? scaled : map ? mapTimeout : reduceTimeout;
  }

  private static boolean isMap(TaskAttemptId id) {
    return id.getTaskId().getTaskType() == TaskType.MAP;
  }

  @Override
  public void enrollAttempt(TaskAttemptStatus status, long timestamp) {
    attempts.putIfAbsent(status.id, new Attempt(timestamp, isMap(status.id) ? timestamp : NONE));
  }

  @Override
  public long attemptEnrolledTime(TaskAttemptId attemptID) {
    Attempt a = attempts.get(attemptID);
    return a == null ? Long.MAX_VALUE : a.start;
  }

  @Override
  public void updateAttempt(TaskAttemptStatus status, long timestamp) {
    TaskAttemptState state = status.taskState;
    if (state == TaskAttemptState.SUCCEEDED || state == TaskAttemptState.FAILED
        || state == TaskAttemptState.KILLED) {
      Attempt done = attempts.remove(status.id);
      if (state == TaskAttemptState.SUCCEEDED && done != null && done.clockStart != NONE && timestamp >= done.clockStart) {
        (isMap(status.id) ? mapsFinished : reducesFinished).add(timestamp - done.clockStart);
      }
      return;
    }
    Attempt a = attempts.get(status.id);
    if (a == null) {
      return;
    }
    if (!isMap(status.id) && a.clockStart == NONE && status.sortFinishTime > 0) {
      a.clockStart = status.sortFinishTime;
    }
    double progress = phaseProgress(status);
    if (a.clockStart != NONE && timestamp > a.clockStart && progress > 0.0) {
      a.projected = projection(timestamp - a.clockStart, progress);
    }
  }

  /** The attempt's progress in its timed part: a map's, or its reduce phase's. */
  private static double phaseProgress(TaskAttemptStatus status) {
    double p = status.progress;
    return isMap(status.id) ? p : (p - REDUCE_PHASE_START) / (1.0 - REDUCE_PHASE_START);
  }

  /** Projected runtime: elapsed / progress, progress floored as Hadoop's estimator floors it. */
  static long projection(long elapsed, double progress) {
    return Math.round(elapsed / Math.max(MIN_PROGRESS, Math.min(1.0, progress)));
  }

  /** Long.MAX_VALUE (DefaultSpeculator: ON_SCHEDULE, no copy) for a type without a timeout. */
  @Override
  public long thresholdRuntime(TaskId taskID) {
    long timeout = timeoutOf(taskID.getTaskType());
    return timeout == NONE ? Long.MAX_VALUE : timeout;
  }

  @Override
  public long estimatedRuntime(TaskAttemptId id) {
    Attempt a = attempts.get(id);
    long timeout = timeoutOf(id.getTaskId().getTaskType());
    if (a == null || a.clockStart == NONE || timeout == NONE) {
      return 0L;
    }
    long now = clock.getTime();
    long runtime = runtime(now - a.clockStart, a.projected, timeout);
    return runtime > timeout ? OVERDUE + runtime + (now - a.start) : 0L;
  }

  /**
   * The attempt's runtime as the rule sees it: what it has run, or (progress, once judged, no earlier than one
   * status interval in) the larger of that and its projection at its last status of progress &gt; 0; an attempt
   * without one has nothing to project and is judged on what it has run.
   */
  long runtime(long elapsed, long projected, long timeout) {
    if (rule == Rule.TIMEOUT || projected == NONE || elapsed < Math.max(minElapsed * timeout, reportInterval)) {
      return elapsed;
    }
    return Math.max(elapsed, projected);
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
