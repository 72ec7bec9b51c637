package io.beamsave.testing;

import io.beamsave.transforms.image.catalog.Catalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A library saved whole, changed, and saved again against that image: a chain of two images
 * whose shard layout tests can count on. Shards hold {@link #SHARD} raw bytes; files are text
 * that compresses about twofold, sorted by name into the shards:
 *
 * <pre>
 * base:   s0 a.txt            s1 b.txt      s2 c.txt 4K + d.txt 12K
 *         s3 e.txt            s4 g.txt 12K + h.txt 4K
 * then b.txt, d.txt and h.txt are rewritten, e.txt deleted, f.txt (6K) added
 * newest: s0 b.txt            s1 d.txt 12K + f.txt 4K      s2 f.txt 2K + h.txt 4K
 * </pre>
 *
 * So of the base, s0 is all still needed, s1 and s3 not at all, s2 a quarter (c.txt) and s4
 * three quarters (g.txt); the newest image's shards are needed whole.
 */
public record TestChain(Path library, Path base, Catalog baseCatalog, Path newest,
    Catalog newestCatalog) {
  public static final int SHARD = 16 << 10;

  /**
   * Saves the chain in {@code dir} with {@code codec}, the base with blocks of {@code
   * baseBlockSize} and the newest image with blocks of {@code newestBlockSize}.
   */
  public static TestChain save(Path dir, String codec, int baseBlockSize, int newestBlockSize)
      throws IOException {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    write(lib, "a.txt", 16 << 10, 1);
    write(lib, "b.txt", 16 << 10, 2);
    write(lib, "c.txt", 4 << 10, 3);
    write(lib, "d.txt", 12 << 10, 4);
    write(lib, "e.txt", 16 << 10, 5);
    write(lib, "g.txt", 12 << 10, 6);
    write(lib, "h.txt", 4 << 10, 7);
    Path base = dir.resolve("base.bsave");
    Catalog baseCatalog = TestSaves.save(lib, base, codec, baseBlockSize, SHARD, null);
    write(lib, "b.txt", 16 << 10, 12);
    write(lib, "d.txt", 12 << 10, 14);
    write(lib, "h.txt", 4 << 10, 17);
    Files.delete(lib.resolve("e.txt"));
    write(lib, "f.txt", 6 << 10, 8);
    Path newest = dir.resolve("newest.bsave");
    Catalog newestCatalog = TestSaves.save(lib, newest, codec, newestBlockSize, SHARD, base);
    return new TestChain(lib, base, baseCatalog, newest, newestCatalog);
  }

  /** Text of {@code size} bytes made of words picked with {@code seed}. */
  static void write(Path dir, String name, int size, long seed) throws IOException {
    String[] words = {"shard", "block", "image", "catalog", "extent", "digest", "base",
        "chain", "restore", "verify", "library", "codec"};
    Random r = new Random(seed);
    StringBuilder s = new StringBuilder(size + 16);
    while (s.length() < size) {
      s.append(words[r.nextInt(words.length)]).append(r.nextInt(1000)).append(' ');
    }
    Files.writeString(dir.resolve(name), s.substring(0, size));
  }

  /** The library's files as they are now (what the newest image holds), by name. */
  public Map<String, byte[]> files() throws IOException {
    Map<String, byte[]> m = new TreeMap<>();
    try (var s = Files.list(library)) {
      for (Path f : s.sorted().toList()) {
        m.put(f.getFileName().toString(), Files.readAllBytes(f));
      }
    }
    return m;
  }
}
