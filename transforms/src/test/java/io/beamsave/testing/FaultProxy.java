package io.beamsave.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * An HTTP relay between a client and an S3 server that injects the faults of a flaky network:
 * for a chosen share of requests (or those a predicate picks) it answers 500 or 503 SlowDown
 * with an S3 error body, resets the connection before answering, or resets it part-way through
 * the server's answer. Each request gets its own connection to the server ({@code Connection:
 * close}), so the relay only needs to find where a request's head ends.
 */
public final class FaultProxy implements AutoCloseable {
  public enum Fault { ERROR_500, SLOW_DOWN_503, RESET_BEFORE_ANSWER, RESET_DURING_ANSWER }

  private final ServerSocket server;
  private final int targetPort;
  private final Random random;
  private volatile double rate;
  private volatile Predicate<String> always = line -> false;
  private Fault next;
  private int nextCount;
  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicInteger faults = new AtomicInteger();
  private final AtomicLong answerBytes = new AtomicLong();
  private final Thread acceptor;

  public FaultProxy(int targetPort, double rate, long seed) throws IOException {
    this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
    this.targetPort = targetPort;
    this.rate = rate;
    this.random = new Random(seed);
    this.acceptor = new Thread(this::acceptLoop, "fault-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Share of requests that get a random fault. */
  public void rate(double share) {
    this.rate = share;
  }

  /** The next {@code n} requests get {@code fault}, whatever the rate says. */
  public void failNext(Fault fault, int n) {
    synchronized (random) {
      next = fault;
      nextCount = n;
    }
  }

  /** Requests whose request line matches get a 500 every time. */
  public void alwaysFail(Predicate<String> requestLine) {
    this.always = requestLine;
  }

  public int requests() {
    return requests.get();
  }

  public int faults() {
    return faults.get();
  }

  /** Bytes the server sent back through the relay (headers included). */
  public long answerBytes() {
    return answerBytes.get();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Thread t = new Thread(() -> handle(client), "fault-proxy-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private Fault pick(String requestLine) {
    if (always.test(requestLine)) {
      return Fault.ERROR_500;
    }
    synchronized (random) {
      if (nextCount > 0) {
        nextCount--;
        return next;
      }
      if (random.nextDouble() >= rate) {
        return null;
      }
      return Fault.values()[random.nextInt(Fault.values().length)];
    }
  }

  private void handle(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      String head = readHead(in);
      if (head == null) {
        return;
      }
      requests.incrementAndGet();
      String requestLine = head.substring(0, head.indexOf("\r\n"));
      long bodyLength = contentLength(head);
      boolean expectContinue = head.toLowerCase(Locale.ROOT).contains("\nexpect: 100-continue");
      Fault fault = pick(requestLine);
      if (fault != null) {
        faults.incrementAndGet();
      }
      if (fault == Fault.ERROR_500 || fault == Fault.SLOW_DOWN_503) {
        if (!expectContinue) {
          in.skipNBytes(bodyLength);
        }
        boolean slow = fault == Fault.SLOW_DOWN_503;
        String body =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                + (slow ? "SlowDown" : "InternalError") + "</Code><Message>injected</Message></Error>";
        out.write(
            ((slow ? "HTTP/1.1 503 Slow Down" : "HTTP/1.1 500 Internal Server Error")
                    + "\r\nContent-Type: application/xml\r\nContent-Length: " + body.length()
                    + "\r\nConnection: close\r\n\r\n" + body)
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return;
      }
      if (fault == Fault.RESET_BEFORE_ANSWER) {
        reset(client);
        return;
      }
      try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort)) {
        OutputStream up = upstream.getOutputStream();
        up.write(withConnectionClose(head).getBytes(StandardCharsets.ISO_8859_1));
        up.flush();
        Thread body =
            new Thread(
                () -> {
                  try {
                    copy(in, up, bodyLength, null, -1);
                    up.flush();
                  } catch (IOException ignored) {
                    // The server answered early or the client went away.
                  }
                },
                "fault-proxy-body");
        body.setDaemon(true);
        body.start();
        long cut = fault == Fault.RESET_DURING_ANSWER ? 200 : -1;
        boolean complete = copy(upstream.getInputStream(), out, Long.MAX_VALUE, answerBytes, cut);
        if (!complete) {
          reset(client);
        }
      }
    } catch (IOException e) {
      // A reset or an aborted client: the connection is over either way.
    }
  }

  /** Copies up to {@code max} bytes; returns false if it stopped at {@code cut} bytes. */
  private static boolean copy(InputStream in, OutputStream out, long max, AtomicLong count, long cut)
      throws IOException {
    byte[] buf = new byte[64 * 1024];
    long done = 0;
    while (done < max) {
      int want = (int) Math.min(buf.length, max - done);
      if (cut >= 0) {
        want = (int) Math.min(want, cut - done);
        if (want == 0) {
          out.flush();
          return false;
        }
      }
      int n = in.read(buf, 0, want);
      if (n < 0) {
        break;
      }
      out.write(buf, 0, n);
      done += n;
      if (count != null) {
        count.addAndGet(n);
      }
    }
    out.flush();
    return true;
  }

  private static void reset(Socket s) throws IOException {
    s.setSoLinger(true, 0);
    s.close();
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
          ? state + 1
          : (b == '\r' ? 1 : 0);
      if (head.size() > 1 << 16) {
        throw new IOException("request head too long");
      }
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  private static long contentLength(String head) {
    for (String line : head.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        return Long.parseLong(line.substring(15).trim());
      }
    }
    return 0;
  }

  private static String withConnectionClose(String head) {
    StringBuilder b = new StringBuilder();
    for (String line : head.split("\r\n")) {
      if (line.isEmpty() || line.toLowerCase(Locale.ROOT).startsWith("connection:")) {
        continue;
      }
      b.append(line).append("\r\n");
    }
    return b.append("Connection: close\r\n\r\n").toString();
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
