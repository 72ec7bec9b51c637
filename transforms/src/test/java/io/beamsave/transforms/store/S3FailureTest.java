package io.beamsave.transforms.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.beamsave.testing.FaultProxy;
import io.beamsave.testing.S3TestServer;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Which S3 failures are tried again, against real sockets: nothing listening, TLS spoken to a
 * plain HTTP server, and a small HTTP server that answers with the errors S3 servers send.
 * Attempts are counted by a wrapper between {@link RetryingStore} and {@link S3Store}, so the
 * tests say how often a request went out, never how long it took.
 */
class S3FailureTest {
  @TempDir static Path dir;
  static S3TestServer server;

  @BeforeAll
  static void start() throws Exception {
    // Also gives the SDK its credentials, as every test here needs.
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "bucket");
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  /** A store on {@code endpoint} retried 8 times, counting the calls that reach S3Store. */
  static Store counted(String endpoint, AtomicInteger calls) {
    Store s3 = new S3Store(new S3Settings(endpoint, true, "us-east-1", 8), "bucket", "");
    Store counting = (Store) Proxy.newProxyInstance(
        Store.class.getClassLoader(), new Class<?>[] {Store.class},
        (proxy, method, args) -> {
          if (!method.getName().equals("where")) {
            calls.incrementAndGet();
          }
          try {
            return method.invoke(s3, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    return new RetryingStore(counting, 8);
  }

  static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void aServerThatIsNotRunningFailsAtTheFirstAttemptInOneLine() throws IOException {
    int port = closedPort();
    AtomicInteger calls = new AtomicInteger();
    Store store = counted("http://127.0.0.1:" + port, calls);
    assertThatThrownBy(() -> store.get("k"))
        .isInstanceOfSatisfying(StoreException.class, e -> {
          assertThat(e.kind()).isEqualTo(StoreException.Kind.UNREACHABLE);
          assertThat(e.isTransient()).isFalse();
          assertThat(e.attempts()).isEqualTo(1);
        })
        .hasMessage("s3://bucket/k: cannot connect to http://127.0.0.1:" + port
            + ": connection refused (is the S3 server running? check --s3-endpoint)");
    assertThat(calls).hasValue(1);
  }

  @Test
  void httpsToAPlainHttpServerIsATlsFailureThatSaysUseHttp() {
    AtomicInteger calls = new AtomicInteger();
    Store store = counted("https://127.0.0.1:" + server.port(), calls);
    assertThatThrownBy(() -> store.get("k"))
        .isInstanceOfSatisfying(StoreException.class, e -> {
          assertThat(e.kind()).isEqualTo(StoreException.Kind.UNREACHABLE);
          assertThat(e.isTransient()).isFalse();
          assertThat(e.attempts()).isEqualTo(1);
        })
        .hasMessage("s3://bucket/k: cannot connect to https://127.0.0.1:" + server.port()
            + ": the TLS handshake failed; the server speaks plain HTTP? use http://127.0.0.1:"
            + server.port());
    assertThat(calls).hasValue(1);
  }

  @Test
  void anUnknownHostFailsAtTheFirstAttempt() {
    AtomicInteger calls = new AtomicInteger();
    // .invalid never resolves (RFC 2606).
    Store store = counted("http://s3.beamsave.invalid:9000", calls);
    assertThatThrownBy(() -> store.get("k"))
        .isInstanceOfSatisfying(StoreException.class,
            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.UNREACHABLE))
        .hasMessageContaining("cannot resolve the host of http://s3.beamsave.invalid:9000");
    assertThat(calls).hasValue(1);
  }

  @ParameterizedTest
  @EnumSource(value = FaultProxy.Fault.class,
      names = {"RESET_BEFORE_ANSWER", "RESET_DURING_ANSWER"})
  void aConnectionResetBeforeOrDuringTheAnswerIsTriedAgain(FaultProxy.Fault fault)
      throws IOException {
    byte[] object = new byte[100_000];
    new java.util.Random(5).nextBytes(object);
    AtomicInteger ignored = new AtomicInteger();
    counted(server.endpoint(), ignored).put("reset-" + fault, object, object.length,
        "application/octet-stream");
    try (FaultProxy proxy = new FaultProxy(server.port(), 0, 1)) {
      proxy.failNext(fault, 2);
      AtomicInteger calls = new AtomicInteger();
      Store store = counted("http://127.0.0.1:" + proxy.port(), calls);
      assertThat(store.get("reset-" + fault)).isEqualTo(object);
      assertThat(calls).hasValue(3);
      assertThat(proxy.faults()).isEqualTo(2);
    }
  }

  /**
   * A server that answers GETs with the given error twice, then with the object;
   * the store's verdict is in the attempts it made.
   */
  @ParameterizedTest(name = "{0} {1}: retried={2}")
  @CsvSource({
    "503, '', true, FAILED",
    "500, InternalError, true, FAILED",
    "502, '', true, FAILED",
    "429, TooManyRequests, true, FAILED",
    "503, SlowDown, true, FAILED",
    "400, RequestTimeout, true, FAILED",
    "403, RequestTimeTooSkewed, false, ACCESS_DENIED",
    "403, InvalidAccessKeyId, false, ACCESS_DENIED",
    "403, SignatureDoesNotMatch, false, ACCESS_DENIED",
    "404, NoSuchBucket, false, NOT_FOUND",
    "400, InvalidArgument, false, FAILED",
    "501, NotImplemented, false, NOT_SUPPORTED",
  })
  void onlyFailuresThatMayPassAreTriedAgain(
      int status, String code, boolean retried, StoreException.Kind kind) throws IOException {
    byte[] object = "the object".getBytes(StandardCharsets.UTF_8);
    try (Scripted s3 = new Scripted(status, code, 2, object)) {
      AtomicInteger calls = new AtomicInteger();
      Store store = counted("http://127.0.0.1:" + s3.port(), calls);
      if (retried) {
        assertThat(store.get("k")).isEqualTo(object);
        assertThat(calls).hasValue(3);
        assertThat(s3.requests).hasValue(3);
      } else {
        assertThatThrownBy(() -> store.get("k"))
            .isInstanceOfSatisfying(StoreException.class, e -> {
              assertThat(e.kind()).isEqualTo(kind);
              assertThat(e.attempts()).isEqualTo(1);
            })
            .hasMessageStartingWith("s3://bucket/k: ")
            .hasMessageNotContaining("gave up");
        assertThat(calls).hasValue(1);
        assertThat(s3.requests).hasValue(1);
      }
    }
  }

  @Test
  void aFailureThatOutlastsTheAttemptsSaysHowManyWereMade() throws IOException {
    try (Scripted s3 = new Scripted(503, "SlowDown", Integer.MAX_VALUE, new byte[0])) {
      Store s3Store = new S3Store(
          new S3Settings("http://127.0.0.1:" + s3.port(), true, "us-east-1", 3), "bucket", "");
      Store store = new RetryingStore(s3Store, 3);
      assertThatThrownBy(() -> store.get("k"))
          .isInstanceOfSatisfying(StoreException.class, e -> {
            assertThat(e.attempts()).isEqualTo(3);
            assertThat(e.isTransient()).as("spent: nobody retries it again").isFalse();
          })
          .hasMessageEndingWith("HTTP 503 SlowDown: please slow down (gave up after 3 attempts)");
      assertThat(s3.requests).hasValue(3);
    }
  }

  /**
   * A web server (or any HTTP service on the wrong port) answers 200 to everything: read as S3
   * it would be an empty bucket, an object of its page, an upload without an id. Every request
   * fails in one line instead, at the first attempt.
   */
  @Test
  void anEndpointThatIsNoS3ServerIsNamedAsSuchWhateverIsAsked() throws IOException {
    try (io.beamsave.testing.NotS3Server web = new io.beamsave.testing.NotS3Server()) {
      String endpoint = web.endpoint();
      for (java.util.function.Consumer<Store> ask : List.<java.util.function.Consumer<Store>>of(
          s -> s.list("p/"), s -> s.stat("k"), s -> s.get("k"),
          s -> s.createMultipart("k.bsave", "application/octet-stream", java.util.Map.of()))) {
        AtomicInteger calls = new AtomicInteger();
        Store store = counted(endpoint, calls);
        assertThatThrownBy(() -> ask.accept(store))
            .isInstanceOfSatisfying(StoreException.class, e -> {
              assertThat(e.kind()).isEqualTo(StoreException.Kind.UNREACHABLE);
              assertThat(e.attempts()).isEqualTo(1);
            })
            .hasMessageContaining(endpoint + " does not answer as an S3 server")
            .hasMessageNotContaining("\n");
      }
    }
  }

  /**
   * An endpoint that takes connections and never answers fails a request within its timeout:
   * three attempts of a third of it each, not eight of the SDK's minute.
   */
  @Test
  void anEndpointThatNeverAnswersFailsWithinTheTimeout() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<java.net.Socket> held = java.util.Collections.synchronizedList(new ArrayList<>());
      Thread taker = new Thread(() -> {
        try {
          while (true) {
            held.add(silent.accept());
          }
        } catch (IOException closed) {
          // The test is over.
        }
      });
      taker.setDaemon(true);
      taker.start();
      S3Settings settings = new S3Settings("http://127.0.0.1:" + silent.getLocalPort(), true,
          "us-east-1", 8).withTimeoutSeconds(6);
      Store store = Stores.bucketOf(new ObjectUri("bucket", ""), settings);
      assertThatThrownBy(() -> store.stat("k"))
          .isInstanceOfSatisfying(StoreException.class, e -> {
            assertThat(e.attempts()).isBetween(2, 3);
            assertThat(e.isTransient()).isFalse();
          })
          .hasMessageContaining("no answer from http://127.0.0.1:" + silent.getLocalPort()
              + " within 2 s")
          .hasMessageContaining("gave up after");
      for (java.net.Socket s : held) {
        s.close();
      }
    }
  }

  /**
   * Just enough of S3 for a GET of one object: the first {@code failures} requests get {@code
   * status} with an S3 error body carrying {@code code} (none when empty), the rest the object.
   * A listing of the bucket (which a store asks for once, to know it talks to S3) is answered
   * as S3 answers it, and not counted.
   */
  static final class Scripted implements AutoCloseable {
    final HttpServer http;
    final AtomicInteger requests = new AtomicInteger();

    Scripted(int status, String code, int failures, byte[] object) throws IOException {
      http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      http.createContext("/", exchange -> {
        try (exchange) {
          exchange.getRequestBody().readAllBytes();
          String query = exchange.getRequestURI().getRawQuery();
          if (query != null && query.contains("list-type=2")) {
            byte[] listing = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult"
                + " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name>"
                + "<KeyCount>0</KeyCount><MaxKeys>1</MaxKeys><IsTruncated>false</IsTruncated>"
                + "</ListBucketResult>").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/xml");
            exchange.sendResponseHeaders(200, listing.length);
            exchange.getResponseBody().write(listing);
            return;
          }
          boolean fail = requests.incrementAndGet() <= failures;
          byte[] body = !fail ? object
              : code.isEmpty() ? new byte[0]
              : ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code
                  + "</Code><Message>please slow down</Message></Error>")
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type",
              fail ? "application/xml" : "application/octet-stream");
          exchange.sendResponseHeaders(fail ? status : 200, body.length == 0 ? -1 : body.length);
          exchange.getResponseBody().write(body);
        }
      });
      http.start();
    }

    int port() {
      return http.getAddress().getPort();
    }

    @Override
    public void close() {
      http.stop(0);
    }
  }
}
