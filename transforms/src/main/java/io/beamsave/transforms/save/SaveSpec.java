package io.beamsave.transforms.save;

import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one save run does: which libraries go to which images (each through the {@link
 * ImageSink} chosen for it when the save was planned), with which codec, shard and block size,
 * and where the run keeps its working files (each library's listing and summary). Immutable;
 * every save transform is configured with it. The defaults live here.
 */
public final class SaveSpec implements Serializable {
  private static final long serialVersionUID = 9L;

  /**
   * One library and where its image goes; {@code name} keys it through the pipeline. {@code
   * root} is the library directory, as a {@code file:} URI (which keeps every byte of a path that
   * is not UTF-8) or a plain path. {@code base}, when set, is the image an incremental save
   * references unchanged files in, {@code baseKey} its key if it is encrypted, and {@code
   * baseTag} what told it apart when it was read ({@link
   * io.beamsave.transforms.image.ImageSource#tag}; empty if unknown), checked again before the
   * image is made. {@code readFrom}, when not null, is where the library is read: a snapshot
   * of it, as a {@code file:} URI; {@code notes} go into its image's catalog ({@link
   * io.beamsave.transforms.image.catalog.Notes}), such as which snapshot that was.
   */
  public record Library(String name, String root, ImageSink sink, Catalog.Base base,
      ImageKey baseKey, String baseTag, String readFrom, Map<String, String> notes,
      String lateFrom)
      implements Serializable {
    /** A library saved whole (no base image). */
    public Library(String name, String root, ImageSink sink) {
      this(name, root, sink, null, null, "", null, Map.of(), null);
    }

    /** Where the library's files are read: the library, or the snapshot of it. */
    public java.nio.file.Path readPath() {
      return readFrom == null ? rootPath() : java.nio.file.Path.of(java.net.URI.create(readFrom));
    }

    /** Where the finished image ends up. */
    public String destination() {
      return sink.location();
    }

    /** The library directory. */
    public java.nio.file.Path rootPath() {
      return root.startsWith("file:")
          ? java.nio.file.Path.of(java.net.URI.create(root))
          : java.nio.file.Path.of(root);
    }
  }

  public static final long DEFAULT_SHARD_SIZE = 64L << 20;
  /**
   * Shards of an image in object storage are smaller: each is sent the moment it is
   * compressed, so smaller ones reach the link sooner. At 24 MiB most compress to at least 5
   * MiB and go straight into the image's upload as parts (smaller ones are staged and sent
   * again at the end), and an incompressible one stays one request within what stores cap
   * (S3Proxy at 32 MiB).
   */
  public static final long DEFAULT_OBJECT_SHARD_SIZE = 24L << 20;
  /** Each worker holds one compressed shard in memory until the sink has it. */
  public static final long MAX_SHARD_SIZE = 1L << 30;
  public static final int DEFAULT_BLOCK_SIZE = 1 << 20;
  public static final Codec DEFAULT_CODEC = Codecs.parse("zstd:" + Codecs.DEFAULT_ZSTD_LEVEL);

  private final Map<String, Library> libraries;
  private final Codec codec;
  private final ShardSizes sizes;
  private final String staging;
  private final boolean allowChanging;
  private final S3Settings s3;
  private final Excludes excludes;
  private final boolean skipUnreadable;
  /** Per library name, what {@code --files-from} selects; a library absent is saved whole. */
  private final Map<String, FilesFrom> filesFrom;
  /**
   * When the run began, which its images record as their creation time (the {@code {utc}} of
   * their names, to the second); 0 for when each image is assembled.
   */
  private final long startedMillis;

  private SaveSpec(
      Map<String, Library> libraries,
      Codec codec,
      ShardSizes sizes,
      String staging,
      boolean allowChanging,
      S3Settings s3,
      Excludes excludes,
      boolean skipUnreadable,
      Map<String, FilesFrom> filesFrom,
      long startedMillis) {
    this.startedMillis = startedMillis;
    this.libraries = libraries;
    this.codec = codec;
    this.sizes = sizes;
    this.staging = staging;
    this.allowChanging = allowChanging;
    this.s3 = s3;
    this.excludes = excludes;
    this.skipUnreadable = skipUnreadable;
    this.filesFrom = filesFrom;
  }

  /**
   * A spec with the defaults (zstd:3, 64 MiB shards, 1 MiB blocks, changing files fail) whose
   * working files go to {@code staging}: a directory every worker reaches, or an {@code s3://}
   * prefix.
   */
  public static SaveSpec of(String staging) {
    return new SaveSpec(new LinkedHashMap<>(), DEFAULT_CODEC,
        ShardSizes.of(DEFAULT_SHARD_SIZE, DEFAULT_BLOCK_SIZE), staging, false, null, Excludes.NONE,
        false, Map.of(), 0);
  }

  /** Adds a library whose image goes to {@code sink}. */
  public SaveSpec withLibrary(String name, String root, ImageSink sink) {
    if (libraries.containsKey(name)) {
      throw new IllegalArgumentException(
          "two libraries are named '" + name + "'; each library needs its own image name");
    }
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, root, sink));
    return new SaveSpec(copy, codec, sizes, staging, allowChanging, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
  }

  /** The same save with library {@code name}'s image going to {@code sink} instead. */
  public SaveSpec withSink(String name, ImageSink sink) {
    Library lib = library(name);
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, lib.root(), sink, lib.base(), lib.baseKey(),
        lib.baseTag(), lib.readFrom(), lib.notes(), lib.lateFrom()));
    return new SaveSpec(copy, codec, sizes, staging, allowChanging, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
  }

  /** The same save with library {@code name} saved incrementally against {@code base}. */
  public SaveSpec withBase(String name, Catalog.Base base) {
    return withBase(name, base, null);
  }

  /** Like {@link #withBase(String, Catalog.Base)}, the base encrypted with {@code baseKey}. */
  public SaveSpec withBase(String name, Catalog.Base base, ImageKey baseKey) {
    return withBase(name, base, baseKey, "");
  }

  /** Like {@link #withBase(String, Catalog.Base, ImageKey)}, the base known by {@code tag}. */
  public SaveSpec withBase(String name, Catalog.Base base, ImageKey baseKey, String tag) {
    Library lib = library(name);
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, lib.root(), lib.sink(), base, baseKey, tag, lib.readFrom(),
        lib.notes(), lib.lateFrom()));
    return new SaveSpec(copy, codec, sizes, staging, allowChanging, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
  }

  /** The same save with {@code notes} for library {@code name}'s image. */
  public SaveSpec withNotes(String name, Map<String, String> notes) {
    return withReadFrom(name, library(name).readFrom(), notes);
  }

  /**
   * The same save with library {@code name} read from {@code readFrom} (a snapshot of it, a
   * {@code file:} URI) and {@code notes} in its image.
   */
  public SaveSpec withReadFrom(String name, String readFrom, Map<String, String> notes) {
    Library lib = library(name);
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, lib.root(), lib.sink(), lib.base(), lib.baseKey(),
        lib.baseTag(), readFrom, io.beamsave.transforms.image.catalog.Notes.check(notes),
        lib.lateFrom()));
    return new SaveSpec(copy, codec, sizes, staging, allowChanging, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
  }

  /**
   * The same save with library {@code name}'s image also holding the files {@code from} (what
   * supplies them, for messages) hands over once every other file of it is read: see {@link
   * LateFiles}.
   */
  public SaveSpec withLateFiles(String name, String from) {
    Library lib = library(name);
    Map<String, Library> copy = new LinkedHashMap<>(libraries);
    copy.put(name, new Library(name, lib.root(), lib.sink(), lib.base(), lib.baseKey(),
        lib.baseTag(), lib.readFrom(), lib.notes(), from));
    return new SaveSpec(copy, codec, sizes, staging, allowChanging, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
  }

  /** How to reach object storage, for staging or images there. */
  public SaveSpec withS3(S3Settings s3) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes,
        skipUnreadable, filesFrom, startedMillis);
  }

  public S3Settings s3() {
    return s3;
  }

  /** {@code spec} as {@link Codecs#parse} reads it. */
  public SaveSpec withCodec(String spec) {
    return withCodec(Codecs.parse(spec));
  }

  public SaveSpec withCodec(Codec codec) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes,
        skipUnreadable, filesFrom, startedMillis);
  }

  public SaveSpec withShardSize(long bytes) {
    return withSizes(bytes, sizes.blockSize());
  }

  public SaveSpec withBlockSize(long bytes) {
    return withSizes(sizes.shardSize(), bytes);
  }

  /** Both sizes at once, checked together, so the order they are given in does not matter. */
  public SaveSpec withSizes(long shard, long block) {
    return new SaveSpec(libraries, codec, sizes.withSizes(shard, block), staging, allowChanging,
        s3, excludes, skipUnreadable, filesFrom, startedMillis);
  }

  /** What the walk leaves out of every library. */
  public SaveSpec withExcludes(Excludes excludes) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes,
        skipUnreadable, filesFrom, startedMillis);
  }

  public Excludes excludes() {
    return excludes;
  }

  /**
   * Whether an entry the save cannot read (a file it may not open or that fails to read, a
   * directory it may not list) is skipped, flagged {@link
   * io.beamsave.transforms.image.catalog.Entry#FLAG_UNREADABLE} and reported, instead of failing
   * the save.
   */
  public SaveSpec withSkipUnreadable(boolean skip) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes, skip,
        filesFrom, startedMillis);
  }

  public boolean skipUnreadable() {
    return skipUnreadable;
  }

  /** Saves only what {@code selection} lists of each library it names (see {@link FilesFrom}). */
  public SaveSpec withFilesFrom(Map<String, FilesFrom> selection) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes,
        skipUnreadable, Map.copyOf(selection), startedMillis);
  }

  /** What {@code --files-from} selects of library {@code name}, or null to save it whole. */
  public FilesFrom filesFrom(String name) {
    FilesFrom f = filesFrom.get(name);
    return f == null || f.all() ? null : f;
  }

  /** The same save, its images recording {@code millis} as when they were made. */
  public SaveSpec withStartedMillis(long millis) {
    return new SaveSpec(libraries, codec, sizes, staging, allowChanging, s3, excludes,
        skipUnreadable, filesFrom, millis);
  }

  /** When the run began, as its images record it; 0 for when each is assembled. */
  public long startedMillis() {
    return startedMillis;
  }

  public SaveSpec withAllowChanging(boolean allow) {
    return new SaveSpec(libraries, codec, sizes, staging, allow, s3, excludes, skipUnreadable,
        filesFrom, startedMillis);
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

  public Codec codec() {
    return codec;
  }

  /** The largest shard: what --shard-size gives, or the default. */
  public long shardSize() {
    return sizes.shardSize();
  }

  /**
   * The shard size of a library of {@code rawBytes} to store: {@link #shardSize()}, or, when
   * the save is spread over several workers, a size that gives every worker as many shards.
   * Planning, assembly and the catalog all take it from here.
   */
  public long shardSize(long rawBytes) {
    return sizes.forLibrary(rawBytes);
  }

  /**
   * The same save with each library's shards sized by {@link #shardSize(long)} for {@code
   * workers} workers (1: every shard but the last is {@link #shardSize()}).
   */
  public SaveSpec withSpreadOver(int workers) {
    return new SaveSpec(libraries, codec, sizes.spreadOver(workers), staging, allowChanging, s3,
        excludes, skipUnreadable, filesFrom, startedMillis);
  }

  public int blockSize() {
    return sizes.blockSize();
  }

  public String staging() {
    return staging;
  }

  public boolean allowChanging() {
    return allowChanging;
  }

  /** The store that holds the run's working files. */
  public Store stagingStore() {
    return Location.of(staging).directory(s3);
  }
}
