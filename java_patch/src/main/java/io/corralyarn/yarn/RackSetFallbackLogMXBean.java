package io.corralyarn.yarn;

/**
 * The Corral scheduler's recent rack-set fallbacks (thesis §4.6), as a JMX bean
 * {@code Hadoop:service=ResourceManager,name=CorralRackSetFallbacks} at the RM's /jmx.
 */
public interface RackSetFallbackLogMXBean {

  /**
   * The latest events, oldest first: {@code <application id> lifted: <reason>} when an
   * application's restriction to its rack set was lifted, {@code <application id> confined again}
   * when enough NodeManagers of its racks came back.
   */
  String[] getEvents();
}
