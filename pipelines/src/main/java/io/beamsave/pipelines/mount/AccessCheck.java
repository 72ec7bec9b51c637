package io.beamsave.pipelines.mount;

import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PosixAcl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import ru.serce.jnrfuse.ErrorCodes;

/**
 * The permission check a mount makes itself when other users read it and the kernel's own
 * ({@code default_permissions}, which knows the mode bits alone) would let them past a saved
 * access ACL. A call passes if its caller may search every directory from the mount's root to
 * the node and has what the call needs of the node, as the node's saved access ACL says, else
 * its mode bits ({@link PosixAcl#permits}); uid 0 reads and searches any directory, as
 * with the kernel. Where a crafted image's mode and ACL disagree, the ACL decides: a restore
 * sets it after the mode, and the kernel then answers by it.
 *
 * <p>The caller is the request's fs uid and fs gid (libfuse's context); its supplementary groups
 * are read from {@code /proc/PID/status} of the thread that made the request, as libfuse's
 * {@code fuse_getgroups} reads them, and only if that file still shows the same fs uid and fs
 * gid. Where they cannot be known (a caller in another pid namespace, a thread that is gone,
 * {@code /proc} mounted {@code hidepid}), a check that needs them fails: a group entry can
 * refuse what other's grants, so no answer is safe without them.
 *
 * <p>Stateless but for the view; thread-safe as the view is.
 */
final class AccessCheck {
  /** Who made a request: fs uid, fs gid, and thread id (0 where unknown). */
  record Caller(int uid, int gid, int pid) {}

  private static final byte[] ACL_ACCESS =
      Meta.ACL_ACCESS.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final int[] NO_GROUPS = {};

  private final MountedFs.View view;
  private final Supplier<Caller> caller;

  AccessCheck(MountedFs.View view, Supplier<Caller> caller) {
    this.view = view;
    this.caller = caller;
  }

  /**
   * 0 if the caller of the request being served may reach {@code node} at {@code path} and
   * have {@code want} of it ({@link PosixAcl#READ}, ...; 0 to reach it only), else {@code
   * -EACCES}. A saved ACL that is not one fails the call, naming the entry.
   */
  int check(byte[] path, MountedFs.Node node, int want) throws IOException {
    Caller c = caller.get();
    Groups groups = new Groups(c);
    for (int i = 0; i < path.length; i++) {
      if (i == 0 || path[i] == '/') {
        byte[] dir = Arrays.copyOf(path, i);
        MountedFs.Node d = view.resolve(dir);
        if (d == null) {
          return -ErrorCodes.ENOENT();
        }
        if (!permits(c, groups, dir, d, PosixAcl.EXECUTE)) {
          return -ErrorCodes.EACCES();
        }
      }
    }
    return want == 0 || permits(c, groups, path, node, want) ? 0 : -ErrorCodes.EACCES();
  }

  private static boolean permits(Caller c, Groups groups, byte[] path, MountedFs.Node n,
      int want) throws IOException {
    int uid = 0;
    int gid = 0;
    PosixAcl acl;
    boolean dir;
    if (n instanceof MountedFs.Made m) {
      dir = m.target() == null;
      acl = PosixAcl.ofMode(dir ? NodeStat.MADE_DIRECTORY : NodeStat.MADE_LINK);
    } else {
      MountedFs.InImage in = (MountedFs.InImage) n;
      Entry e = in.entry().isHardLink() ? in.tree().fileOf(in.entry()) : in.entry();
      if (e == null) {
        throw new IOException("a later name of " + in.entry().linkTarget() + ", which is no"
            + " file of the image");
      }
      uid = e.uid();
      gid = e.gid();
      dir = e.type() == EntryType.DIRECTORY;
      acl = acl(e, path);
    }
    if (c.uid() == 0 && dir) {
      // CAP_DAC_READ_SEARCH: root reads and searches a directory whatever it says.
      return true;
    }
    int[] gids = c.uid() == 0 || c.uid() == uid ? NO_GROUPS : groups.get();
    return gids != null && acl.permits(c.uid(), gids, uid, gid, want);
  }

  /**
   * The entry's saved access ACL as a restore makes it (agreeing with the mode the mount shows,
   * as {@code restore.Withheld} narrows it), or the one its mode bits make.
   */
  static PosixAcl acl(Entry e, byte[] path) throws IOException {
    for (Meta.Xattr x : e.meta().xattrs()) {
      if (Arrays.equals(x.name(), ACL_ACCESS)) {
        try {
          return PosixAcl.parse(x.value()).withMode(e.mode());
        } catch (ImageException bad) {
          throw new IOException("the saved ACL of '" + Printable.bytes(path) + "' is "
              + bad.getMessage(), bad);
        }
      }
    }
    return PosixAcl.ofMode(e.mode());
  }

  /** Whether the entry's mode bits say all its access ACL says (it has none, or a minimal one). */
  static boolean modesSayAll(Entry e) {
    try {
      PosixAcl acl = acl(e, new byte[0]);
      return acl.isMinimal() && acl.mode() == (e.mode() & 0777);
    } catch (IOException bad) {
      return false;
    }
  }

  /** The caller's groups, read once per check and only when a check needs them. */
  private static final class Groups {
    private final Caller caller;
    private int[] gids;
    private boolean read;

    Groups(Caller caller) {
      this.caller = caller;
    }

    int[] get() {
      if (!read) {
        read = true;
        gids = of(caller);
      }
      return gids;
    }
  }

  /**
   * {@code c}'s fs gid and supplementary groups, from {@code /proc/PID/status} if it still
   * shows {@code c}'s fs uid and fs gid; else null.
   */
  static int[] of(Caller c) {
    if (c.pid() <= 0) {
      return null;
    }
    List<String> status;
    try {
      status = Files.readAllLines(Path.of("/proc", Integer.toString(c.pid()), "status"));
    } catch (IOException | RuntimeException goneOrHidden) {
      return null;
    }
    String[] uids = field(status, "Uid:");
    String[] gids = field(status, "Gid:");
    String[] groups = field(status, "Groups:");
    try {
      // Real, effective, saved and fs ids: the kernel checks access with the fs ones.
      if (uids == null || gids == null || groups == null || uids.length != 4
          || gids.length != 4 || Integer.parseUnsignedInt(uids[3]) != c.uid()
          || Integer.parseUnsignedInt(gids[3]) != c.gid()) {
        return null;
      }
      int[] all = new int[groups.length + 1];
      all[0] = c.gid();
      for (int i = 0; i < groups.length; i++) {
        all[i + 1] = Integer.parseUnsignedInt(groups[i]);
      }
      return all;
    } catch (NumberFormatException odd) {
      return null;
    }
  }

  private static String[] field(List<String> status, String name) {
    for (String line : status) {
      if (line.startsWith(name)) {
        String rest = line.substring(name.length()).strip();
        return rest.isEmpty() ? new String[0] : rest.split("\\s+");
      }
    }
    return null;
  }
}
