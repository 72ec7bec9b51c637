package io.beamsave.pipelines.runner;

import java.util.Locale;

/** Byte sizes for people: parsing {@code 64MiB}, {@code 1M}, {@code 4096} and printing them. */
public final class Sizes {
  private Sizes() {}

  /**
   * Parses a size with an optional unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (all binary,
   * as block sizes usually are), case-insensitive.
   */
  public static long parse(String text) {
    String s = text.trim().toUpperCase(Locale.ROOT);
    int i = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    if (i == 0) {
      throw new IllegalArgumentException("'" + text + "' is not a size such as 64MiB or 1048576");
    }
    long n = Long.parseLong(s.substring(0, i));
    String unit = s.substring(i).trim();
    int shift;
    switch (unit) {
      case "":
      case "B":
        shift = 0;
        break;
      case "K":
      case "KB":
      case "KIB":
        shift = 10;
        break;
      case "M":
      case "MB":
      case "MIB":
        shift = 20;
        break;
      case "G":
      case "GB":
      case "GIB":
        shift = 30;
        break;
      case "T":
      case "TB":
      case "TIB":
        shift = 40;
        break;
      default:
        throw new IllegalArgumentException("'" + text + "' has an unknown unit '" + unit + "'");
    }
    if (n > (Long.MAX_VALUE >> shift)) {
      throw new IllegalArgumentException("'" + text + "' is too large");
    }
    return n << shift;
  }

  /** {@code 1 file}, {@code 2 files}: a count with its noun, {@code one} or {@code many}. */
  public static String count(long n, String one, String many) {
    return n + " " + (n == 1 ? one : many);
  }

  /** {@code 1.4 GiB}, {@code 512 B}. */
  public static String human(long bytes) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
