package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same commands on Flink's embedded MiniCluster ({@code --flinkMaster=[local]}). */
class FlinkLocalIT {
  static final String[] FLINK = {"--", "--runner=FlinkRunner", "--flinkMaster=[local]", "--parallelism=2"};

  @TempDir Path dir;

  static Object[] withFlink(Object... args) {
    Object[] all = java.util.Arrays.copyOf(args, args.length + FLINK.length);
    System.arraycopy(FLINK, 0, all, args.length, FLINK.length);
    return all;
  }

  @Test
  void savesVerifiesAndRestoresOnFlink() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 24L << 20);
    Trees.linksAndEmpties(lib);
    Trees.unicodeNames(lib);
    Path image = dir.resolve("lib.bsave");
    Cli save = Cli.ok(withFlink("save", "--library", lib, "--image", image, "--shard-size", "4MiB",
        "--quiet"));
    assertThat(save.out()).contains("image: " + image);
    try (var beside = Files.list(dir)) {
      assertThat(beside.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(
          "lib", "lib.bsave", "beamsave-ledger");
    }
    Cli verify = Cli.ok(withFlink("verify", "--image", image, "--quiet"));
    assertThat(verify.out()).contains("OK");
    Path target = dir.resolve("restored");
    Cli.ok(withFlink("restore", "--image", image, "--target", target, "--quiet"));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).isNull();
  }
}
