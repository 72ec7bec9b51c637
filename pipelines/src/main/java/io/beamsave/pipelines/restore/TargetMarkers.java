package io.beamsave.pipelines.restore;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;

/**
 * The markers at the top of a restore's target: this restore's, left while the tree there is
 * unfinished and removed once it is, and those of earlier restores that did not finish, which
 * are refused or, with {@code --overwrite}, cleared with their temporary files. A marker is one
 * line naming its restore, written whole under another name and renamed into place. Not
 * thread-safe: the driver's, one per restore.
 */
final class TargetMarkers {
  private static final String MARKER_TEXT = "beamsave restore of ";
  /** The suffix of a marker's name while it is written, before it is renamed into place. */
  private static final String MARKER_WRITING = ".new";

  private final Path given;
  private final Dir root;
  private final RestoreTarget target;
  private final boolean overwrite;
  private boolean markerLeft;

  TargetMarkers(Path given, Dir root, RestoreTarget target, boolean overwrite) {
    this.given = given;
    this.root = root;
    this.target = target;
    this.overwrite = overwrite;
  }

  /**
   * Finds markers of restores that did not finish. Without {@code --overwrite} that is an
   * error; with it, their temporary files are removed (the rest is overwritten as usual).
   */
  void clearUnfinished(PrintWriter notes) throws IOException {
    for (byte[] name : root.list()) {
      String n = new String(name, StandardCharsets.ISO_8859_1);
      if (!n.startsWith(RestoreTarget.MARKER_PREFIX)) {
        continue;
      }
      if (n.endsWith(MARKER_WRITING) && ownMarkerText(name, true) != null) {
        // A restore killed while it wrote its marker had not yet written anything else.
        root.delete(name);
        continue;
      }
      String what = marker(name);
      if (what == null) {
        continue;
      }
      String token = n.substring(RestoreTarget.MARKER_PREFIX.length());
      if (!overwrite) {
        throw new BeamsaveException("target " + given + " holds an unfinished restore (" + what
            + "); use --overwrite to complete it");
      }
      if (notes != null) {
        notes.println("completing an unfinished restore in " + given + " (" + what + ")");
        notes.flush();
      }
      TemporaryFiles.removeAll(root, token);
      root.delete(name);
    }
  }

  /**
   * What the marker {@code name} says, or null if it is not one of beamsave's: a regular file,
   * with one link, of this user, starting as beamsave writes it. Anything else by that name
   * (a library's own file, a hard link to a file elsewhere) is left alone and never read out.
   */
  private String marker(byte[] name) {
    String text = ownMarkerText(name, false);
    return text == null ? null : Printable.text(text);
  }

  /**
   * The text of {@code name} if it is a regular file of this user with one link holding one
   * line as beamsave writes a marker, else null; with {@code partial}, any beginning of such a
   * line (empty too) counts, as a marker still being written holds.
   */
  private String ownMarkerText(byte[] name, boolean partial) {
    try (OpenFile f = root.openRead(name)) {
      FileStat s = f.stat();
      if (!s.isRegularFile() || s.links() != 1 || s.uid() != Dir.effectiveUid()
          || s.size() > 4096) {
        return null;
      }
      byte[] b = new byte[(int) s.size()];
      int n = f.read(0, b, 0, b.length);
      String text = new String(b, 0, n, StandardCharsets.UTF_8).strip();
      boolean begins = text.startsWith(MARKER_TEXT)
          || partial && MARKER_TEXT.startsWith(text);
      return begins && text.lines().count() <= 1 ? text : null;
    } catch (IOException e) {
      return null;
    }
  }

  /** Leaves this restore's marker, naming {@code image}, the target and when and who began. */
  void leave(String image) throws IOException {
    String text = MARKER_TEXT + image + " into " + given + ", started "
        + Instant.now() + " by pid " + ProcessHandle.current().pid() + "\n";
    // Written whole under another name, then renamed: a marker is never seen half-written.
    byte[] name = target.markerName();
    byte[] writing = (new String(name, StandardCharsets.US_ASCII) + MARKER_WRITING)
        .getBytes(StandardCharsets.US_ASCII);
    try (OpenFile f = root.create(writing, 0644)) {
      byte[] b = text.getBytes(StandardCharsets.UTF_8);
      f.write(0, b, 0, b.length);
    }
    root.rename(writing, name);
    markerLeft = true;
  }

  /** Removes this restore's marker: the tree it guarded is finished. */
  void remove() throws IOException {
    root.delete(target.markerName());
    markerLeft = false;
  }

  /**
   * Removes this restore's temporary files, if it left its marker, and the marker too unless
   * {@code filesPlaced}: once the workers have run, files they finished may be in place, whole,
   * and the marker says the tree is not.
   */
  void abandon(boolean filesPlaced) throws IOException {
    if (markerLeft) {
      TemporaryFiles.removeAll(root, target.token());
      if (!filesPlaced) {
        remove();
      }
    }
  }
}
