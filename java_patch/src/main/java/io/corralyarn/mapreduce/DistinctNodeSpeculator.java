package io.corralyarn.mapreduce;

import java.util.Collection;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.api.records.TaskAttemptId;
import org.apache.hadoop.mapreduce.v2.app.AppContext;
import org.apache.hadoop.mapreduce.v2.app.job.Job;
import org.apache.hadoop.mapreduce.v2.app.job.Task;
import org.apache.hadoop.mapreduce.v2.app.job.TaskAttempt;
import org.apache.hadoop.mapreduce.v2.app.job.event.TaskAttemptKillEvent;
import org.apache.hadoop.mapreduce.v2.app.speculate.DefaultSpeculator;
import org.apache.hadoop.mapreduce.v2.app.speculate.Speculator;
import org.apache.hadoop.mapreduce.v2.app.speculate.SpeculatorEvent;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's DefaultSpeculator, except that a speculative copy never runs on the node of another running
 * attempt of its task (docs/kwiken.md, "Kwiken for YARN"): a copy that starts there is killed at once, and
 * the speculator may copy the task again at a later scan. A copy on its original's node meets the same slow
 * CPU or disk and loses; the MR AM asks for a copy's container on its split's hosts, as for the first attempt
 * (TaskAttemptImpl.RequestContainerTransition), which include the original's node. Tez excludes that node
 * from the request (TEZ-4042); MapReduce's container request is not a plug-in point, its speculator is.
 *
 * <p>A per-job class: {@code yarn.app.mapreduce.am.job.speculator.class} names it. Only the decision to keep
 * a started copy changes; when and what to copy stay DefaultSpeculator's (and its estimator's). O(attempts of
 * the task) per attempt start.
 */
public class DistinctNodeSpeculator extends DefaultSpeculator {

  private static final Logger LOG = LoggerFactory.getLogger(DistinctNodeSpeculator.class);
  /** The diagnostic of a killed copy, also the line the bench counts in the MR AM's syslog. */
  static final String KILLED_ON_ORIGINAL_NODE = "speculative copy started on its original's node";

  private final AppContext context;

  /** The constructor the MR AM calls (MRAppMaster.createSpeculator). */
  public DistinctNodeSpeculator(Configuration conf, AppContext context) {
    super(conf, context);
    this.context = context;
  }

  @Override
  public void handle(SpeculatorEvent event) {
    super.handle(event);
    if (event.getType() == Speculator.EventType.ATTEMPT_START) {
      killIfOnOriginalNode(event.getReportedStatus().id);
    }
  }

  private void killIfOnOriginalNode(TaskAttemptId started) {
    Job job = context.getJob(started.getTaskId().getJobId());
    Task task = job == null ? null : job.getTask(started.getTaskId());
    if (task == null) {
      return;
    }
    NodeId node = sharedNode(task.getAttempt(started), task.getAttempts().values());
    if (node != null) {
      LOG.info("{}: {} on {}, killed", KILLED_ON_ORIGINAL_NODE, started, node);
      context.getEventHandler().handle(
          new TaskAttemptKillEvent(started, KILLED_ON_ORIGINAL_NODE + " " + node));
    }
  }

  /** The node {@code started} shares with an earlier unfinished attempt of its task (a lower attempt number), else null. */
  static NodeId sharedNode(TaskAttempt started, Collection<TaskAttempt> attempts) {
    NodeId node = started == null ? null : started.getNodeId();
    if (node == null) {
      return null;
    }
    for (TaskAttempt other : attempts) {
      if (other.getID().getId() < started.getID().getId() && !other.isFinished() && node.equals(other.getNodeId())) {
        return node;
      }
    }
    return null;
  }
}
