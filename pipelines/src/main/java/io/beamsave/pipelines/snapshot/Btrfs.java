package io.beamsave.pipelines.snapshot;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The btrfs commands a snapshot takes: where a path's subvolume is, what subvolumes lie in it,
 * {@code btrfs subvolume snapshot -r} and {@code delete}.
 */
final class Btrfs {
  /** The inode number of every btrfs subvolume's root directory. */
  private static final long SUBVOLUME_ROOT_INODE = 256;
  private static final long COMMAND_SECONDS = 300;

  private Btrfs() {}

  /**
   * Beside the subvolume that holds {@code library}, on the same mount; at the top of it when
   * it is the mount's root (the save then leaves {@value Snapshot#DIR} out).
   */
  static Path place(Path library, Mounts.Mount mount) {
    Path subvolume = subvolumeOf(library);
    Path at = subvolume.equals(mount.point()) || subvolume.getParent() == null
        ? subvolume : subvolume.getParent();
    return at.resolve(Snapshot.DIR);
  }

  /** The root of the subvolume {@code path} is in: the highest directory on its device. */
  static Path subvolumeOf(Path path) {
    try {
      Object dev = Files.getAttribute(path, "unix:dev", LinkOption.NOFOLLOW_LINKS);
      Path top = path;
      while (top.getParent() != null
          && !isSubvolumeRoot(top)
          && dev.equals(Files.getAttribute(top.getParent(), "unix:dev",
              LinkOption.NOFOLLOW_LINKS))) {
        top = top.getParent();
      }
      return top;
    } catch (IOException e) {
      throw BeamsaveException.io("cannot stat", path, e);
    }
  }

  static boolean isSubvolumeRoot(Path dir) throws IOException {
    return ((Number) Files.getAttribute(dir, "unix:ino", LinkOption.NOFOLLOW_LINKS))
        .longValue() == SUBVOLUME_ROOT_INODE;
  }

  /** Subvolumes directly inside {@code subvolume}, as paths. */
  static List<Path> nested(Path subvolume) {
    // Paths in the list are from the file system's top; "show" gives the subvolume's own.
    String self = run("btrfs", "subvolume", "show", subvolume.toString()).lines().findFirst()
        .orElse("").strip();
    String prefix = self.equals("/") || self.startsWith("<") ? "" : self + "/";
    List<Path> out = new ArrayList<>();
    for (String line : run("btrfs", "subvolume", "list", "-o", subvolume.toString())
        .lines().toList()) {
      int at = line.indexOf(" path ");
      if (at < 0) {
        continue;
      }
      String p = line.substring(at + " path ".length());
      // Saves' snapshots of this subvolume are not part of the library.
      boolean ours = p.contains("/" + Snapshot.DIR + "/") || p.startsWith(Snapshot.DIR + "/");
      if (p.startsWith(prefix) && !ours) {
        out.add(subvolume.resolve(p.substring(prefix.length())));
      }
    }
    return out;
  }

  static void delete(Path snapshot) {
    if (Files.exists(snapshot, LinkOption.NOFOLLOW_LINKS)) {
      run("btrfs", "subvolume", "delete", snapshot.toString());
    }
  }

  /** Runs a btrfs command; its output, or a one-line error with what it said. */
  static String run(String... command) {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new BeamsaveException(String.join(" ", command) + " took over "
            + COMMAND_SECONDS + " s");
      }
      String text = new String(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        String said = text.lines().filter(l -> !l.isBlank()).reduce((a, b) -> b).orElse("");
        throw new BeamsaveException(String.join(" ", command) + " failed (exit "
            + p.exitValue() + "): " + Printable.text(said.strip())
            + (said.contains("Operation not permitted") ? " (btrfs snapshots need root)" : ""));
      }
      return text;
    } catch (IOException e) {
      throw new BeamsaveException("cannot run " + command[0] + ": " + e.getMessage()
          + " (is btrfs-progs installed?)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException(String.join(" ", command) + ": interrupted");
    }
  }
}
