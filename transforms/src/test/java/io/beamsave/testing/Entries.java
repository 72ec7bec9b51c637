package io.beamsave.testing;

import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.util.List;

/** Catalog entries for tests, with plain metadata unless a test cares. */
public final class Entries {
  private Entries() {}

  public static final byte[] DIGEST = new byte[8];

  public static Entry file(String path, long size, Extent... extents) {
    return file(PathBytes.of(path), size, extents);
  }

  public static Entry file(PathBytes path, long size, Extent... extents) {
    return new Entry(path, EntryType.FILE, 0, 0644, 0, 0, 5, 6, 7, 8, 9, size, null,
        List.of(extents));
  }

  public static Entry dir(String path) {
    return new Entry(PathBytes.of(path), EntryType.DIRECTORY, 0, 0755, 0, 0, 5, 6, 7, 8, 9, 0,
        null, List.of());
  }

  public static Entry link(String path, String target) {
    return new Entry(PathBytes.of(path), EntryType.SYMLINK, 0, 0777, 0, 0, 5, 6, 7, 8, 9, 0,
        PathBytes.of(target), List.of());
  }

  /** The library root of a test catalog. */
  public static Entry root() {
    return new Entry(PathBytes.of(""), EntryType.DIRECTORY, 0, 0755, 0, 0, 1, 2, 3, 4, 5, 0,
        null, List.of());
  }

  public static Catalog catalog(String codec, int blockSize, List<Entry> entries,
      List<ShardInfo> shards) {
    return new Catalog("lib", codec, 1, blockSize, 1 << 20, root(), entries, shards);
  }

  /** The paths of {@code entries}, printable. */
  public static List<String> paths(List<Entry> entries) {
    return entries.stream().map(e -> e.path().toString()).toList();
  }
}
