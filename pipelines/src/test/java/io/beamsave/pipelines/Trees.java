package io.beamsave.pipelines;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Instant;
import java.util.Random;

/** Generated libraries with the shapes a backup tool must get right. */
public final class Trees {
  private Trees() {}

  /** 10,000 tiny files spread over 100 directories. */
  public static void tinyFiles(Path root, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      Path dir = root.resolve("tiny/d" + (i % 100));
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("f" + i + ".txt"), "file " + i + "\n".repeat(i % 5));
    }
  }

  /** Directories 60 levels deep, a file at the bottom. */
  public static void deepNesting(Path root) throws IOException {
    Path p = root.resolve("deep");
    for (int i = 0; i < 60; i++) {
      p = p.resolve("level" + i);
    }
    Files.createDirectories(p);
    Files.writeString(p.resolve("bottom.txt"), "at the bottom");
  }

  public static void unicodeNames(Path root) throws IOException {
    Path dir = Files.createDirectories(root.resolve("ünïcödé/日本語"));
    Files.writeString(dir.resolve("файл κείμενο 🎉.txt"), "unicode", StandardCharsets.UTF_8);
    Files.writeString(root.resolve("ünïcödé/spaces and 'quotes' \"here\""), "q");
  }

  public static void linksAndEmpties(Path root) throws IOException {
    Files.createDirectories(root.resolve("empty/nested-empty"));
    Files.createDirectories(root.resolve("links"));
    Files.writeString(root.resolve("links/target.txt"), "target");
    Files.createSymbolicLink(root.resolve("links/relative"), Path.of("target.txt"));
    Files.createSymbolicLink(root.resolve("links/absolute"), Path.of("/etc/hostname"));
    Files.createSymbolicLink(root.resolve("links/dangling"), Path.of("../nowhere"));
    Files.createSymbolicLink(root.resolve("links/to-dir"), Path.of("../empty"));
    Files.createFile(root.resolve("empty-file"));
    Path ro = Files.writeString(root.resolve("read-only"), "ro");
    Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r--r-----"));
    Path exe = Files.writeString(root.resolve("script.sh"), "#!/bin/sh\necho hi\n");
    Files.setPosixFilePermissions(exe, PosixFilePermissions.fromString("rwxr-x--x"));
    Files.setLastModifiedTime(exe, FileTime.from(Instant.parse("2001-02-03T04:05:06.123456789Z")));
    // What image format 9 added that any user may make: a hard link, an extended attribute
    // (where the filesystem keeps them), a FIFO.
    Files.createLink(root.resolve("links/hard.txt"), root.resolve("links/target.txt"));
    UserDefinedFileAttributeView xattrs = Files.getFileAttributeView(
        root.resolve("links/target.txt"), UserDefinedFileAttributeView.class);
    try {
      xattrs.write("checksum", java.nio.ByteBuffer.wrap(new byte[] {1, 2, 0, (byte) 0xff}));
    } catch (IOException noXattrsHere) {
      // tmpfs before Linux 6.6 keeps no user attributes: the rest still holds.
    }
    try {
      if (new ProcessBuilder("mkfifo", root.resolve("links/fifo").toString()).start().waitFor()
          != 0) {
        throw new IOException("mkfifo failed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  /** Random and text files that span several shards of {@code shardSize}. */
  public static void mixedData(Path root, long bytes) throws IOException {
    Random r = new Random(11);
    byte[] rnd = new byte[(int) (bytes / 2)];
    r.nextBytes(rnd);
    Files.createDirectories(root.resolve("data"));
    Files.write(root.resolve("data/random.bin"), rnd);
    StringBuilder text = new StringBuilder();
    for (int i = 0; text.length() < bytes / 2; i++) {
      text.append("line ").append(i).append(" of a compressible log file\n");
    }
    Files.writeString(root.resolve("data/log.txt"), text);
  }

  /**
   * A sparse file just over 4 GiB with data around the 4 GiB mark, so offsets past 32 bits are
   * exercised without writing gigabytes.
   */
  public static void sparseOver4GiB(Path root) throws IOException {
    long size = (4L << 30) + 5_000_123;
    try (RandomAccessFile f = new RandomAccessFile(root.resolve("sparse.img").toFile(), "rw")) {
      f.setLength(size);
      byte[] data = new byte[3 << 20];
      new Random(3).nextBytes(data);
      f.seek((4L << 30) - (1 << 20) - 17);
      f.write(data);
      f.seek(size - 10);
      f.write("end-marker".getBytes(StandardCharsets.US_ASCII));
    }
  }
}
