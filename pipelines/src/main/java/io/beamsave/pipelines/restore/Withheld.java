package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.restore.RestorePolicy.Grant;
import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.fs.Accounts;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import io.beamsave.transforms.image.catalog.PosixAcl;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link RestorePolicy} applied to the entries of one restore, in the driver, before anything
 * is made: each entry comes out as the restore is to make it (its owner on this host, the mode
 * and attributes it may have), or not at all (a device not granted). Workers and the last pass
 * make what the entry says, so this is the one place a restore decides what an image grants.
 * Counts what it withholds, by kind, and tells each kind once. Not thread-safe: the driver's.
 */
public final class Withheld {
  private static final int SETID = 06000;

  private final RestorePolicy policy;
  private final boolean asRoot;
  private final Map<String, long[]> counts = new LinkedHashMap<>();
  private final Map<String, String> firsts = new LinkedHashMap<>();
  /** The entry each kind was last counted for: an entry counts once per kind. */
  private final Map<String, Entry> lasts = new java.util.HashMap<>();

  Withheld(RestorePolicy policy, boolean asRoot) {
    this.policy = policy;
    this.asRoot = asRoot;
  }

  /** {@code e} as the restore is to make it, or null if the policy leaves it out. */
  public Entry apply(Entry e) {
    if (e == null) {
      return null;
    }
    if ((e.type() == EntryType.CHAR_DEVICE || e.type() == EntryType.BLOCK_DEVICE)
        && !policy.grants(Grant.DEVICES)) {
      note("devices", "not made unless asked: " + Grant.DEVICES.flag(), e);
      return null;
    }
    Entry out = owner(e);
    out = mode(e, out);
    return attributes(out);
  }

  /** As root with {@code --owner-by-name}: the owner and group this host has by those names. */
  private Entry owner(Entry e) {
    if (!asRoot || !policy.ownersByName()) {
      return e;
    }
    int uid = byName(e, e.uid(), e.meta().user() == null ? null : Accounts.uid(e.meta().user()));
    int gid = byName(e, e.gid(),
        e.meta().group() == null ? null : Accounts.gid(e.meta().group()));
    return uid == e.uid() && gid == e.gid() ? e : e.withOwner(uid, gid);
  }

  private int byName(Entry e, int saved, Integer here) {
    if (here == null) {
      return saved;
    }
    if (here == 0 && saved != 0) {
      // A name is what anyone who writes an image says it is: it never makes a file root's.
      note("owner names", "kept as the numbers saved: a name never gives an entry user or"
          + " group 0", e);
      return saved;
    }
    return here;
  }

  /**
   * The mode to restore: a file's set-id bits only where they are granted and its owner (or
   * group, for set-group-id) is restored as saved; never by a user other than root, who cannot
   * give the file its owner (libarchive's rule). A directory's bits say how what is made in it
   * is owned, which grants nothing, and stay.
   */
  private Entry mode(Entry saved, Entry e) {
    int setid = e.mode() & SETID;
    if (setid == 0 || e.type() == EntryType.DIRECTORY || e.type() == EntryType.SYMLINK) {
      return e;
    }
    int keep = 0;
    if (!asRoot) {
      note("set-id bits", "cleared: restored by a user other than root, who cannot give the"
          + " files their owners", e);
    } else if (!policy.grants(Grant.SETID)) {
      note("set-id bits", "cleared unless asked: " + Grant.SETID.flag(), e);
    } else {
      keep = (e.uid() == saved.uid() ? 04000 : 0) | (e.gid() == saved.gid() ? 02000 : 0);
      if ((setid & ~keep) != 0) {
        note("set-id bits", "cleared where the owner is not restored as saved", e);
      }
    }
    return e.withMode(e.mode() & ~(setid & ~keep));
  }

  /**
   * The attributes to restore: capabilities and the {@code trusted.} and {@code security.}
   * namespaces only as granted, and an access ACL made to agree with the mode (what {@code list},
   * {@code verify} and {@code mount} show): a crafted ACL that says more than the mode is
   * narrowed to it, as {@code chmod} would.
   */
  private Entry attributes(Entry e) {
    List<Meta.Xattr> xattrs = e.meta().xattrs();
    if (xattrs.isEmpty()) {
      return e;
    }
    List<Meta.Xattr> kept = new ArrayList<>(xattrs.size());
    boolean changed = false;
    for (Meta.Xattr x : xattrs) {
      Meta.Xattr y = attribute(e, x);
      changed |= y != x;
      if (y != null) {
        kept.add(y);
      }
    }
    return changed ? e.withMeta(e.meta().withXattrs(kept)) : e;
  }

  private Meta.Xattr attribute(Entry e, Meta.Xattr x) {
    String name = x.nameText();
    if (x.is(Meta.CAPABILITY)) {
      if (!policy.grants(Grant.CAPABILITIES)) {
        note("file capabilities", "left out unless asked: " + Grant.CAPABILITIES.flag(), e);
        return null;
      }
      return x;
    }
    if (name.startsWith("trusted.") || name.startsWith("security.")) {
      if (!policy.grants(Grant.SYSTEM_XATTRS)) {
        note("trusted. and security. attributes", "left out unless asked: "
            + Grant.SYSTEM_XATTRS.flag(), e);
        return null;
      }
      return x;
    }
    if (x.is(Meta.ACL_ACCESS)) {
      try {
        byte[] agreeing = PosixAcl.parse(x.value()).withMode(e.mode()).format();
        return java.util.Arrays.equals(agreeing, x.value()) ? x
            : new Meta.Xattr(x.name(), agreeing);
      } catch (ImageException notAnAcl) {
        note("ACLs", "left out: not a valid ACL (" + notAnAcl.getMessage() + ")", e);
        return null;
      }
    }
    return x;
  }

  private void note(String what, String why, Entry e) {
    String key = what + "\n" + why;
    if (lasts.put(key, e) == e) {
      return;
    }
    long[] n = counts.computeIfAbsent(key, k -> new long[1]);
    if (n[0]++ == 0) {
      firsts.put(key, e.path().isEmpty() ? "the top" : e.path().toString());
    }
  }

  /** One line per kind withheld, to add to the restore's warnings. */
  public void warnings(List<String> out) {
    counts.forEach((key, n) -> {
      String[] kw = key.split("\n", 2);
      out.add(kw[0] + " of " + n[0] + " entr" + (n[0] == 1 ? "y" : "ies") + " " + kw[1]
          + " (first: " + firsts.get(key) + ")");
    });
  }
}
