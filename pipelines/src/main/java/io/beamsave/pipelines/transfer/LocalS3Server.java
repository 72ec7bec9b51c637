package io.beamsave.pipelines.transfer;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An S3 server on loopback for the demo and the benchmarks: S3Proxy, run as its own Java process
 * from the {@code s3proxy.jar} the build puts beside {@code beamsave.jar}, storing objects as
 * files under a directory (jclouds' {@code filesystem} backend, which keeps an interrupted part
 * upload from breaking later listings, unlike {@code filesystem-nio2}). Nothing to install or
 * start by hand.
 */
public final class LocalS3Server implements AutoCloseable {
  public static final String ACCESS_KEY = "beamsave-local";
  public static final String SECRET_KEY = "beamsave-local-secret";

  private final Process process;
  private final int port;

  private LocalS3Server(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts a server storing under {@code root}, with {@code buckets} (as directories). */
  public static LocalS3Server start(Path root, String... buckets) throws IOException {
    return start(root, 0, buckets);
  }

  /** As {@link #start(Path, String...)}, on loopback port {@code port} (0: any free one). */
  public static LocalS3Server start(Path root, int port, String... buckets) throws IOException {
    Path jar = jar();
    for (String b : buckets) {
      Files.createDirectories(root.resolve(b));
    }
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    } catch (java.net.BindException e) {
      throw new BeamsaveException("port " + port + " on 127.0.0.1 is taken (" + e.getMessage()
          + "); give another with --port");
    }
    Path props = root.resolve("s3proxy.properties");
    Files.writeString(
        props,
        String.join(
            "\n",
            "s3proxy.endpoint=http://127.0.0.1:" + port,
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + ACCESS_KEY,
            "s3proxy.credential=" + SECRET_KEY,
            "s3proxy.ignore-unknown-headers=true",
            "jclouds.provider=filesystem",
            "jclouds.filesystem.basedir=" + root.toAbsolutePath(),
            "jclouds.identity=unused",
            "jclouds.credential=unused",
            ""));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(List.of(java.toString(), "-Xmx512m", "-jar", jar.toString(),
                "--properties", props.toString()))
            .redirectErrorStream(true)
            .redirectOutput(root.resolve("s3proxy.log").toFile())
            .start();
    LocalS3Server server = new LocalS3Server(p, port);
    server.awaitListening(root.resolve("s3proxy.log"));
    return server;
  }

  /** Where the S3Proxy jar is: {@code -Dbeamsave.s3proxy.jar}, else beside beamsave's jar. */
  public static Path jar() {
    String explicit = System.getProperty("beamsave.s3proxy.jar");
    Path jar;
    if (explicit != null) {
      jar = Path.of(explicit);
    } else {
      try {
        Path self = Path.of(LocalS3Server.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        jar = (Files.isDirectory(self) ? self.getParent() : self.getParent()).resolve("s3proxy.jar");
      } catch (URISyntaxException e) {
        throw new IllegalStateException(e);
      }
    }
    if (!Files.isRegularFile(jar)) {
      throw new BeamsaveException(
          "no S3 server to start: " + jar + " is missing (the release carries it in lib/, and"
              + " 'mvn -B package' puts it beside the jar in a checkout)");
    }
    return jar;
  }

  private void awaitListening(Path log) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new BeamsaveException("S3Proxy exited at start; see " + log);
      }
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    close();
    throw new BeamsaveException("S3Proxy did not start listening in 60 s; see " + log);
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /** Waits for the server's process to end, and returns its exit status. */
  public int waitFor() throws InterruptedException {
    return process.waitFor();
  }

  public int port() {
    return port;
  }

  /** Stops the server at once, as a crash or a lost host would (SIGKILL). */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
