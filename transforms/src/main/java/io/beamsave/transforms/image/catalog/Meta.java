package io.beamsave.transforms.image.catalog;

import java.util.Arrays;
import java.util.List;

/**
 * What an entry holds beyond {@code statx}'s fields (format version 9 on): the names of its
 * owner and group as the saving host knew them, its extended attributes (POSIX ACLs and file
 * capabilities among them, as the kernel stores them), and a device's number. Any part may be
 * missing: {@link #NONE} is an entry of an older image, or one with nothing more to say.
 *
 * @param user the owner's name, or null where the saving host had none for the uid
 * @param group the group's name, or null likewise
 * @param xattrs extended attributes, sorted by name
 * @param rdev the device number of a character or block device ({@link io.beamsave.transforms.fs.DeviceNumber}), else 0
 */
public record Meta(byte[] user, byte[] group, List<Xattr> xattrs, long rdev)
    implements java.io.Serializable {

  public static final Meta NONE = new Meta(null, null, List.of(), 0);

  /**
   * The most extended attributes an entry may carry: as many as Linux lists for one file (64 KiB
   * of names, each at least {@code user.x} and its NUL).
   */
  public static final int MAX_XATTRS = 10_000;

  /** The most bytes an entry's attribute values may hold together. */
  public static final int MAX_XATTR_BYTES = 4 << 20;
  /**
   * The most bytes an attribute's name may hold (Linux's {@code XATTR_NAME_MAX}), and its value
   * ({@code XATTR_SIZE_MAX}).
   */
  public static final int MAX_XATTR_NAME = 255;

  public static final int MAX_XATTR_VALUE = 65536;
  /** The most bytes an owner or group name may hold. */
  public static final int MAX_NAME = 256;

  /** The namespaces Linux knows; a name outside them cannot be set. */
  private static final String[] NAMESPACES = {"user.", "trusted.", "security.", "system."};

  public static final String ACL_ACCESS = "system.posix_acl_access";
  public static final String ACL_DEFAULT = "system.posix_acl_default";
  public static final String CAPABILITY = "security.capability";

  public Meta {
    xattrs = xattrs == null ? List.of() : List.copyOf(xattrs);
  }

  /** One extended attribute: its name and value, as bytes. */
  public record Xattr(byte[] name, byte[] value) implements java.io.Serializable {
    public String nameText() {
      return new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    public boolean is(String other) {
      return Arrays.equals(name, other.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Xattr x && Arrays.equals(name, x.name) && Arrays.equals(value, x.value);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(name) * 31 + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
      return nameText() + "(" + value.length + " bytes)";
    }
  }

  /** The bytes of the attributes' names and values: what they weigh in memory. */
  public long xattrBytes() {
    long n = 0;
    for (Xattr x : xattrs) {
      n += x.name().length + x.value().length;
    }
    return n;
  }

  public boolean isNone() {
    return user == null && group == null && xattrs.isEmpty() && rdev == 0;
  }

  public Meta withXattrs(List<Xattr> newXattrs) {
    return new Meta(user, group, newXattrs, rdev);
  }

  public Meta withNames(byte[] newUser, byte[] newGroup) {
    return new Meta(newUser, newGroup, xattrs, rdev);
  }

  public Meta withRdev(long newRdev) {
    return new Meta(user, group, xattrs, newRdev);
  }

  /**
   * Why {@code name} cannot be an extended attribute's name, or null: empty, too long, holding
   * a NUL, or outside the namespaces Linux knows.
   */
  public static String xattrNameProblem(byte[] name) {
    if (name.length == 0 || name.length > MAX_XATTR_NAME) {
      return "its length is " + name.length;
    }
    for (byte b : name) {
      if (b == 0) {
        return "it holds a NUL";
      }
    }
    String text = new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
    for (String ns : NAMESPACES) {
      if (text.startsWith(ns) && text.length() > ns.length()) {
        return null;
      }
    }
    return "it is in no namespace Linux knows";
  }

  /** Why {@code name} cannot be an owner's or group's name, or null. */
  public static String nameProblem(byte[] name) {
    if (name.length == 0 || name.length > MAX_NAME) {
      return "its length is " + name.length;
    }
    for (byte b : name) {
      if (b == 0 || b == '\n' || b == ':') {
        return "it holds a NUL, a newline or a colon";
      }
    }
    return null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Meta m && Arrays.equals(user, m.user) && Arrays.equals(group, m.group)
        && xattrs.equals(m.xattrs) && rdev == m.rdev;
  }

  @Override
  public int hashCode() {
    return (Arrays.hashCode(user) * 31 + Arrays.hashCode(group)) * 31 + xattrs.hashCode()
        + Long.hashCode(rdev);
  }

  @Override
  public String toString() {
    return "Meta[user=" + (user == null ? null : new String(user,
        java.nio.charset.StandardCharsets.ISO_8859_1)) + ", group=" + (group == null ? null
        : new String(group, java.nio.charset.StandardCharsets.ISO_8859_1)) + ", xattrs="
        + xattrs + ", rdev=" + rdev + "]";
  }
}
