package io.beamsave.pipelines;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

/**
 * What {@link Nobody}'s acts do, run as that user in a JVM of their own (with nothing on the
 * class path but the tests' classes, so only the JDK's are used here).
 */
final class NobodyActs {
  private NobodyActs() {}

  /**
   * The acts: {@code STOP swap DIR TO} swaps directory DIR for a link to TO and back until STOP
   * exists; {@code STOP repoint WATCH LINK TO} re-points LINK to TO once a restore's marker
   * appears in WATCH; {@code STOP moveaway WATCH ASIDE TO WHEN} renames WATCH to ASIDE and puts
   * a link to TO in its place once the marker appears ({@code begun}) or once it has come and
   * gone ({@code finished}: the tree is whole, --delete is next); {@code STOP relink DIR TO GONE}
   * moves DIR aside once GONE is removed and leaves a link to TO in its place;
   * {@code STOP swapnew DIR PREFIX TO} moves the first directory named PREFIX... made in DIR
   * aside and leaves a link to TO in its place; {@code STOP swaptemps DIR TO} does that to
   * every file a restore writes in DIR under a temporary name; {@code STOP plant NAME TO}
   * keeps a link to TO at NAME. Each says {@code ready} first, then what it did.
   */
  public static void main(String[] a) throws Exception {
    Path stop = Path.of(a[0]);
    if (a[1].equals("swap")) {
      warmUp(Path.of(a[2]), Path.of(a[3]));
    }
    // What is there before the act is ready: what appears after is new. Listed (and the
    // listing's code loaded) first, or a save begun on "ready" could be quicker.
    java.util.Set<Path> before = a[1].equals("swapnew") ? listing(Path.of(a[2])) : null;
    System.out.println("ready");
    System.out.flush();
    switch (a[1]) {
      case "swap" -> System.out.println("swaps " + swap(stop, Path.of(a[2]), Path.of(a[3])));
      case "repoint" -> {
        Path marker = awaitMarker(stop, Path.of(a[2]));
        if (marker != null) {
          Path link = Path.of(a[3]);
          Path fresh = link.resolveSibling(link.getFileName() + ".new");
          Files.deleteIfExists(fresh);
          Files.createSymbolicLink(fresh, Path.of(a[4]));
          Files.move(fresh, link, StandardCopyOption.ATOMIC_MOVE);
          System.out.println("repointed " + (Files.exists(marker) ? "while" : "after")
              + " restoring");
        }
      }
      case "moveaway" -> {
        Path watch = Path.of(a[2]);
        Path marker = awaitMarker(stop, watch);
        boolean finished = a[5].equals("finished");
        if (marker != null && (!finished || awaitGone(stop, marker))) {
          Path aside = Path.of(a[3]);
          Files.move(watch, aside, StandardCopyOption.ATOMIC_MOVE);
          Files.createSymbolicLink(watch, Path.of(a[4]));
          System.out.println("moved " + (finished ? "once finished"
              : Files.exists(aside.resolve(marker.getFileName())) ? "while restoring"
              : "after restoring"));
        }
      }
      case "relink" -> {
        Path dir = Path.of(a[2]);
        if (!awaitGone(stop, Path.of(a[4]))) {
          break;
        }
        Files.move(dir, dir.resolveSibling(dir.getFileName() + ".aside"),
            StandardCopyOption.ATOMIC_MOVE);
        Files.createSymbolicLink(dir, Path.of(a[3]));
        System.out.println("relinked");
      }
      case "swapnew" -> {
        Path made = awaitNew(stop, Path.of(a[2]), a[3], before);
        if (made != null) {
          Files.move(made, made.resolveSibling(made.getFileName() + ".aside"),
              StandardCopyOption.ATOMIC_MOVE);
          Files.createSymbolicLink(made, Path.of(a[4]));
          System.out.println("swapped " + made.getFileName());
        }
      }
      case "swaptemps" -> System.out.println("swaps " + swapTemps(stop, Path.of(a[2]),
          Path.of(a[3])));
      case "plant" -> System.out.println("planted " + plant(stop, Path.of(a[2]), Path.of(a[3])));
      default -> throw new IllegalArgumentException(a[1]);
    }
    System.out.flush();
    while (!Files.exists(stop)) {
      Thread.sleep(5);
    }
  }

