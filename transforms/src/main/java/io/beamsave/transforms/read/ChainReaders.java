package io.beamsave.transforms.read;

import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a worker reading the shards of a chain's images holds on to: a source per image, opened
 * when first read, and a shard reader per block size (the images of a chain need not share
 * one). One per worker thread; closed at teardown.
 */
public final class ChainReaders implements AutoCloseable {
  private final S3Settings s3;
  private final Map<String, String> tags;
  private final UnaryOperator<ImageSource> wrap;
  private final Map<Integer, ShardReader> readers = new HashMap<>();
  private final Map<String, ImageSource> sources = new HashMap<>();

  /**
   * Images are opened expecting their {@code tags} (by location: as the driver saw them), and
   * {@code wrap} is given each source as it is opened (to count what is read, say).
   */
  public ChainReaders(S3Settings s3, Map<String, String> tags, UnaryOperator<ImageSource> wrap) {
    this.s3 = s3;
    this.tags = tags;
    this.wrap = wrap;
  }

  public ImageSource source(String image) throws IOException {
    ImageSource s = sources.get(image);
    if (s == null) {
      s = wrap.apply(ImageSources.open(image, s3, tags.getOrDefault(image, "")));
      sources.put(image, s);
    }
    return s;
  }

  public ShardReader reader(int blockSize) {
    return readers.computeIfAbsent(blockSize, ShardReader::new);
  }

  @Override
  public void close() throws IOException {
    for (ShardReader r : readers.values()) {
      r.close();
    }
    for (ImageSource s : sources.values()) {
      s.close();
    }
  }
}
