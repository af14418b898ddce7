package io.corralyarn.minicluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Objects;

import javax.net.SocketFactory;

import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Hadoop RPC socket factory whose sockets are bound to one local address before they connect.
 *
 * <p>The NameNode records a DataNode's IP (and a writer's location) from the source address of
 * its RPC connection. All daemons of the embedded cluster share one JVM and loopback, so without
 * binding every DataNode would appear as 127.0.0.1. Each DataNode's configuration names this
 * factory ({@code hadoop.rpc.socket.factory.class.default}) and its own address
 * ({@value #BIND_ADDRESS_KEY}), so the NameNode sees distinct hosts, resolves each to its rack,
 * and treats a WebHDFS write sent to a DataNode as written by that DataNode.
 */
public class BoundSocketFactory extends SocketFactory implements Configurable {

  /** The local address to bind client sockets to. */
  public static final String BIND_ADDRESS_KEY = "corral.minicluster.bind-address";

  private Configuration conf;
  private InetAddress bindAddress;

  @Override
  public void setConf(Configuration configuration) {
    this.conf = configuration;
    String address = configuration.get(BIND_ADDRESS_KEY);
    if (address == null || address.isEmpty()) {
      throw new IllegalArgumentException(BIND_ADDRESS_KEY + " must be set to use "
          + BoundSocketFactory.class.getName());
    }
    try {
      this.bindAddress = InetAddress.getByName(address);
    } catch (IOException e) {
      throw new IllegalArgumentException("bad " + BIND_ADDRESS_KEY + ": " + address, e);
    }
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  @Override
  public Socket createSocket() throws IOException {
    if (UserGroupInformation.isSecurityEnabled() && calledByIpcClient()) {
      return new KeptBindingSocket(bindAddress);
    }
    SocketChannel channel = SocketChannel.open();
    channel.bind(new InetSocketAddress(bindAddress, 0));
    return channel.socket();
  }

  /**
   * Whether Hadoop's IPC client asks for the socket: in secure mode it binds it again, to its
   * principal's host, which a socket with a channel refuses. Every other user gets a socket with a
   * channel: the DataNodes' own DFSClients (WebHDFS OPEN) read blocks into direct buffers, which
   * Hadoop's {@code PacketReceiver} supports only through a channel.
   */
  private static boolean calledByIpcClient() {
    return StackWalker.getInstance().walk(frames -> frames.limit(4)
        .anyMatch(frame -> frame.getClassName().startsWith("org.apache.hadoop.ipc.Client$")));
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return connected(new InetSocketAddress(host, port));
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    throw new IOException("BoundSocketFactory binds to " + bindAddress + " only");
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
      int localPort) throws IOException {
    throw new IOException("BoundSocketFactory binds to " + bindAddress + " only");
  }

  private Socket connected(InetSocketAddress remote) throws IOException {
    Socket socket = createSocket();
    socket.connect(remote);
    return socket;
  }

  /**
   * In secure mode Hadoop's IPC client binds each new socket to the host of its Kerberos principal,
   * here the daemons' shared {@code hadoop/127.0.0.1} (docs/minicluster.md, "Secure mode"); a socket
   * already bound keeps its node's address. Hadoop's IPC streams take sockets without a channel.
   */
  private static final class KeptBindingSocket extends Socket {
    KeptBindingSocket(InetAddress address) throws IOException {
      super.bind(new InetSocketAddress(address, 0));
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
      if (!isBound()) {
        super.bind(local);
      }
    }
  }

  // Hadoop caches one IPC client per socket factory; factories binding to different addresses
  // must not share one.
  @Override
  public boolean equals(Object other) {
    return other instanceof BoundSocketFactory
        && Objects.equals(bindAddress, ((BoundSocketFactory) other).bindAddress);
  }

  @Override
  public int hashCode() {
    return Objects.hash(BoundSocketFactory.class, bindAddress);
  }
}
