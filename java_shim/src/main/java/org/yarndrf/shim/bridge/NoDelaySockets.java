package org.yarndrf.shim.bridge;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;
import javax.net.SocketFactory;

/**
 * Socket factories that set TCP_NODELAY. py4j never sets it, and Java's BufferedWriter flushes
 * in 8 KiB pieces, so without it any message of 8,192 characters or more waits ~44 ms for
 * Nagle's algorithm and the peer's delayed ACK.
 */
public final class NoDelaySockets {
  private NoDelaySockets() {
  }

  public static final SocketFactory CLIENT = new SocketFactory() {
    @Override
    public Socket createSocket() throws IOException {
      Socket s = new Socket();
      s.setTcpNoDelay(true);
      return s;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return noDelay(new Socket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
        throws IOException {
      return noDelay(new Socket(host, port, localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      return noDelay(new Socket(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
        int localPort) throws IOException {
      return noDelay(new Socket(address, port, localAddress, localPort));
    }
  };

  /** Accepted sockets inherit nothing useful, so they are switched to TCP_NODELAY on accept. */
  public static final ServerSocketFactory SERVER = new ServerSocketFactory() {
    @Override
    public ServerSocket createServerSocket() throws IOException {
      return new NoDelayServerSocket();
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
      ServerSocket s = new NoDelayServerSocket();
      s.bind(new java.net.InetSocketAddress(port));
      return s;
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog) throws IOException {
      ServerSocket s = new NoDelayServerSocket();
      s.bind(new java.net.InetSocketAddress(port), backlog);
      return s;
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog, InetAddress ifAddress)
        throws IOException {
      ServerSocket s = new NoDelayServerSocket();
      s.bind(new java.net.InetSocketAddress(ifAddress, port), backlog);
      return s;
    }
  };

  static Socket noDelay(Socket s) throws IOException {
    s.setTcpNoDelay(true);
    return s;
  }

  private static final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket() throws IOException {
      super();
    }

    @Override
    public Socket accept() throws IOException {
      return noDelay(super.accept());
    }
  }
}
