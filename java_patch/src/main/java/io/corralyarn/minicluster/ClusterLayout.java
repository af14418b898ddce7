package io.corralyarn.minicluster;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Racks and hosts of the embedded cluster. Rack r (0-based) is "/rack-a", "/rack-b", ... (or
 * "/rack-NN" beyond 26 racks); its node n has the loopback address 127.0.(100+r).(10+n), which
 * is both its DataNode and its NodeManager host.
 */
public final class ClusterLayout {

  /** Address the NameNode, ResourceManager and JobHistory server listen on. */
  public static final String MASTER_HOST = "127.0.0.1";

  private final int racks;
  private final int nodesPerRack;

  public ClusterLayout(int racks, int nodesPerRack) {
    if (racks < 1 || racks > 150) {
      throw new IllegalArgumentException("racks must be in 1..150, got " + racks);
    }
    if (nodesPerRack < 1 || nodesPerRack > 200) {
      throw new IllegalArgumentException("nodes per rack must be in 1..200, got " + nodesPerRack);
    }
    this.racks = racks;
    this.nodesPerRack = nodesPerRack;
  }

  /** One worker machine: a DataNode and a NodeManager on the same address. */
  public record Node(String rack, String host) {
  }

  public int racks() {
    return racks;
  }

  public int nodesPerRack() {
    return nodesPerRack;
  }

  public String rackName(int rack) {
    return racks <= 26 ? "/rack-" + (char) ('a' + rack) : String.format("/rack-%02d", rack);
  }

  public List<Node> nodes() {
    List<Node> nodes = new ArrayList<>();
    for (int r = 0; r < racks; r++) {
      for (int n = 0; n < nodesPerRack; n++) {
        nodes.add(new Node(rackName(r), "127.0." + (100 + r) + "." + (10 + n)));
      }
    }
    return Collections.unmodifiableList(nodes);
  }

  /** The topology table (host, rack per line) read by Hadoop's TableMapping in HDFS and YARN. */
  public String topologyTable() {
    StringBuilder table = new StringBuilder();
    for (Node node : nodes()) {
      table.append(node.host()).append(' ').append(node.rack()).append('\n');
    }
    return table.toString();
  }
}
