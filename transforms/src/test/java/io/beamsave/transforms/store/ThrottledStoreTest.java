package io.beamsave.transforms.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.S3TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The link throttle as a wrapper: writes take the link's time, and no limit is no wrapper. */
class ThrottledStoreTest {
  @TempDir static Path dir;
  static S3TestServer server;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "link");
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @Test
  void aWriteThroughALinkTakesAtLeastTheTimeItsBytesNeedOnIt() {
    Store bucket = Stores.bucketOf(new ObjectUri("link", ""), server.settings());
    byte[] data = new byte[2 << 20];
    new Random(1).nextBytes(data);
    // 40 Mbit/s is 5 MB/s: 2 MiB less the throttle's burst (a tenth of a second) takes 0.32 s.
    Store slow = ThrottledStore.over(bucket, LinkThrottle.of(40));
    long start = System.nanoTime();
    slow.put("slow", data, data.length, "application/octet-stream");
    double seconds = (System.nanoTime() - start) / 1e9;
    assertThat(seconds).isGreaterThanOrEqualTo(0.3);
    assertThat(bucket.get("slow")).isEqualTo(data);
  }

  @Test
  void noLimitIsTheStoreItself() {
    Store bucket = Stores.bucketOf(new ObjectUri("link", ""), server.settings());
    assertThat(ThrottledStore.over(bucket, LinkThrottle.of(0))).isSameAs(bucket);
  }
}
