package io.corralyarn.yarn;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * Network latencies (µs) between hosts or racks, read from the file named by {@value #FILE_KEY}:
 * the CSV that corral-yarn's NoMora package and {@code corral plan --latency} read (a header row of
 * names, then one row per name in the header's order; row i, column k is the latency from name i to
 * name k). A name is a NodeManager host or a rack path; the latency between two nodes is their
 * hosts' entry, else their racks' entry (a rack's diagonal entry is the latency inside it), else
 * unknown ({@link Double#POSITIVE_INFINITY}, ordered last). Of the two directions the larger
 * counts: NoMora uses the maximum latency between two machines (its eq. 1). Immutable.
 */
final class NodeLatency {

  /** The latency file the ResourceManager reads when the scheduler starts (unset: no ordering). */
  static final String FILE_KEY = "yarn.scheduler.corral.latency.file";

  private final Map<String, Integer> index;
  private final double[][] latencyUs;

  private NodeLatency(Map<String, Integer> index, double[][] latencyUs) {
    this.index = index;
    this.latencyUs = latencyUs;
  }

  /** The configured file's table, or null when {@value #FILE_KEY} is unset or empty. */
  static NodeLatency fromConfiguration(Configuration conf) throws IOException {
    String file = conf.getTrimmed(FILE_KEY, "");
    return file.isEmpty() ? null : parse(Files.readString(Path.of(file), StandardCharsets.UTF_8),
        file);
  }

  /** Parses the CSV; a bad cell is an IllegalArgumentException naming the file and the cell. */
  static NodeLatency parse(String text, String source) {
    List<String[]> rows = new ArrayList<>();
    for (String line : text.split("\\R")) {
      if (!line.isBlank()) {
        rows.add(line.split(",", -1));
      }
    }
    if (rows.isEmpty()) {
      throw new IllegalArgumentException(source + ": names: empty file, expected a header row");
    }
    Map<String, Integer> index = new HashMap<>();
    String[] names = rows.get(0);
    for (int i = 0; i < names.length; i++) {
      String name = names[i].trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty() || index.putIfAbsent(name, i) != null) {
        throw new IllegalArgumentException(source + ": names[" + i + "]: empty or duplicate name '"
            + names[i] + "'");
      }
    }
    if (rows.size() - 1 != names.length) {
      throw new IllegalArgumentException(source + ": latency_us: must have " + names.length
          + " rows (one per name), got " + (rows.size() - 1));
    }
    double[][] latency = new double[names.length][names.length];
    for (int i = 0; i < names.length; i++) {
      String[] row = rows.get(i + 1);
      if (row.length != names.length) {
        throw new IllegalArgumentException(source + ": latency_us[" + i + "]: row must have "
            + names.length + " entries");
      }
      for (int k = 0; k < names.length; k++) {
        latency[i][k] = cell(row[k], source, i, k);
      }
    }
    return new NodeLatency(index, latency);
  }

  private static double cell(String text, String source, int row, int column) {
    double value;
    try {
      value = Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      value = Double.NaN;
    }
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(source + ": latency_us[" + row + "][" + column
          + "]: must be a finite latency >= 0 µs, got '" + text.trim() + "'");
    }
    return value;
  }

  /** Latency in µs between two nodes (host, rack each), or +infinity when the file has neither. */
  double between(String hostA, String rackA, String hostB, String rackB) {
    double hosts = entry(hostA, hostB);
    return Double.isNaN(hosts) ? orUnknown(entry(rackA, rackB)) : hosts;
  }

  private double entry(String a, String b) {
    Integer i = index.get(a.toLowerCase(Locale.ROOT));
    Integer k = index.get(b.toLowerCase(Locale.ROOT));
    return i == null || k == null ? Double.NaN : Math.max(latencyUs[i][k], latencyUs[k][i]);
  }

  private static double orUnknown(double value) {
    return Double.isNaN(value) ? Double.POSITIVE_INFINITY : value;
  }
}
