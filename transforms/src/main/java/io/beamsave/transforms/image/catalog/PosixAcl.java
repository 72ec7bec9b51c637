package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A POSIX access ACL as Linux keeps it in {@link Meta#ACL_ACCESS}: a little-endian u32 version
 * (2), then 8 bytes per entry (u16 tag, u16 permissions, u32 id). What it answers is what the
 * kernel answers for a file carrying it: the mode bits it implies ({@link #mode}), the ACL a
 * {@code chmod} leaves ({@link #withMode}), and whether a caller may read, write or execute
 * ({@link #permits}).
 *
 * <p>{@link #parse} takes untrusted bytes (a catalog's) and accepts what the kernel accepts when
 * the attribute is set, less duplicate entries: entries in the kernel's order (owner, named
 * users, owning group, named groups, mask, other), a mask wherever a named entry is, no bit
 * beyond {@code rwx}. Anything else is an {@link ImageException} naming what is wrong. The id of
 * an owner, owning group, mask or other entry means nothing to the kernel and is ignored; {@link
 * #format} writes it as the kernel does, {@code 0xffffffff}.
 *
 * <p>Immutable and thread-safe; cheap (an array of a few entries).
 */
public final class PosixAcl {
  /** Permission bits of an entry, and of {@link #permits}' {@code want}, as {@code access(2)}. */
  public static final int READ = 4;

  public static final int WRITE = 2;
  public static final int EXECUTE = 1;

  static final int VERSION = 2;
  static final int USER_OBJ = 0x01;
  static final int USER = 0x02;
  static final int GROUP_OBJ = 0x04;
  static final int GROUP = 0x08;
  static final int MASK = 0x10;
  static final int OTHER = 0x20;
  private static final int UNDEFINED_ID = -1;

  /** A value's entries at most: those of Linux's largest attribute value. */
  private static final int MAX_ENTRIES = (Meta.MAX_XATTR_VALUE - 4) / 8;

  /** Entries in the kernel's order: tag, permissions, id (-1 for the unnamed ones). */
  private final int[] tags;

  private final int[] perms;
  private final int[] ids;

  private PosixAcl(int[] tags, int[] perms, int[] ids) {
    this.tags = tags;
    this.perms = perms;
    this.ids = ids;
  }

  /** The ACL that says what {@code mode}'s permission bits say, and nothing more. */
  public static PosixAcl ofMode(int mode) {
    return new PosixAcl(new int[] {USER_OBJ, GROUP_OBJ, OTHER},
        new int[] {(mode >> 6) & 7, (mode >> 3) & 7, mode & 7},
        new int[] {UNDEFINED_ID, UNDEFINED_ID, UNDEFINED_ID});
  }

  /** Decodes an access ACL attribute's value; see the class comment for what is refused. */
  public static PosixAcl parse(byte[] value) throws ImageException {
    if (value.length < 4 || (value.length - 4) % 8 != 0) {
      throw bad("its " + value.length + " bytes are not a 4-byte header and 8 per entry");
    }
    ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
    int version = b.getInt();
    if (version != VERSION) {
      throw bad("version " + Integer.toUnsignedString(version) + ", not " + VERSION);
    }
    int n = (value.length - 4) / 8;
    if (n > MAX_ENTRIES) {
      throw bad(n + " entries, more than " + MAX_ENTRIES);
    }
    int[] tags = new int[n];
    int[] perms = new int[n];
    int[] ids = new int[n];
    // The kernel's posix_acl_valid: 'state' is the tag the walk expects next (named entries
    // may repeat), 0 once the other entry is met.
    int state = USER_OBJ;
    boolean named = false;
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int i = 0; i < n; i++) {
      int tag = b.getShort() & 0xffff;
      int perm = b.getShort() & 0xffff;
      int id = b.getInt();
      String which = "entry " + i;
      if ((perm & ~7) != 0) {
        throw bad(which + " has permission bits 0x" + Integer.toHexString(perm));
      }
      boolean inOrder = switch (tag) {
        case USER_OBJ -> state == USER_OBJ;
        case USER, GROUP -> state == tag;
        case GROUP_OBJ -> state == USER;
        case MASK -> state == GROUP;
        case OTHER -> state == OTHER || state == GROUP && !named;
        default -> throw bad(which + " has the unknown tag 0x" + Integer.toHexString(tag));
      };
      if (!inOrder) {
        throw bad(tag == OTHER && state == GROUP ? "it has named entries and no mask"
            : which + " (" + name(tag) + ") is out of the order owner, named users, owning"
            + " group, named groups, mask, other");
      }
      if (tag == USER || tag == GROUP) {
        if (id == UNDEFINED_ID) {
          throw bad(which + " (" + name(tag) + ") names the invalid id 4294967295");
        }
        if (!seen.add((long) tag << 32 | Integer.toUnsignedLong(id))) {
          throw bad(which + " repeats " + name(tag) + " " + Integer.toUnsignedString(id));
        }
        named = true;
      } else {
        id = UNDEFINED_ID;
      }
      state = switch (tag) {
        case USER_OBJ -> USER;
        case GROUP_OBJ -> GROUP;
        case MASK -> OTHER;
        case OTHER -> 0;
        default -> state;
      };
      tags[i] = tag;
      perms[i] = perm;
      ids[i] = id;
    }
    if (state != 0) {
      throw bad(n == 0 ? "it has no entries" : "it ends before its other entry");
    }
    return new PosixAcl(tags, perms, ids);
  }

  private static ImageException bad(String why) {
    return new ImageException("not a POSIX access ACL: " + why);
  }

  private static String name(int tag) {
    return switch (tag) {
      case USER_OBJ -> "owner";
      case USER -> "user";
      case GROUP_OBJ -> "owning group";
      case GROUP -> "group";
      case MASK -> "mask";
      default -> "other";
    };
  }

  /** The attribute value the kernel would hold for this ACL. */
  public byte[] format() {
    ByteBuffer b = ByteBuffer.allocate(4 + 8 * tags.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(VERSION);
    for (int i = 0; i < tags.length; i++) {
      b.putShort((short) tags[i]).putShort((short) perms[i]).putInt(ids[i]);
    }
    return b.array();
  }

  /**
   * The ACL {@code chmod(mode)} leaves (the kernel's {@code posix_acl_chmod}): the owner's,
   * other's and the mask's permissions (the owning group's, without a mask) become those of
   * {@code mode}; named entries keep theirs. Bits of {@code mode} beyond 0777 are ignored.
   */
  public PosixAcl withMode(int mode) {
    int[] p = perms.clone();
    int group = indexOf(MASK) >= 0 ? indexOf(MASK) : indexOf(GROUP_OBJ);
    p[indexOf(USER_OBJ)] = (mode >> 6) & 7;
    p[group] = (mode >> 3) & 7;
    p[indexOf(OTHER)] = mode & 7;
    return new PosixAcl(tags, p, ids);
  }

  /**
   * The permission bits (0 to 0777) of a file carrying this ACL: the owner's, the mask's (else
   * the owning group's) and other's.
   */
  public int mode() {
    int group = indexOf(MASK) >= 0 ? indexOf(MASK) : indexOf(GROUP_OBJ);
    return perms[indexOf(USER_OBJ)] << 6 | perms[group] << 3 | perms[indexOf(OTHER)];
  }

  /**
   * Whether the mode bits alone say all this ACL says: no named entry and no mask (the kernel's
   * {@code posix_acl_equiv_mode}, which keeps no attribute for such an ACL).
   */
  public boolean isMinimal() {
    return tags.length == 3;
  }

  /**
   * Whether a caller of fs uid {@code uid} in the groups {@code gids} (its fs gid and its
   * supplementary groups) may have all of {@code want} ({@link #READ}, {@link #WRITE}, {@link
   * #EXECUTE}; 0 asks nothing) of a file owned by {@code ownerUid}:{@code ownerGid} that carries
   * this ACL, as the kernel's {@code generic_permission} answers: the owner entry for the owner;
   * a named user entry, limited by the mask; else, for a caller in the owning group or a named
   * group, granted if one of those entries grants it all, limited by the mask, and refused if
   * none does; else the other entry. Two of the kernel's turns are kept: with a mask of no
   * permissions the ACL is not consulted and the mode bits decide (a named user gets what
   * others get), and uid 0 gets reading and writing always and executing where any execute bit
   * of the mode is set. For a directory, the kernel lets uid 0 read and search whatever its
   * bits say, which is the caller's to grant: this answers as for a file.
   */
  public boolean permits(int uid, int[] gids, int ownerUid, int ownerGid, int want) {
    want &= 7;
    if (uid == 0) {
      return (want & EXECUTE) == 0 || (mode() & 0111) != 0;
    }
    if (uid == ownerUid) {
      return (perms[indexOf(USER_OBJ)] & want) == want;
    }
    int mode = mode();
    if ((mode & 070) == 0) {
      // acl_permission_check skips check_acl when the mode's group bits are empty.
      int bits = mode & 7;
      if ((want & (bits ^ (mode >> 3))) != 0 && in(gids, ownerGid)) {
        bits = (mode >> 3) & 7;
      }
      return (want & ~bits) == 0;
    }
    int mask = indexOf(MASK) >= 0 ? perms[indexOf(MASK)] : 7;
    boolean found = false;
    for (int i = 0; i < tags.length; i++) {
      switch (tags[i]) {
        case USER -> {
          if (ids[i] == uid) {
            return (perms[i] & mask & want) == want;
          }
        }
        case GROUP_OBJ, GROUP -> {
          if (in(gids, tags[i] == GROUP ? ids[i] : ownerGid)) {
            found = true;
            if ((perms[i] & want) == want) {
              return (mask & want) == want;
            }
          }
        }
        case OTHER -> {
          return !found && (perms[i] & want) == want;
        }
        default -> { }
      }
    }
    return false;
  }

  private static boolean in(int[] gids, int gid) {
    for (int g : gids) {
      if (g == gid) {
        return true;
      }
    }
    return false;
  }

  private int indexOf(int tag) {
    for (int i = 0; i < tags.length; i++) {
      if (tags[i] == tag) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PosixAcl a && Arrays.equals(tags, a.tags)
        && Arrays.equals(perms, a.perms) && Arrays.equals(ids, a.ids);
  }

  @Override
  public int hashCode() {
    return (Arrays.hashCode(tags) * 31 + Arrays.hashCode(perms)) * 31 + Arrays.hashCode(ids);
  }

  /** As {@code getfacl -c -n} shows it, on one line: {@code user::rw-,user:1234:---,...}. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < tags.length; i++) {
      s.append(i == 0 ? "" : ",").append(switch (tags[i]) {
        case USER_OBJ, USER -> "user:";
        case GROUP_OBJ, GROUP -> "group:";
        case MASK -> "mask:";
        default -> "other:";
      });
      if (ids[i] != UNDEFINED_ID) {
        s.append(Integer.toUnsignedString(ids[i]));
      }
      s.append(':').append((perms[i] & READ) != 0 ? 'r' : '-')
          .append((perms[i] & WRITE) != 0 ? 'w' : '-')
          .append((perms[i] & EXECUTE) != 0 ? 'x' : '-');
    }
    return s.toString();
  }
}
