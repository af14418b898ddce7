package io.corralyarn.minicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control channel: one line in, one line out, errors as replies and never a dead server. */
class ControlServerTest {

  @TempDir
  Path baseDir;

  private static String send(ControlServer server, String line) throws Exception {
    String[] hostPort = server.address().split(":");
    try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
      OutputStream out = socket.getOutputStream();
      out.write(line.getBytes(StandardCharsets.UTF_8));
      out.flush();
      socket.shutdownOutput();
      BufferedReader in = new BufferedReader(
          new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String reply = in.readLine();
      assertEquals(null, in.readLine(), "one reply line, then the server closes");
      return reply;
    }
  }

  @Test
  void answersOneLinePerCommandAndSurvivesBadOnes() throws Exception {
    Map<String, ControlServer.Handler> commands = new LinkedHashMap<>();
    commands.put("echo", args -> String.join(" ", args));
    commands.put("quiet", args -> "");
    commands.put("boom", args -> {
      throw new IllegalStateException("it broke\non two lines");
    });
    try (ControlServer server = ControlServer.start(commands)) {
      assertTrue(server.address().startsWith("127.0.0.1:"), server.address());
      int port = Integer.parseInt(server.address().split(":")[1]);
      assertTrue(port < EmbeddedCluster.ephemeralRangeStart(), "port below the ephemeral range");
      assertEquals("ok a b", send(server, "echo a  b\n"));
      assertEquals("ok", send(server, "quiet\r\n"));
      assertEquals("ok x", send(server, "echo x"), "a line without its newline still counts");
      assertEquals("error: it broke on two lines", send(server, "boom\n"));
      assertEquals("error: unknown command nope; commands: echo, quiet, boom",
          send(server, "nope 1\n"));
      assertEquals("error: empty command; commands: echo, quiet, boom", send(server, "\n"));
      assertEquals("error: empty command; commands: echo, quiet, boom", send(server, ""));
      assertEquals("error: command line longer than " + ControlServer.MAX_LINE + " characters",
          send(server, "echo " + "y".repeat(2 * ControlServer.MAX_LINE) + "\n"));
      assertEquals("ok still here", send(server, "echo still here\n"));
    }
  }

  @Test
  void clusterCommandsRefuseUnknownHostsAndDaemonsNotRunning() throws Exception {
    EmbeddedCluster cluster = new EmbeddedCluster(new ClusterLayout(1, 2), baseDir, List.of(),
        new EmbeddedCluster.Options(false, false, 1024, 1, 1000));
    try (ControlServer server = ControlServer.start(ControlServer.clusterCommands(cluster))) {
      assertEquals("error: unknown host 10.1.2.3; workers: [127.0.100.10, 127.0.100.11]",
          send(server, "stop-nodemanager 10.1.2.3\n"));
      assertEquals("error: expected one argument, a worker's address (HOST), got 0",
          send(server, "start-datanode\n"));
      assertEquals("error: expected one argument, a worker's address (HOST), got 2",
          send(server, "stop-datanode 127.0.100.10 127.0.100.11\n"));
      assertEquals("error: no NodeManager running on 127.0.100.10",
          send(server, "stop-nodemanager 127.0.100.10\n"));
      assertEquals("error: no DataNode running on 127.0.100.11",
          send(server, "stop-datanode 127.0.100.11\n"));
      assertEquals("error: expected no argument, got 1",
          send(server, "restart-namenode 127.0.0.1\n"));
      assertEquals("error: this cluster runs no NameNode", send(server, "restart-namenode\n"));
      assertTrue(send(server, "restart-everything\n").startsWith(
          "error: unknown command restart-everything; commands: stop-nodemanager, "
              + "start-nodemanager, stop-datanode, start-datanode"));
    }
  }
}
