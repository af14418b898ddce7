package io.corralyarn.yarn;

import java.util.ArrayDeque;
import java.util.Deque;

import javax.management.ObjectName;

import org.apache.hadoop.metrics2.util.MBeans;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * The last {@value #CAPACITY} rack-set fallback events (thesis §4.6), so that a pipeline can record
 * why a job ran outside its racks: read over the RM's /jmx, bean
 * {@code Hadoop:service=ResourceManager,name=CorralRackSetFallbacks}.
 */
final class RackSetFallbackLog implements RackSetFallbackLogMXBean {

  static final String BEAN_NAME = "CorralRackSetFallbacks";
  static final int CAPACITY = 1000;

  private final Deque<String> events = new ArrayDeque<>();
  private ObjectName registered;

  /** Registers the bean (once per scheduler; {@link #unregister} on stop). */
  void register() {
    registered = MBeans.register("ResourceManager", BEAN_NAME, this);
  }

  void unregister() {
    if (registered != null) {
      MBeans.unregister(registered);
      registered = null;
    }
  }

  synchronized void lifted(ApplicationId appId, String reason) {
    add(appId + " lifted: " + reason);
  }

  synchronized void confinedAgain(ApplicationId appId) {
    add(appId + " confined again");
  }

  private void add(String event) {
    if (events.size() == CAPACITY) {
      events.removeFirst();
    }
    events.addLast(event);
  }

  @Override
  public synchronized String[] getEvents() {
    return events.toArray(new String[0]);
  }
}
