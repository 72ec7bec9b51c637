package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.image.ImageReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sparse file is saved by its data (its holes are known, not read, and stored as zero blocks)
 * and restored sparse: the holes are left unwritten, so it takes about the space it took.
 */
class SparseFilesTest {
  @TempDir Path tmp;

  /** 512-byte blocks the file at {@code p} has allocated, as {@code stat -c %b} says. */
  static long blocks(Path p) throws Exception {
    Process s = new ProcessBuilder("stat", "-c", "%b", p.toString()).start();
    String out = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    assertThat(s.waitFor()).isZero();
    return Long.parseLong(out.strip());
  }

  @Test
  void aFileOfTwoSmallExtentsInAGigabyteComesBackAsSparseAsItWas() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    Path disk = lib.resolve("disk.img");
    byte[] first = "first extent".getBytes(StandardCharsets.US_ASCII);
    byte[] second = new byte[70_000];
    Arrays.fill(second, (byte) 7);
    try (RandomAccessFile f = new RandomAccessFile(disk.toFile(), "rw")) {
      f.setLength(1L << 30);
      f.seek(1_000_000);
      f.write(first);
      f.seek((1L << 30) - 100_000);
      f.write(second);
    }
    long before = blocks(disk);
    assertThat(before).as("the filesystem keeps holes").isLessThan(1024);
    Path image = tmp.resolve("s.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--quiet");
    assertThat(Files.size(image)).as("holes are zero blocks").isLessThan(200_000);
    assertThat(ImageReader.readCatalog(image).rawBytes()).isEqualTo(1L << 30);
    for (String pipeline : new String[] {"never", "always"}) {
      Path out = tmp.resolve("out-" + pipeline);
      Cli.ok("restore", image, "--target", out, "--pipeline", pipeline, "--quiet");
      Path back = out.resolve("disk.img");
      assertThat(Files.size(back)).isEqualTo(1L << 30);
      assertThat(blocks(back)).as("restored sparse (" + pipeline + ")")
          .isLessThanOrEqualTo(before + 16);
      try (RandomAccessFile f = new RandomAccessFile(back.toFile(), "r")) {
        byte[] got = new byte[first.length];
        f.seek(1_000_000);
        f.readFully(got);
        assertThat(got).isEqualTo(first);
        byte[] got2 = new byte[second.length];
        f.seek((1L << 30) - 100_000);
        f.readFully(got2);
        assertThat(got2).isEqualTo(second);
      }
    }
    Cli.ok("verify", "--image", image, "--quiet");
  }
}
