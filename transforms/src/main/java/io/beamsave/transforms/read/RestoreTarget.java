package io.beamsave.transforms.read;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.Handle;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.io.Serializable;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Where a restore writes, as every worker needs to know it: the target directory, resolved once
 * by the launcher ({@code uri} keeps every byte of its path) and identified by device and
 * inode, and the token that names this restore's files while they are being written. A file
 * is written under a temporary name ({@link #temporaryName}) in its final directory and renamed
 * only once complete, so an unfinished file never looks finished; a marker at the target's top
 * ({@link #markerName}) says a restore is under way until it ends.
 */
public record RestoreTarget(String uri, long device, long inode, String token,
    boolean inheritsAcls) implements Serializable {

  /**
   * A target where what the restore makes inherits no ACL: its top has no default ACL and it
   * held nothing before.
   */
  public RestoreTarget(String uri, long device, long inode, String token) {
    this(uri, device, inode, token, false);
  }

  static final byte[] ACL_ACCESS =
      io.beamsave.transforms.image.catalog.Meta.ACL_ACCESS.getBytes(StandardCharsets.US_ASCII);
  static final byte[] ACL_DEFAULT =
      io.beamsave.transforms.image.catalog.Meta.ACL_DEFAULT.getBytes(StandardCharsets.US_ASCII);

  /** Temporary names and markers start with this. */
  public static final String PREFIX = ".beamsave-";

  public static final String MARKER_PREFIX = PREFIX + "restore-";

  public Path path() {
    return Path.of(URI.create(uri));
  }

  /**
   * Opens the target from {@code /} without following a link, and checks it is still the
   * directory the launcher resolved: a worker must not write into a directory put in its place.
   */
  public Dir openRoot() {
    Dir root = null;
    boolean same = false;
    try {
      root = Dir.openNoFollow(path());
      FileStat s = root.stat();
      same = s.inode() == inode && s.device() == device;
    } catch (IOException e) {
      closeQuietly(root);
      throw BeamsaveException.io("cannot open restore target", path(), e);
    }
    if (!same) {
      closeQuietly(root);
      throw new BeamsaveException("restore target " + path() + " was replaced during the"
          + " restore; nothing more is written");
    }
    return root;
  }

  /**
   * Gives the file or directory {@code h} its saved owner ({@code asRoot} only), permission bits
   * and mtime, and returns its status after, whose mtime says what the filesystem kept. In a
   * target that {@link #inheritsAcls}, the ACLs it inherited from its directory go first: what
   * was saved comes back, and its saved ACLs, if any, are set after this.
   */
  public FileStat setMetadata(
      Handle h, int uid, int gid, int mode, long mtimeSeconds, int mtimeNanos, boolean asRoot)
      throws IOException {
    if (inheritsAcls) {
      h.removeXattr(ACL_ACCESS);
      if (h instanceof Dir) {
        h.removeXattr(ACL_DEFAULT);
      }
    }
    // The owner first: changing it clears the set-id bits the mode may then set.
    if (asRoot) {
      h.setOwner(uid, gid);
    }
    h.setPermissions(mode);
    h.setModified(mtimeSeconds, mtimeNanos);
    return h.stat();
  }

  private static void closeQuietly(Dir dir) {
    if (dir != null) {
      try {
        dir.close();
      } catch (IOException ignored) {
        // The failure being reported says what matters.
      }
    }
  }

  /**
   * The name, in its final directory, under which the file at {@code path} is written until it
   * is complete: the token and a 64-bit hash of the path, short whatever the name's length.
   */
  public byte[] temporaryName(PathBytes path) {
    long h = Holder.XXH.hash(path.bytes(), 0, path.length(), 0);
    return (PREFIX + token + "-" + String.format("%016x", h)).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * A new name, at the target's top, for a worker's record of the files it found damaged ({@code
   * restore --skip-damaged}), which the driver reads and removes: a temporary name of this
   * restore ({@link #isTemporaryOf}, so that an abandoned restore clears it too) that no file's
   * can be, its hash part starting with {@code x}.
   */
  public byte[] damageLogName() {
    byte[] r = new byte[8];
    new java.security.SecureRandom().nextBytes(r);
    String hex = java.util.HexFormat.of().formatHex(r).substring(1);
    return (PREFIX + token + "-" + DAMAGE_LOG + hex).getBytes(StandardCharsets.US_ASCII);
  }

  /** Whether {@code name} is one of {@link #damageLogName}'s. */
  public boolean isDamageLog(byte[] name) {
    return isTemporaryOf(name, token)
        && name[(PREFIX + token + "-").length()] == DAMAGE_LOG;
  }

  private static final char DAMAGE_LOG = 'x';

  /** The marker left at the target's top while this restore runs. */
  public byte[] markerName() {
    return (MARKER_PREFIX + token).getBytes(StandardCharsets.US_ASCII);
  }

  /** Whether {@code name} is a temporary name of the restore whose token is {@code token}. */
  public static boolean isTemporaryOf(byte[] name, String token) {
    byte[] prefix = (PREFIX + token + "-").getBytes(StandardCharsets.US_ASCII);
    if (name.length != prefix.length + 16) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (name[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  private static final class Holder {
    static final net.jpountz.xxhash.XXHash64 XXH = XXHashFactory.fastestInstance().hash64();
  }
}
