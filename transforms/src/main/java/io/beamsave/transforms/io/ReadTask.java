package io.beamsave.transforms.io;

import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Extent;
import io.beamsave.transforms.image.ShardInfo;
import io.beamsave.transforms.image.ShardReader;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The pieces of one shard that a verify or restore reads, sorted by their offset in the shard. */
public record ReadTask(int shard, ShardInfo info, List<ShardReader.Piece> pieces)
    implements Serializable {

  /** One task per shard that holds any piece of the given files, in shard order. */
  public static List<ReadTask> forEntries(Catalog catalog, Iterable<Entry> entries) {
    Map<Integer, List<ShardReader.Piece>> byShard = new TreeMap<>();
    for (Entry e : entries) {
      long fileOffset = 0;
      for (Extent x : e.extents()) {
        byShard
            .computeIfAbsent(x.shard(), k -> new ArrayList<>())
            .add(new ShardReader.Piece(e.path(), fileOffset, x));
        fileOffset += x.length();
      }
    }
    List<ReadTask> tasks = new ArrayList<>(byShard.size());
    byShard.forEach(
        (shard, pieces) -> {
          pieces.sort(Comparator.comparingLong(p -> p.extent().offset()));
          tasks.add(new ReadTask(shard, catalog.shards().get(shard), pieces));
        });
    return tasks;
  }
}
