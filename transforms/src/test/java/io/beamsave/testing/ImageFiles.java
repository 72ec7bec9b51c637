package io.beamsave.testing;

import io.beamsave.transforms.image.FileImageSource;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The files a self-contained image holds, read back with the shard reader (every block checksum
 * and extent digest checked): what a test compares with the library it saved.
 */
public final class ImageFiles {
  private ImageFiles() {}

  /** Each file's bytes by its path; fails on a file with bytes in another image. */
  public static Map<String, byte[]> read(Path image) throws IOException {
    Catalog c = ImageReader.readCatalog(image);
    Map<String, byte[]> files = new TreeMap<>();
    Map<Integer, List<ShardReader.FileExtent>> byShard = new TreeMap<>();
    for (Entry e : c.entries()) {
      if (!e.isFile()) {
        continue;
      }
      files.put(e.path().toString(), new byte[Math.toIntExact(e.size())]);
      long at = 0;
      for (Extent x : e.extents()) {
        if (x.isReference()) {
          throw new IllegalArgumentException(image + ": " + e.path() + " has bytes in base "
              + x.image());
        }
        byShard.computeIfAbsent(x.shard(), k -> new ArrayList<>())
            .add(new ShardReader.FileExtent(e.path(), at, x, 0));
        at += x.length();
      }
    }
    try (FileImageSource src = FileImageSource.open(image);
        ShardReader reader = new ShardReader(c.blockSize())) {
      for (Map.Entry<Integer, List<ShardReader.FileExtent>> s : byShard.entrySet()) {
        List<ShardReader.FileExtent> pieces = s.getValue();
        pieces.sort(java.util.Comparator.comparingLong(p -> p.extent().offset()));
        reader.read(src, image.toString(), s.getKey(), c.shards().get(s.getKey()), pieces,
            (piece, fileOffset, buf, off, len, zero) -> System.arraycopy(buf, off,
                files.get(piece.path().toString()), (int) fileOffset, len));
      }
    }
    return files;
  }
}
