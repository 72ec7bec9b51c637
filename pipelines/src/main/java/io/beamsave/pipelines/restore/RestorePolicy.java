package io.beamsave.pipelines.restore;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a restore gives back of what an image asks for that grants a privilege, in the spirit of
 * libarchive's {@code ARCHIVE_EXTRACT_SECURE_*} and GNU tar's {@code --no-same-owner}: an image
 * is untrusted input (whoever may write where images are kept can put one there), so by default
 * it grants nothing the operator did not ask for. Set-id bits of files, file capabilities, device
 * nodes and {@code trusted.}/{@code security.} attributes come back only with their flag, each
 * of its own, or all with {@code --trust-image}; what is left out is told, a line per kind. Owners
 * are the numbers saved (a whole-system restore on its own host needs exactly those, and a name in
 * an image, which anyone may write, must not choose who owns a file); {@code --owner-by-name}
 * maps the names to this host's users, but never onto user or group 0 unless saved as 0. {@link
 * Withheld} applies it to each entry a restore takes. Immutable.
 */
public record RestorePolicy(Set<Grant> grants, boolean ownersByName) {

  /** What an image may be granted, and the flag that grants it. */
  public enum Grant {
    SETID("set-id bits", "--restore-setid"),
    CAPABILITIES("file capabilities", "--restore-capabilities"),
    DEVICES("devices", "--restore-devices"),
    SYSTEM_XATTRS("trusted. and security. attributes", "--restore-system-xattrs");

    private final String what;
    private final String flag;

    Grant(String what, String flag) {
      this.what = what;
      this.flag = flag;
    }

    /** What it grants, in words. */
    public String what() {
      return what;
    }

    /** The flag that grants it. */
    public String flag() {
      return flag;
    }
  }

  /** Grants nothing; owners by number. */
  public static final RestorePolicy SAFE = new RestorePolicy(Set.of(), false);

  public RestorePolicy {
    grants = grants.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(grants));
  }

  /** Everything the image asks for: {@code --trust-image}, for a whole-system restore. */
  public static RestorePolicy trustImage() {
    return new RestorePolicy(EnumSet.allOf(Grant.class), false);
  }

  public RestorePolicy with(Grant g) {
    EnumSet<Grant> more = grants.isEmpty() ? EnumSet.noneOf(Grant.class) : EnumSet.copyOf(grants);
    more.add(g);
    return new RestorePolicy(more, ownersByName);
  }

  public RestorePolicy withOwnersByName(boolean byName) {
    return new RestorePolicy(grants, byName);
  }

  public boolean grants(Grant g) {
    return grants.contains(g);
  }

  /** Whether it grants everything ({@code --trust-image}). */
  public boolean trustsImage() {
    return grants.size() == Grant.values().length;
  }

  /** A restore's application of this policy, counting what it withholds. */
  public Withheld start() {
    return new Withheld(this, io.beamsave.transforms.fs.Dir.effectiveUid() == 0);
  }
}
