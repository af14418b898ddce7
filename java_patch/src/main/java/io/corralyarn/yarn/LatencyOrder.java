package io.corralyarn.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The nodes of a latency-sensitive application's rack set in order of their latency to its AM, the
 * root task (NoMora, paper 000: a task's performance follows its latency to the root), and which of
 * them it may use now: the nearest nodes, a tier of equal latency at a time, until their free
 * resources can hold everything the application still asks for. The nodes beyond are held back
 * (blacklisted for it) until the nearer ones fill up; a node farther away than any near node with
 * room never gets its containers first. Pure: the scheduler supplies the nodes and resources.
 */
final class LatencyOrder {

  /** Tag of a latency-sensitive application: {@code corral-latency:<its performance-latency function>}. */
  static final String TAG_PREFIX = "corral-latency:";

  /** A node of the rack set: its host, latency to the AM's node (µs) and unallocated resources. */
  record Candidate(String host, double latencyUs, Resource free) {
  }

  private LatencyOrder() {
  }

  /** Whether the application's tags mark it latency-sensitive. */
  static boolean sensitive(Collection<String> tags) {
    for (String tag : tags) {
      String lower = tag.trim().toLowerCase(Locale.ROOT);
      if (lower.startsWith(TAG_PREFIX) && lower.length() > TAG_PREFIX.length()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The hosts to hold back: everything beyond the shortest prefix of tiers (nodes of equal latency,
   * nearest first) whose free resources together fit {@code pending}. At least the nearest tier is
   * always open; when even all nodes cannot fit it, none is held back. O(n log n) in the nodes.
   */
  static List<String> heldBack(List<Candidate> nodes, Resource pending) {
    List<Candidate> sorted = new ArrayList<>(nodes);
    sorted.sort(Comparator.comparingDouble(Candidate::latencyUs).thenComparing(Candidate::host));
    Resource open = Resources.createResource(0, 0);
    int i = 0;
    while (i < sorted.size()) {
      double tier = sorted.get(i).latencyUs();
      while (i < sorted.size() && sorted.get(i).latencyUs() == tier) {
        Resources.addTo(open, sorted.get(i++).free());
      }
      if (Resources.fitsIn(pending, open)) {
        break;
      }
    }
    List<String> held = new ArrayList<>();
    for (Candidate node : sorted.subList(i, sorted.size())) {
      held.add(node.host());
    }
    return held;
  }
}
