package io.beamsave.transforms.io;

import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.image.ImageFormat;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one save run does: which libraries go to which images, with which codec, shard and block
 * size, and where the run keeps its working files (the listing). Immutable; every save transform
 * is configured with it.
 */
public final class SaveSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * One library and the image it is saved to; {@code name} keys it through the pipeline. {@code
   * root} is the library directory, as a {@code file:} URI (which keeps every byte of a path that
   * is not UTF-8) or a plain path. With {@code uploadTo} ({@code s3://BUCKET/KEY}), {@code image}
   * is a staging file that is uploaded there once complete, then removed.
   */
  public record Library(String name, String root, String image, String uploadTo)
      implements Serializable {
    /** Where the finished image ends up. */
    public String destination() {
      return uploadTo != null ? uploadTo : image;
    }

    /** The library directory. */
    public java.nio.file.Path rootPath() {
      return root.startsWith("file:")
          ? java.nio.file.Path.of(java.net.URI.create(root))
          : java.nio.file.Path.of(root);
    }
  }

  public static final long DEFAULT_SHARD_SIZE = 64L << 20;
  /** Each worker holds one compressed shard in memory until it is appended to the image. */
  public static final long MAX_SHARD_SIZE = 1L << 30;
  public static final int DEFAULT_BLOCK_SIZE = 1 << 20;

  private final Map<String, Library> libraries;
  private final String codec;
  private final long shardSize;
  private final int blockSize;
  private final String staging;
  private final boolean allowChanging;
  private final S3Settings store;

  private SaveSpec(
      Map<String, Library> libraries,
      String codec,
      long shardSize,
      int blockSize,
      String staging,
      boolean allowChanging,
      S3Settings store) {
    this.libraries = libraries;
    this.codec = codec;
    this.shardSize = shardSize;
    this.blockSize = blockSize;
    this.staging = staging;
    this.allowChanging = allowChanging;
    this.store = store;
  }

  /** A spec with the defaults: zstd:3, 64 MiB shards, 1 MiB blocks, changing files fail. */
  public static SaveSpec of(String staging) {
    return new SaveSpec(
        new LinkedHashMap<>(), "zstd:" + Codecs.DEFAULT_ZSTD_LEVEL, DEFAULT_SHARD_SIZE,
        DEFAULT_BLOCK_SIZE, staging, false, null);
  }

  public SaveSpec withLibrary(String name, String root, String image) {
    return withLibrary(name, root, image, null);
  }

  /** Adds a library whose image is uploaded to {@code uploadTo} once complete (see {@link Library}). */
  public SaveSpec withLibrary(String name, String root, String image, String uploadTo) {
    if (libraries.containsKey(name)) {
      throw new IllegalArgumentException(
          "two libraries are named '" + name + "'; each library needs its own image name");
    }
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, root, image, uploadTo));
    return new SaveSpec(copy, codec, shardSize, blockSize, staging, allowChanging, store);
  }

  /** How to reach object storage for uploads. */
  public SaveSpec withStore(S3Settings settings) {
    return new SaveSpec(libraries, codec, shardSize, blockSize, staging, allowChanging, settings);
  }

  public S3Settings store() {
    return store;
  }

  /** Whether any image goes to object storage. */
  public boolean uploads() {
    return libraries.values().stream().anyMatch(l -> l.uploadTo() != null);
  }

  public SaveSpec withCodec(String spec) {
    String canonical = Codecs.parse(spec).spec();
    return new SaveSpec(libraries, canonical, shardSize, blockSize, staging, allowChanging, store);
  }

  public SaveSpec withShardSize(long bytes) {
    if (bytes < blockSize || bytes > MAX_SHARD_SIZE) {
      throw new IllegalArgumentException(
          "shard size " + bytes + " must be between the block size (" + blockSize + ") and 1 GiB");
    }
    return new SaveSpec(libraries, codec, bytes, blockSize, staging, allowChanging, store);
  }

  public SaveSpec withBlockSize(long bytes) {
    if (bytes < ImageFormat.MIN_BLOCK_SIZE || bytes > ImageFormat.MAX_BLOCK_SIZE) {
      throw new IllegalArgumentException(
          "block size " + bytes + " must be between 4 KiB and 64 MiB");
    }
    if (bytes > shardSize) {
      throw new IllegalArgumentException(
          "block size " + bytes + " is larger than the shard size " + shardSize);
    }
    return new SaveSpec(libraries, codec, shardSize, (int) bytes, staging, allowChanging, store);
  }

  public SaveSpec withAllowChanging(boolean allow) {
    return new SaveSpec(libraries, codec, shardSize, blockSize, staging, allow, store);
  }

  public Map<String, Library> libraries() {
    return java.util.Collections.unmodifiableMap(libraries);
  }

  public Library library(String name) {
    Library lib = libraries.get(name);
    if (lib == null) {
      throw new IllegalStateException("unknown library " + name);
    }
    return lib;
  }

  public String codec() {
    return codec;
  }

  public long shardSize() {
    return shardSize;
  }

  public int blockSize() {
    return blockSize;
  }

  public String staging() {
    return staging;
  }

  public boolean allowChanging() {
    return allowChanging;
  }

  /**
   * Whether staging is an {@code s3://} prefix: the workers share no disk, so shards are staged
   * as objects and each image is assembled in the store (see {@link Staging}).
   */
  public boolean stagesInStore() {
    return staging.startsWith("s3://");
  }

  /** The staged name of the sorted listing of {@code library}, which waits for assembly. */
  public static String listingName(String library) {
    return library + "/listing";
  }

  /** The staged name of one compressed shard (when staging is in the store). */
  public static String shardName(String library, int shard) {
    return String.format(java.util.Locale.ROOT, "%s/shard-%06d", library, shard);
  }

  /** The staged name of the {@link ImageSummary} {@link AssembleImage} leaves for the report. */
  public static String summaryName(String library) {
    return library + ".summary";
  }
}
