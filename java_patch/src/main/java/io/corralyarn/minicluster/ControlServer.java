package io.corralyarn.minicluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded cluster's control channel (docs/minicluster.md, "Control channel"): a TCP server on
 * 127.0.0.1 that takes one line {@code COMMAND [ARG...]} per connection, runs the command's
 * handler and answers one line, {@code ok[ detail]} or {@code error: reason}, then closes. Commands
 * run one at a time. Fault-injection tests use it to stop and start daemons of a live cluster.
 *
 * <p>Commands are a map from name to {@link Handler}; {@link #clusterCommands} holds the embedded
 * cluster's, one line each.
 */
public final class ControlServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ControlServer.class);
  /** Longest command line read; a longer one is refused. */
  static final int MAX_LINE = 1024;
  private static final long MAX_DRAINED = 1 << 20;
  private static final int READ_TIMEOUT_MS = 10_000;

  /** Runs one command; returns the detail of the {@code ok} reply (empty for none). */
  @FunctionalInterface
  public interface Handler {
    String handle(List<String> args) throws Exception;
  }

  private final Map<String, Handler> commands;
  private final ServerSocket socket;
  private final Thread acceptor;

  private ControlServer(Map<String, Handler> commands, ServerSocket socket) {
    this.commands = Collections.unmodifiableMap(new LinkedHashMap<>(commands));
    this.socket = socket;
    this.acceptor = new Thread(this::serve, "corral-minicluster-control");
    this.acceptor.setDaemon(true);
  }

  /** Starts serving {@code commands} on 127.0.0.1 at a free port below the ephemeral range. */
  public static ControlServer start(Map<String, Handler> commands) throws IOException {
    String host = ClusterLayout.MASTER_HOST;
    ServerSocket socket = new ServerSocket();
    socket.bind(new InetSocketAddress(InetAddress.getByName(host), EmbeddedCluster.freePort(host)));
    ControlServer server = new ControlServer(commands, socket);
    server.acceptor.start();
    LOG.info("Control channel on {}; commands {}", server.address(), commands.keySet());
    return server;
  }

  /** The embedded cluster's commands (HOST is a worker's address, as in the description). */
  public static Map<String, Handler> clusterCommands(EmbeddedCluster cluster) {
    Map<String, Handler> c = new LinkedHashMap<>();
    c.put("stop-nodemanager", args -> cluster.stopNodeManager(worker(cluster, args)));
    c.put("start-nodemanager", args -> cluster.restartNodeManager(worker(cluster, args)));
    c.put("stop-datanode", args -> cluster.stopDataNode(worker(cluster, args)));
    c.put("start-datanode", args -> cluster.restartDataNode(worker(cluster, args)));
    c.put("restart-resourcemanager", args -> {
      noArguments(args);
      return cluster.restartResourceManager();
    });
    c.put("restart-namenode", args -> {
      noArguments(args);
      return cluster.restartNameNode();
    });
    return c;
  }

  /** {@code host:port} the server listens on. */
  public String address() {
    return socket.getInetAddress().getHostAddress() + ":" + socket.getLocalPort();
  }

  /** Runs one command line and returns the reply line; never throws. */
  String dispatch(String line) {
    List<String> words = line == null ? List.of() : Arrays.asList(line.trim().split("\\s+"));
    if (words.isEmpty() || words.get(0).isEmpty()) {
      return "error: empty command; commands: " + String.join(", ", commands.keySet());
    }
    Handler handler = commands.get(words.get(0));
    if (handler == null) {
      return "error: unknown command " + words.get(0) + "; commands: "
          + String.join(", ", commands.keySet());
    }
    try {
      String detail = handler.handle(words.subList(1, words.size()));
      return detail == null || detail.isEmpty() ? "ok" : "ok " + oneLine(detail);
    } catch (Exception e) {
      LOG.warn("Control command '{}' failed", line, e);
      return "error: " + oneLine(String.valueOf(e.getMessage()));
    }
  }

  private void serve() {
    while (!socket.isClosed()) {
      try (Socket client = socket.accept()) {
        client.setSoTimeout(READ_TIMEOUT_MS);
        String reply = reply(client);
        OutputStream out = client.getOutputStream();
        out.write((reply + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      } catch (SocketException e) {
        if (!socket.isClosed()) {
          LOG.warn("Control connection failed", e);
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("Control connection failed", e);
      }
    }
  }

  private String reply(Socket client) throws IOException {
    BufferedReader in = new BufferedReader(
        new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder line = new StringBuilder();
    long read = 0;
    // the whole line is read even when too long: closing with unread input would reset the
    // connection and lose the reply
    for (int c = in.read(); c != -1 && c != '\n' && read <= MAX_DRAINED; c = in.read()) {
      read++;
      if (line.length() <= MAX_LINE) {
        line.append((char) c);
      }
    }
    if (line.length() > MAX_LINE) {
      return "error: command line longer than " + MAX_LINE + " characters";
    }
    LOG.info("Control command: {}", line.toString().trim());
    synchronized (this) {  // one command at a time
      return dispatch(line.toString());
    }
  }

  private static String oneLine(String text) {
    return text.replaceAll("[\\r\\n]+", " ").trim();
  }

  private static void noArguments(List<String> args) {
    if (!args.isEmpty()) {
      throw new IllegalArgumentException("expected no argument, got " + args.size());
    }
  }

  private static ClusterLayout.Node worker(EmbeddedCluster cluster, List<String> args) {
    if (args.size() != 1) {
      throw new IllegalArgumentException("expected one argument, a worker's address (HOST), got "
          + args.size());
    }
    return cluster.layout().nodes().stream().filter(n -> n.host().equals(args.get(0)))
        .findFirst().orElseThrow(() -> new IllegalArgumentException("unknown host " + args.get(0)
            + "; workers: " + cluster.layout().nodes().stream().map(ClusterLayout.Node::host)
            .toList()));
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      LOG.warn("Closing the control channel failed", e);
    }
  }
}
