package io.beamsave.transforms.fs;

import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import jnr.constants.platform.Errno;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * Names of users and groups and back, as this host's C library knows them ({@code /etc/passwd},
 * or LDAP and the like through NSS): {@code getpwuid_r} and friends. Answers are kept for the
 * life of the JVM, so a walk of millions of files asks once per owner. Thread-safe.
 */
public final class Accounts {
  private Accounts() {}

  private static final ConcurrentHashMap<Integer, Optional<byte[]>> USERS =
      new ConcurrentHashMap<>();
  private static final ConcurrentHashMap<Integer, Optional<byte[]>> GROUPS =
      new ConcurrentHashMap<>();
  private static final ConcurrentHashMap<String, Optional<Integer>> UIDS =
      new ConcurrentHashMap<>();
  private static final ConcurrentHashMap<String, Optional<Integer>> GIDS =
      new ConcurrentHashMap<>();

  /** Offsets in {@code struct passwd} and {@code struct group} (64-bit Linux). */
  private static final int NAME = 0;
  private static final int ID = 16;

  /** The name of user {@code uid}, or null where this host has none. */
  public static byte[] userName(int uid) {
    return USERS.computeIfAbsent(uid, u -> Optional.ofNullable(lookup(true, u, null, null)))
        .orElse(null);
  }

  /** The name of group {@code gid}, or null. */
  public static byte[] groupName(int gid) {
    return GROUPS.computeIfAbsent(gid, g -> Optional.ofNullable(lookup(false, g, null, null)))
        .orElse(null);
  }

  /** The uid of the user named {@code name} on this host, or null. */
  public static Integer uid(byte[] name) {
    return UIDS.computeIfAbsent(key(name), k -> Optional.ofNullable(id(true, name)))
        .orElse(null);
  }

  /** The gid of the group named {@code name} on this host, or null. */
  public static Integer gid(byte[] name) {
    return GIDS.computeIfAbsent(key(name), k -> Optional.ofNullable(id(false, name)))
        .orElse(null);
  }

  private static String key(byte[] name) {
    return new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  private static Integer id(boolean user, byte[] name) {
    Pointer[] found = new Pointer[1];
    lookup(user, 0, Posix.cString(name), found);
    return found[0] == null ? null : found[0].getInt(ID);
  }

  /**
   * Looks up {@code id}, or {@code name} when given (then the record is left in {@code
   * found[0]}); returns the record's name.
   */
  private static byte[] lookup(boolean user, int id, byte[] name, Pointer[] found) {
    jnr.ffi.Runtime rt = Posix.runtime();
    Pointer record = Memory.allocateDirect(rt, 64);
    Pointer result = Memory.allocateDirect(rt, 8);
    for (int size = 4096; size <= 1 << 20; size *= 4) {
      Pointer buf = Memory.allocateDirect(rt, size);
      int rc;
      if (name == null) {
        rc = user ? Posix.c().getpwuid_r(id, record, buf, size, result)
            : Posix.c().getgrgid_r(id, record, buf, size, result);
      } else {
        rc = user ? Posix.c().getpwnam_r(name, record, buf, size, result)
            : Posix.c().getgrnam_r(name, record, buf, size, result);
      }
      if (rc == Errno.ERANGE.intValue()) {
        continue;
      }
      if (rc != 0 || result.getPointer(0) == null) {
        return null;
      }
      if (found != null) {
        found[0] = record;
      }
      return cString(record.getPointer(NAME));
    }
    return null;
  }

  private static byte[] cString(Pointer p) {
    if (p == null) {
      return null;
    }
    byte[] out = new byte[64];
    int n = 0;
    for (byte b; (b = p.getByte(n)) != 0; n++) {
      if (n == out.length) {
        out = Arrays.copyOf(out, n * 2);
      }
      out[n] = b;
      if (n > 4096) {
        return null;
      }
    }
    return n == 0 ? null : Arrays.copyOf(out, n);
  }
}
