package io.beamsave.pipelines.restore;

import io.beamsave.transforms.fs.Accounts;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.Entry;

/**
 * Whose a restored entry is on this host. As root, an entry whose image names its owner (format
 * version 9 on) goes to the user of that name here, and likewise its group, where this host has
 * one; otherwise, and with {@code --numeric-owner}, to the numbers saved (tar's rule). As
 * another user nothing is chowned, so nothing is mapped.
 */
final class Owners {
  static final Owners NUMERIC = new Owners(false);

  private final boolean byName;

  private Owners(boolean byName) {
    this.byName = byName;
  }

  /** The owners for a restore; {@code numeric}: keep the numbers saved. */
  static Owners of(boolean numeric) {
    return numeric || Dir.effectiveUid() != 0 ? NUMERIC : new Owners(true);
  }

  /** {@code e} with its owner and group as this host names them. */
  Entry map(Entry e) {
    if (!byName || e == null) {
      return e;
    }
    int uid = e.uid();
    int gid = e.gid();
    if (e.meta().user() != null) {
      Integer here = Accounts.uid(e.meta().user());
      uid = here != null ? here : uid;
    }
    if (e.meta().group() != null) {
      Integer here = Accounts.gid(e.meta().group());
      gid = here != null ? here : gid;
    }
    return uid == e.uid() && gid == e.gid() ? e : e.withOwner(uid, gid);
  }
}
