package io.beamsave.transforms.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Removal beneath handles: nothing outside the tree, nothing on another mount, ever. */
class RemovalTest {
  @TempDir Path tmp;

  private static final byte[] INVALID = {'a', (byte) 0xff, 'z'};

  @Test
  void removesATreeWithLinksAsLinksAndNamesThatAreNotUtf8() throws Exception {
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Path kept = Files.writeString(outside.resolve("kept"), "kept");
    Path tree = Files.createDirectories(tmp.resolve("tree/a/b"));
    Files.writeString(tree.resolve("f"), "f");
    Files.createSymbolicLink(tmp.resolve("tree/a/to-outside"), outside);
    Files.createSymbolicLink(tmp.resolve("tree/a/to-file"), kept);
    try (Dir d = Dir.open(tmp.resolve("tree"))) {
      d.mkdir(INVALID, 0700);
      try (Dir sub = d.openDir(INVALID); OpenFile f = sub.create(INVALID, 0600)) {
        f.write(0, new byte[] {1}, 0, 1);
      }
    }

    Removal.tree(tmp.resolve("tree"));

    assertThat(tmp.resolve("tree")).doesNotExist();
    assertThat(kept).hasContent("kept");
    assertThat(outside).isDirectory();
  }

  @Test
  void aDryRunRemovesNothingAndTellsEveryEntryDeepestFirst() throws Exception {
    Path tree = Files.createDirectories(tmp.resolve("tree/a"));
    Files.writeString(tree.resolve("f"), "f");
    List<String> told = new ArrayList<>();
    try (Dir top = Dir.open(tmp)) {
      Removal r = Removal.within(top).dryRun()
          .listening((p, dir) -> told.add(new String(p, StandardCharsets.UTF_8) + (dir ? "/" : "")));
      assertThat(r.tree(top, "tree".getBytes(StandardCharsets.US_ASCII),
          "tree".getBytes(StandardCharsets.US_ASCII))).isTrue();
      assertThat(r.removed()).isEqualTo(3);
    }
    assertThat(told).containsExactly("tree/a/f", "tree/a/", "tree/");
    assertThat(tree.resolve("f")).hasContent("f");
  }

