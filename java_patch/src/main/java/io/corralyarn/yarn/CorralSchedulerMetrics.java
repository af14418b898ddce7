package io.corralyarn.yarn;

import org.apache.hadoop.metrics2.annotation.Metric;
import org.apache.hadoop.metrics2.annotation.Metrics;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.apache.hadoop.metrics2.lib.MutableGaugeInt;

/**
 * Metrics of the Corral scheduler, published through Hadoop metrics2 (JMX bean
 * {@code Hadoop:service=ResourceManager,name=CorralSchedulerMetrics}, visible at the RM's /jmx).
 */
@Metrics(about = "Corral rack-set enforcement", context = "yarn")
public class CorralSchedulerMetrics {

  static final String SOURCE_NAME = "CorralSchedulerMetrics";

  @Metric("Times an application's rack-set restriction was lifted because too few NodeManagers"
      + " of its racks were live")
  MutableCounterLong rackSetFallbacks;

  @Metric("Applications whose rack-set tags were malformed and were scheduled by default")
  MutableCounterLong malformedRackSetTags;

  @Metric("Applications whose rack set or priority came without a valid planner grant and were"
      + " scheduled as ordinary ones")
  MutableCounterLong ungrantedTags;

  @Metric("Applications currently confined to their rack set")
  MutableGaugeInt restrictedApplications;

  /** Registers a fresh source (one per scheduler; unregister on stop). */
  static CorralSchedulerMetrics register() {
    return DefaultMetricsSystem.instance().register(SOURCE_NAME,
        "Corral rack-set enforcement", new CorralSchedulerMetrics());
  }

  static void unregister() {
    DefaultMetricsSystem.instance().unregisterSource(SOURCE_NAME);
  }

  public long getRackSetFallbacks() {
    return rackSetFallbacks.value();
  }

  public long getMalformedRackSetTags() {
    return malformedRackSetTags.value();
  }

  public long getUngrantedTags() {
    return ungrantedTags.value();
  }

  public int getRestrictedApplications() {
    return restrictedApplications.value();
  }
}
