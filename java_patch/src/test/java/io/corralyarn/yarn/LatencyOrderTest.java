package io.corralyarn.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;

/** The latency file and the order of a latency-sensitive application's nodes (no cluster). */
class LatencyOrderTest {

  private static final String RACKS = "/rack-a,/rack-b\n20,500\n400,20\n";

  private static LatencyOrder.Candidate node(String host, double latency, int containers) {
    return new LatencyOrder.Candidate(host, latency, Resource.newInstance(512 * containers, containers));
  }

  @Test
  void hostEntriesComeFirstThenRacksThenUnknown() {
    NodeLatency table = NodeLatency.parse("h1,h2,/RACK-A,/rack-b\n0,7,1,1\n9,0,1,1\n1,1,20,500\n"
        + "1,1,400,20\n", "test.csv");
    assertEquals(9.0, table.between("h1", "/rack-a", "h2", "/rack-a"), "the larger direction");
    assertEquals(500.0, table.between("x", "/rack-a", "y", "/rack-b"));
    assertEquals(20.0, table.between("x", "/rack-b", "y", "/rack-b"), "inside a rack: its diagonal");
    assertEquals(Double.POSITIVE_INFINITY, table.between("x", "/rack-c", "y", "/rack-a"));
  }

  @Test
  void aBadFileNamesTheCell() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "/rack-a,/rack-b\n20,-1\n1,20\n", "f.csv")).getMessage().startsWith("f.csv: latency_us[0][1]:"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "/rack-a,/rack-b\n20,x\n1,20\n", "f.csv")).getMessage().contains("latency_us[0][1]"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "/rack-a,/rack-a\n20,1\n1,20\n", "f.csv")).getMessage().contains("names[1]"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "/rack-a,/rack-b\n20,1\n", "f.csv")).getMessage().contains("latency_us: must have 2 rows"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "/rack-a,/rack-b\n20,1\n1\n", "f.csv")).getMessage().contains("latency_us[1]"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NodeLatency.parse(
        "\n", "f.csv")).getMessage().contains("names"));
    assertEquals(20.0, NodeLatency.parse(RACKS, "f.csv").between("a", "/rack-a", "b", "/rack-a"));
  }

  @Test
  void theNearestNodesThatFitTheAsksAreOpenTheRestHeldBack() {
    List<LatencyOrder.Candidate> nodes = List.of(node("far1", 500, 4), node("near1", 20, 3),
        node("near2", 20, 4), node("far2", 500, 4));
    Resource six = Resource.newInstance(6 * 512, 6);
    assertEquals(Set.of("far1", "far2"), Set.copyOf(LatencyOrder.heldBack(nodes, six)));
    Resource nine = Resource.newInstance(9 * 512, 9);
    assertEquals(List.of(), LatencyOrder.heldBack(nodes, nine), "the near side is too small: all open");
    assertEquals(Set.of("far1", "far2"), Set.copyOf(LatencyOrder.heldBack(nodes,
        Resource.newInstance(0, 0))), "nothing pending: the nearest tier stays open");
    List<LatencyOrder.Candidate> full = List.of(node("near1", 20, 0), node("mid", 100, 1),
        node("far", 500, 4));
    assertEquals(List.of("far"), LatencyOrder.heldBack(full, Resource.newInstance(512, 1)),
        "a full near tier opens the next one, not the farthest");
  }

  @Test
  void theTagMarksSensitiveApplications() {
    assertTrue(LatencyOrder.sensitive(Set.of("corral-racks-0:/rack-a", "CORRAL-LATENCY:memcached")));
    assertFalse(LatencyOrder.sensitive(Set.of("corral-racks-0:/rack-a", "corral-latency:")));
    assertFalse(LatencyOrder.sensitive(Set.of()));
  }
}
