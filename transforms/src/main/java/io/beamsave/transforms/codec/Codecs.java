package io.beamsave.transforms.codec;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The codec registry: parses specs ({@code none}, {@code lz4}, {@code zlib[:1-9]}, {@code
 * zstd[:1-22]}, {@code xz[:0-9]}, {@code auto[:LINK_MBPS]}) and the IBM i {@code SAVLIB DTACPR} names, and finds the
 * decompressor for a block's {@link CodecId}.
 */
public final class Codecs {
  public static final int DEFAULT_ZLIB_LEVEL = 6;
  public static final int DEFAULT_ZSTD_LEVEL = 3;
  public static final int DEFAULT_XZ_PRESET = 6;

  /**
   * IBM i DTACPR values and the codec each stands for. *LOW and *MEDIUM name IBM's own
   * SNA-style and TERSE algorithms; the closest we have are the fastest codec (lz4) and the
   * balanced one (zstd:3). *HIGH is the strongest (xz:6), *ZLIB is zlib at its default level.
   */
  private static final Map<String, String> DTACPR = dtacpr(
      "*NO", "none", "*LOW", "lz4", "*MEDIUM", "zstd:3", "*HIGH", "xz:6", "*ZLIB", "zlib:6");

  /** The pairs, in the order given (documentation order), unmodifiable. */
  private static Map<String, String> dtacpr(String... pairs) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      m.put(pairs[i], pairs[i + 1]);
    }
    return java.util.Collections.unmodifiableMap(m);
  }

  private static final String EXPECTED =
      "expected none, lz4, zlib[:1-9], zstd[:1-22], xz[:0-9], auto[:LINK_MBPS] or one of " + DTACPR.keySet();

  private Codecs() {}

  /** The IBM i DTACPR names, in documentation order, with the spec each maps to. */
  public static Map<String, String> dtacprAliases() {
    return DTACPR;
  }

  /**
   * Parses a codec spec or DTACPR name, case-insensitively.
   *
   * @throws IllegalArgumentException naming the spec and the accepted forms
   */
  public static Codec parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException("empty codec: " + EXPECTED);
    }
    String s = spec.trim().toLowerCase(Locale.ROOT);
    String alias = DTACPR.get(s.toUpperCase(Locale.ROOT));
    if (alias != null) {
      s = alias;
    }
    int colon = s.indexOf(':');
    String name = colon < 0 ? s : s.substring(0, colon);
    String level = colon < 0 ? null : s.substring(colon + 1);
    switch (name) {
      case "none":
        noLevel(spec, level);
        return NoneCodec.INSTANCE;
      case "lz4":
        noLevel(spec, level);
        return new Lz4Codec();
      case "zlib":
        return new ZlibCodec(level(spec, level, DEFAULT_ZLIB_LEVEL, 1, 9));
      case "zstd":
        return new ZstdCodec(level(spec, level, DEFAULT_ZSTD_LEVEL, 1, 22));
      case "xz":
        return new XzCodec(level(spec, level, DEFAULT_XZ_PRESET, 0, 9));
      case "auto":
        return new AutoCodec(level(spec, level, 0, 1, 1_000_000));
      default:
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("(zlib|zstd|xz|auto)([0-9]+)").matcher(s);
        throw new IllegalArgumentException("unknown codec '" + spec + "'"
            + (m.matches() ? " (did you mean '" + m.group(1) + ":" + m.group(2) + "'?)" : "")
            + ": " + EXPECTED);
    }
  }

  /**
   * {@code auto} tuned to a link of {@code linkMbps} ({@code auto:N}) unless its spec names one
   * or there is no link (0); any other spec unchanged.
   */
  public static String forLink(String spec, int linkMbps) {
    return linkMbps > 0 && spec.trim().equalsIgnoreCase("auto") ? "auto:" + linkMbps : spec;
  }

  /** Whether {@code spec} is the adaptive codec, tuned to a link or not. */
  public static boolean isAuto(String spec) {
    return parse(spec) instanceof AutoCodec;
  }

  /** Creates decompressors on demand, one per codec id; not thread-safe. */
  public static final class DecompressorSet implements AutoCloseable {
    private final Map<CodecId, Decompressor> byId = new EnumMap<>(CodecId.class);

    /** Returns the decompressor for {@code id}; STORED and ZERO blocks need none. */
    public Decompressor get(CodecId id) {
      return byId.computeIfAbsent(id, Codecs::newDecompressor);
    }

    @Override
    public void close() {
      byId.values().forEach(Decompressor::close);
      byId.clear();
    }
  }

  private static Decompressor newDecompressor(CodecId id) {
    switch (id) {
      case STORED:
        return NoneCodec.INSTANCE.newDecompressor();
      case LZ4:
        return new Lz4Codec().newDecompressor();
      case ZLIB:
        return new ZlibCodec(DEFAULT_ZLIB_LEVEL).newDecompressor();
      case ZSTD:
        return new ZstdCodec(DEFAULT_ZSTD_LEVEL).newDecompressor();
      case XZ:
        return new XzCodec(DEFAULT_XZ_PRESET).newDecompressor();
      default:
        throw new IllegalArgumentException("codec " + id + " has no decompressor");
    }
  }

  private static void noLevel(String spec, String level) {
    if (level != null) {
      throw new IllegalArgumentException("codec '" + spec + "' takes no level: " + EXPECTED);
    }
  }

  private static int level(String spec, String level, int dflt, int min, int max) {
    if (level == null) {
      return dflt;
    }
    int n;
    try {
      n = Integer.parseInt(level);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("codec '" + spec + "' has a bad level: " + EXPECTED);
    }
    if (n < min || n > max) {
      throw new IllegalArgumentException(
          "codec '" + spec + "' level " + n + " is outside " + min + "-" + max);
    }
    return n;
  }
}