  @Test
  void aTreeNestedThousandsDeepIsRemovedAndOneDeeperThanTheLimitRefusedInOneLine()
      throws Exception {
    for (int depth : new int[] {3000, Removal.MAX_DEPTH + 10}) {
      Path tree = Files.createDirectories(tmp.resolve("deep" + depth));
      // Made through handles: a path this long is more than the kernel takes in one call.
      Dir d = Dir.open(tree);
      for (int i = 0; i < depth; i++) {
        d.mkdir(new byte[] {'d'}, 0700);
        Dir next = d.openDir(new byte[] {'d'});
        d.close();
        d = next;
      }
      d.close();
      if (depth <= Removal.MAX_DEPTH) {
        Removal.tree(tree);
        assertThat(tree).doesNotExist();
      } else {
        IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
            () -> Removal.tree(tree));
        assertThat(e.getMessage()).isEqualTo("cannot remove " + tree
            + ": directories in it nest more than " + Removal.MAX_DEPTH + " deep");
        unnest(tree);
      }
    }
  }

  @Test
  void aFileIsRemovedAndADirectoryIsRefusedByFile() throws Exception {
    Path f = Files.writeString(tmp.resolve("f"), "x");
    assertThat(Removal.file(f)).isTrue();
    assertThat(Removal.file(f)).isFalse();
    Path d = Files.createDirectories(tmp.resolve("d"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Removal.file(d))
        .hasMessageContaining("is a directory");
    assertThat(d).isDirectory();
  }

  @Test
  void directoriesSwappedForLinksWhileRemovedLeaveEverythingOutsideAsItWas() throws Exception {
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    List<Path> victims = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      victims.add(Files.writeString(outside.resolve("f" + i), "victim " + i));
    }
    int swaps = 0;
    for (int round = 0; round < 20; round++) {
      Path tree = tmp.resolve("tree" + round);
      for (int i = 0; i < 50; i++) {
        Files.writeString(Files.createDirectories(tree.resolve("d")).resolve("f" + i), "x");
      }
      AtomicBoolean done = new AtomicBoolean();
      AtomicInteger swapped = new AtomicInteger();
      CompletableFuture<Void> swapper = CompletableFuture.runAsync(() -> {
        Path d = tree.resolve("d");
        Path aside = tree.resolve("aside");
        while (!done.get()) {
          try {
            if (Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
              Files.move(d, aside, StandardCopyOption.ATOMIC_MOVE);
              Files.createSymbolicLink(d, outside);
              swapped.incrementAndGet();
              Thread.onSpinWait();
              Files.delete(d);
              Files.move(aside, d, StandardCopyOption.ATOMIC_MOVE);
            }
          } catch (IOException raced) {
            // The removal moved on meanwhile; try again.
          }
        }
      });
      try {
        Removal.tree(tree);
      } catch (IOException keepsChanging) {
        assertThat(keepsChanging).hasMessageContaining("keeps changing");
      } finally {
        done.set(true);
        swapper.join();
      }
      swaps += swapped.get();
      for (int i = 0; i < victims.size(); i++) {
        assertThat(victims.get(i)).hasContent("victim " + i);
      }
    }
    assertThat(swaps).as("the race was run").isPositive();
  }

  @Test
  void aMountPointBeneathIsNeitherEnteredNorRemovedNorIsWhatHoldsIt() throws Exception {
    assumeTrue(isRoot(), "mounting needs root");
    Path tree = Files.createDirectories(tmp.resolve("tree"));
    Files.writeString(tree.resolve("plain"), "gone");
    Path mount = Files.createDirectories(tree.resolve("holder/mnt"));
    assertThat(run("mount", "-t", "tmpfs", "tmpfs", mount.toString())).isZero();
    try {
      Files.writeString(mount.resolve("on-the-mount"), "stays");
      IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
          () -> Removal.tree(tree));
      assertThat(e).hasMessageContaining("holder/mnt").hasMessageContaining("mount point");
      assertThat(mount.resolve("on-the-mount")).hasContent("stays");
      assertThat(tree.resolve("plain")).doesNotExist();
    } finally {
      run("umount", mount.toString());
    }
  }

  @Test
  void aBindMountOfTheSameFileSystemIsAMountToo() throws Exception {
    assumeTrue(isRoot(), "mounting needs root");
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
    Files.writeString(elsewhere.resolve("precious"), "stays");
    Path mount = Files.createDirectories(tmp.resolve("tree/bound"));
    assertThat(run("mount", "--bind", elsewhere.toString(), mount.toString())).isZero();
    try {
      try (Dir top = Dir.open(tmp.resolve("tree"))) {
        Removal r = Removal.within(top);
        r.contents(top);
        assertThat(r.mountsLeft()).singleElement().asString().endsWith("tree/bound");
      }
      assertThat(elsewhere.resolve("precious")).hasContent("stays");
    } finally {
      run("umount", mount.toString());
    }
  }

  /** Removes a chain of directories named d beneath {@code top}, deeper than a removal goes. */
  static void unnest(Path top) throws IOException {
    java.util.ArrayDeque<Dir> chain = new java.util.ArrayDeque<>();
    chain.push(Dir.open(top));
    while (!chain.peek().list().isEmpty()) {
      chain.push(chain.peek().openDir(new byte[] {'d'}));
    }
    chain.pop().close();
    while (!chain.isEmpty()) {
      try (Dir d = chain.pop()) {
        d.deleteDirectory(new byte[] {'d'});
      }
    }
    Files.delete(top);
  }

  static boolean isRoot() {
    return Dir.effectiveUid() == 0;
  }

  static int run(String... cmd) throws Exception {
    return new ProcessBuilder(cmd).inheritIO().start().waitFor();
  }
}
