package io.corralyarn.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The embedded cluster's pre-chosen ports: never twice, never in the kernel's ephemeral range. */
class FreePortTest {

  @Test
  void portsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
    int ephemeral = EmbeddedCluster.ephemeralRangeStart();
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      int port = EmbeddedCluster.freePort("127.0.0.1");
      assertTrue(port < ephemeral, "port " + port + " is in the ephemeral range from " + ephemeral);
      assertTrue(seen.add(port), "port " + port + " handed out twice");
    }
    int port = EmbeddedCluster.freePort("127.0.0.1");
    try (ServerSocket socket = new ServerSocket(port, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      assertEquals(port, socket.getLocalPort());
    }
  }
}
