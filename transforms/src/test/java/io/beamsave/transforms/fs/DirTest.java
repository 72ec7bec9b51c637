package io.beamsave.transforms.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirTest {
  @TempDir Path tmp;

  static byte[] b(String ascii) {
    return ascii.getBytes(StandardCharsets.US_ASCII);
  }

  static final byte[] LATIN1 = {'c', 'a', 'f', (byte) 0xe9};
  static final byte[] INVALID = {'a', (byte) 0xff, (byte) 0xfe, 'z'};

  @Test
  void namesThatAreNotUtf8AreListedOpenedAndLinkedByTheirBytes() throws Exception {
    try (Dir dir = Dir.open(tmp)) {
      try (OpenFile f = dir.create(LATIN1, 0640)) {
        f.write(0, b("latin-1"), 0, 7);
      }
      dir.mkdir(INVALID, 0700);
      dir.symlink(LATIN1, b("link"));
      List<byte[]> names = dir.list();
      assertThat(names).hasSize(3);
      assertThat(names).anySatisfy(n -> assertThat(n).isEqualTo(LATIN1));
      assertThat(names).anySatisfy(n -> assertThat(n).isEqualTo(INVALID));
      assertThat(dir.readLink(b("link"))).isEqualTo(LATIN1);
      assertThat(dir.stat(LATIN1).permissions()).isEqualTo(0640);
      assertThat(dir.stat(INVALID).isDirectory()).isTrue();
      byte[] back = new byte[16];
      try (OpenFile f = dir.openRead(LATIN1)) {
        assertThat(f.read(0, back, 0, back.length)).isEqualTo(7);
      }
      // Java's own listing keeps the bytes, and bytesOf gets them back out of its Path.
      try (Stream<Path> s = Files.list(tmp)) {
        assertThat(s.map(Dir::bytesOf).map(p -> new String(p, StandardCharsets.ISO_8859_1)))
            .contains(new String(Dir.bytesOf(tmp), StandardCharsets.ISO_8859_1) + "/"
                + new String(LATIN1, StandardCharsets.ISO_8859_1));
      }
    }
  }

  @Test
  void timesKeepTheirNanosecondsBefore1970AndAfter2262() throws Exception {
    long[][] times = {
      {-2, 500_000_000}, // 1969-12-31T23:59:58.5
      {-2_147_483_000L, 123}, // 1901-12-13
      {10_413_792_000L, 123_456_789}, // 2300-01-01, past the 2262 of Java's FileTime nanos
      {0, 1},
    };
    try (Dir dir = Dir.open(tmp)) {
      dir.create(b("f"), 0600).close();
      dir.symlink(b("f"), b("l"));
      for (long[] t : times) {
        try (OpenFile f = dir.openRead(b("f"))) {
          f.setModified(t[0], (int) t[1]);
          FileStat s = f.stat();
          assertThat(new long[] {s.mtimeSeconds(), s.mtimeNanos()}).isEqualTo(t);
        }
        dir.setLinkModified(b("l"), t[0] + 7, (int) t[1]);
        FileStat link = dir.stat(b("l"));
        assertThat(link.isSymlink()).isTrue();
        assertThat(new long[] {link.mtimeSeconds(), link.mtimeNanos()})
            .isEqualTo(new long[] {t[0] + 7, t[1]});
        assertThat(dir.stat(b("f")).mtimeSeconds()).as("the link's target is untouched")
            .isEqualTo(t[0]);
      }
    }
  }

  @Test
  void nothingIsFollowedThroughASymlink() throws Exception {
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Path inside = Files.createDirectories(tmp.resolve("inside"));
    Files.createSymbolicLink(inside.resolve("to-dir"), outside);
    Files.createSymbolicLink(inside.resolve("to-file"), outside.resolve("victim"));
    Files.writeString(outside.resolve("victim"), "untouched");
    try (Dir dir = Dir.open(inside)) {
      assertThatThrownBy(() -> dir.openDir(b("to-dir"))).isInstanceOf(SymlinkException.class);
      assertThatThrownBy(() -> dir.openWrite(b("to-file"))).isInstanceOf(SymlinkException.class);
      assertThatThrownBy(() -> dir.openRead(b("to-file"))).isInstanceOf(SymlinkException.class);
      assertThatThrownBy(() -> dir.create(b("to-file"), 0644))
          .isInstanceOf(FileAlreadyExistsException.class);
      assertThatThrownBy(() -> dir.create(b("to-dir"), 0644))
          .isInstanceOf(FileAlreadyExistsException.class);
    }
    assertThat(outside.resolve("victim")).hasContent("untouched");
    assertThatThrownBy(() -> Dir.openNoFollow(inside.resolve("to-dir")))
        .isInstanceOf(SymlinkException.class);
  }

  @Test
  void aChainOfHandlesStaysInTheTreeWhenADirectoryIsSwappedForALink() throws Exception {
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.createDirectories(root.resolve("a/b"));
    try (Dir top = Dir.open(root); Beneath tree = new Beneath(top)) {
      Dir b = tree.dir(b("a/b"), 3);
      // Someone moves a away and puts a link to outside in its place.
      Files.move(root.resolve("a"), root.resolve("moved"));
      Files.createSymbolicLink(root.resolve("a"), outside);
      Files.createDirectories(outside.resolve("b"));
      b.create(b("written"), 0644).close();
      assertThat(root.resolve("moved/b/written")).exists();
      assertThat(outside.resolve("b")).isEmptyDirectory();
      // A chain opened afresh refuses the link.
      try (Beneath fresh = new Beneath(top)) {
        assertThatThrownBy(() -> fresh.dir(b("a/b"), 3)).isInstanceOf(SymlinkException.class);
      }
    }
  }

  @Test
  void aFifoInPlaceOfAFileDoesNotBlockTheOpen() throws Exception {
    Path fifo = tmp.resolve("fifo");
    assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
    try (Dir dir = Dir.open(tmp); OpenFile f = dir.openRead(b("fifo"))) {
      assertThat(f.stat().isRegularFile()).isFalse();
    }
  }
}
