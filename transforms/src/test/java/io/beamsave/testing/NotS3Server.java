package io.beamsave.testing;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A web server where an S3 endpoint should be (a wrong port, a proxy's welcome page): it answers
 * every request, HEAD included, with 200 and a small HTML page.
 */
public final class NotS3Server implements AutoCloseable {
  private final HttpServer http;

  public NotS3Server() throws IOException {
    http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    byte[] page = "<html><body>It works!</body></html>".getBytes(StandardCharsets.UTF_8);
    http.createContext("/", exchange -> {
      try (exchange) {
        exchange.getRequestBody().readAllBytes();
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.getResponseHeaders().set("Content-Type", "text/html");
        exchange.sendResponseHeaders(200, head ? -1 : page.length);
        if (!head) {
          exchange.getResponseBody().write(page);
        }
      }
    });
    http.start();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  @Override
  public void close() {
    http.stop(0);
  }
}
