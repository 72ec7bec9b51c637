package io.beamsave.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Adobe S3Mock on 127.0.0.1, as a process of its own from its runnable jar ({@code
 * -Dbeamsave.s3mock.jar}, which the build copies to target/s3mock.jar). Stricter than S3Proxy:
 * it answers a failed If-None-Match or If-Match with 412, and copies part ranges itself. It keeps
 * each object as {@code ROOT/BUCKET/UUID/binaryData}, the UUID listed in the bucket's
 * bucketMetadata.json; it takes any credentials.
 */
public final class S3MockServer implements TestS3 {
  public static final String NAME = "S3Mock";

  private final Process process;
  private final int port;
  private final Path root;

  private S3MockServer(Process process, int port, Path root) {
    this.process = process;
    this.port = port;
    this.root = root;
  }

  /** Starts a server storing under {@code root}, with {@code buckets} created. */
  public static S3MockServer start(Path root, String... buckets) throws IOException {
    System.setProperty("aws.accessKeyId", S3TestServer.ACCESS_KEY);
    System.setProperty("aws.secretAccessKey", S3TestServer.SECRET_KEY);
    Path jar = Path.of(System.getProperty("beamsave.s3mock.jar", "target/s3mock.jar"));
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no S3Mock at " + jar + " (the build copies it there)");
    }
    Files.createDirectories(root);
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // C1 alone and lazy beans: up in about 5 s instead of 13.
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx768m",
        "-jar", jar.toString(),
        "--server.port=0",
        "--server.address=127.0.0.1",
        "--com.adobe.testing.s3mock.http-port=" + port,
        "--com.adobe.testing.s3mock.store.root=" + root,
        "--com.adobe.testing.s3mock.store.retain-files-on-exit=true",
        // beamsave sends whole shards as parts (64 MiB by default); S3Mock's default is 10 MB.
        "--com.adobe.testing.s3mock.max-payload-size=1GB",
        "--spring.main.lazy-initialization=true",
        "--spring.main.banner-mode=off",
        "--logging.level.root=WARN"));
    if (buckets.length > 0) {
      cmd.add("--com.adobe.testing.s3mock.store.initial-buckets=" + String.join(",", buckets));
    }
    Path log = root.resolveSibling(root.getFileName() + "-s3mock.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
    S3MockServer server = new S3MockServer(p, port, root);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      if (!p.isAlive()) {
        throw new IllegalStateException("S3Mock exited at start: " + Files.readString(log));
      }
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        return server;
      } catch (IOException notYet) {
        if (System.nanoTime() > deadline) {
          server.close();
          throw new IllegalStateException("S3Mock did not listen in 90 s; see " + log);
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public boolean enforcesConditionalWrites() {
    return true;
  }

  @Override
  public Path file(String bucket, String key) {
    try {
      JsonNode meta = new ObjectMapper().readTree(
          root.resolve(bucket).resolve("bucketMetadata.json").toFile());
      JsonNode id = meta.path("objects").path(key);
      if (!id.isTextual()) {
        throw new IllegalArgumentException("no object " + bucket + "/" + key + " in S3Mock");
      }
      return root.resolve(bucket).resolve(id.asText()).resolve("binaryData");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
