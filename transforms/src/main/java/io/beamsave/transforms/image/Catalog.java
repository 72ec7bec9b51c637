package io.beamsave.transforms.image;

import java.util.List;

/**
 * The table of contents of an image: what was saved, how, and where each piece lies. {@code
 * root} is the library directory itself (empty path), or {@code null} in a version 1 image,
 * which did not record it.
 */
public record Catalog(
    String library,
    String codecSpec,
    long createdMillis,
    int blockSize,
    long shardSize,
    Entry root,
    List<Entry> entries,
    List<ShardInfo> shards) {

  public long rawBytes() {
    long n = 0;
    for (Entry e : entries) {
      n += e.isFile() ? e.size() : 0;
    }
    return n;
  }

  public long fileCount() {
    return entries.stream().filter(Entry::isFile).count();
  }
}