  private static long swap(Path stop, Path dir, Path to) {
    Path aside = dir.resolveSibling(dir.getFileName() + ".aside");
    long swaps = 0;
    for (long i = 0; !Files.exists(stop); i++) {
      try {
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
          Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
          Files.createSymbolicLink(dir, to);
          swaps++;
          spin(100_000);
          Files.delete(dir);
          Files.move(aside, dir, StandardCopyOption.ATOMIC_MOVE);
        } else if ((i & 0x3ff) == 0) {
          Thread.sleep(1);
        }
      } catch (IOException | InterruptedException raced) {
        // Removed or changed under the act meanwhile: look again.
      }
    }
    return swaps;
  }

  /**
   * Swaps a directory of the user's own beside {@code dir} a few thousand times, so that the
   * swaps the test counts on run at full speed from the first.
   */
  private static void warmUp(Path dir, Path to) throws IOException {
    Path own = Files.createTempDirectory(dir.getParent(), ".warm-up");
    Path sub = Files.createDirectory(own.resolve("sub"));
    long end = System.nanoTime() + 300_000_000L;
    while (System.nanoTime() < end) {
      if (Files.isDirectory(sub, LinkOption.NOFOLLOW_LINKS)) {
        Files.move(sub, own.resolve("aside"), StandardCopyOption.ATOMIC_MOVE);
        Files.createSymbolicLink(sub, to);
        spin(1_000);
        Files.delete(sub);
        Files.move(own.resolve("aside"), sub, StandardCopyOption.ATOMIC_MOVE);
      }
    }
    Files.delete(sub);
    Files.delete(own);
  }

  private static long swapTemps(Path stop, Path dir, Path to) {
    long swaps = 0;
    while (!Files.exists(stop)) {
      try (Stream<Path> s = Files.list(dir)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          String n = p.getFileName().toString();
          if (n.startsWith(".beamsave-") && !n.startsWith(".beamsave-restore-")
              && !n.endsWith(".aside") && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
            try {
              Files.move(p, p.resolveSibling(n + ".aside"), StandardCopyOption.ATOMIC_MOVE);
              Files.createSymbolicLink(p, to);
              swaps++;
            } catch (IOException raced) {
              // Renamed into place meanwhile.
            }
          }
        }
      } catch (IOException | java.io.UncheckedIOException gone) {
        // Listed while it changed: again.
      }
    }
    return swaps;
  }

  private static long plant(Path stop, Path name, Path to) {
    long planted = 0;
    while (!Files.exists(stop)) {
      try {
        if (!Files.exists(name, LinkOption.NOFOLLOW_LINKS)) {
          Files.createSymbolicLink(name, to);
          planted++;
        }
      } catch (IOException raced) {
        // Made meanwhile: look again.
      }
    }
    return planted;
  }

  /** The marker of a restore in {@code watch}, once there is one; null if told to stop. */
  private static Path awaitMarker(Path stop, Path watch) {
    while (!Files.exists(stop)) {
      try (Stream<Path> s = Files.list(watch)) {
        java.util.Optional<Path> m = s.filter(p -> {
          String n = p.getFileName().toString();
          return n.startsWith(".beamsave-restore-") && !n.endsWith(".new");
        }).findAny();
        if (m.isPresent()) {
          return m.get();
        }
      } catch (IOException notYet) {
        // Not made yet.
      }
    }
    return null;
  }

  /** The first directory made in {@code dir} whose name starts with {@code prefix}. */
  private static java.util.Set<Path> listing(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.collect(java.util.stream.Collectors.toSet());
    }
  }

  private static Path awaitNew(Path stop, Path dir, String prefix, java.util.Set<Path> before)
      throws IOException {
    while (!Files.exists(stop)) {
      try (Stream<Path> s = Files.list(dir)) {
        java.util.Optional<Path> made = s.filter(p -> !before.contains(p)
            && p.getFileName().toString().startsWith(prefix)
            && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).findAny();
        if (made.isPresent()) {
          return made.get();
        }
      }
    }
    return null;
  }

  /** Whether {@code marker} went (a restore's tree is whole, say) before told to stop. */
  private static boolean awaitGone(Path stop, Path marker) {
    for (long i = 0; ; i++) {
      if (!Files.exists(marker, LinkOption.NOFOLLOW_LINKS)) {
        return true;
      }
      if ((i & 0xfff) == 0 && Files.exists(stop)) {
        return false;
      }
    }
  }

  private static void spin(long nanos) {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
