package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code verify --read-data-subset}: slices that cover every shard, shares, sizes. */
class SampledVerifyTest {
  @TempDir static Path dir;
  static Path lib;
  static Path full;
  static Path incremental;

  @BeforeAll
  static void save() throws Exception {
    lib = Files.createDirectories(dir.resolve("lib"));
    Random random = new Random(8);
    for (int i = 0; i < 12; i++) {
      byte[] b = new byte[400_000];
      random.nextBytes(b);
      Files.write(lib.resolve("f" + i), b);
    }
    full = dir.resolve("full.bsave");
    Cli.ok("save", "--library", lib, "--image", full, "--shard-size", "1MiB", "--codec", "none",
        "-q");
    Files.write(lib.resolve("f3"), new byte[500_000]);
    incremental = dir.resolve("incremental.bsave");
    Cli.ok("save", "--library", lib, "--image", incremental, "--base", full, "--shard-size",
        "1MiB", "--codec", "none", "-q");
  }

  static JsonNode summary(Object... args) throws Exception {
    String out = Cli.ok(args).out();
    String last = out.lines().filter(l -> l.contains("\"summary\"")).reduce((a, b) -> b)
        .orElseThrow();
    return new ObjectMapper().readTree(last);
  }

  @Test
  void tRunsOfNOverTReadEveryShardOnce() throws Exception {
    for (Path image : new Path[] {full, incremental}) {
      long whole = summary("verify", image, "--json").get("bytesChecked").asLong();
      long read = 0;
      int shards = 0;
      int inAll = -1;
      for (int n = 1; n <= 4; n++) {
        JsonNode s = summary("verify", image, "--read-data-subset", n + "/4", "--json");
        read += s.get("bytesChecked").asLong();
        shards += s.get("shardsRead").asInt();
        inAll = s.get("shardsInAll").asInt();
        assertThat(s.get("shardsRead").asInt()).isLessThan(inAll);
      }
      assertThat(shards).as("shards read over four slices of " + image).isEqualTo(inAll);
      assertThat(read).as("bytes read over four slices of " + image).isEqualTo(whole);
    }
  }

  @Test
  void aShareOrASizeReadsSomeAndSaysHowMany() throws Exception {
    JsonNode share = summary("verify", full, "--read-data-subset", "50%", "--json");
    assertThat(share.get("shardsRead").asInt())
        .isEqualTo((int) Math.ceil(share.get("shardsInAll").asInt() / 2.0));
    JsonNode size = summary("verify", full, "--read-data-subset", "1B", "--json");
    assertThat(size.get("shardsRead").asInt()).isEqualTo(1);
    assertThat(Cli.ok("verify", full, "--read-data-subset", "2/3").out())
        .startsWith("OK " + full + ": a subset, slice 2 of 3: ");
    Cli bad = Cli.run("verify", full, "--read-data-subset", "5/3");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).startsWith("beamsave: error: --read-data-subset 5/3: ");
  }

  @Test
  void aDamagedShardIsFoundByTheSliceThatReadsIt() throws Exception {
    Path damaged = dir.resolve("damaged.bsave");
    Files.copy(full, damaged);
    try (FileChannel ch = FileChannel.open(damaged, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, 100_000);
      b.put(0, (byte) (b.get(0) ^ 1)).rewind();
      ch.write(b, 100_000);
    }
    int failed = 0;
    for (int n = 1; n <= 3; n++) {
      Cli v = Cli.run("verify", damaged, "--read-data-subset", n + "/3");
      if (v.exit() != 0) {
        failed++;
        assertThat(v.err()).contains(": shard ").contains("checksum mismatch");
      }
    }
    assertThat(failed).as("slices that met the damage").isEqualTo(1);
  }
}
