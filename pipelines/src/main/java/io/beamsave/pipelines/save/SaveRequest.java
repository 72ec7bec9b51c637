package io.beamsave.pipelines.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.store.S3Settings;
import java.nio.file.Path;
import java.util.List;

/**
 * What a save is asked to do, as the operator said it: what to save, where, how, against which
 * base, for whom, and where its report goes. Checked once, here, for what can be checked
 * without touching a file; {@link Save#run} does the rest. The command line only fills it in.
 *
 * @param libraries the libraries (directories) to save
 * @param image the image's path or {@code s3://} key, with {@code {utc}} and {@code {library}}
 * @param staging where the run keeps its working files, or null for the default
 * @param codec the codec's spec ({@code zstd:3}, {@code auto:100}, a DTACPR name)
 * @param shardSize raw bytes per shard, or null for the default of the image's kind
 * @param blockSize raw bytes per block
 * @param linkMbps the link the image will cross (tunes {@code auto}, throttles uploads); 0: none
 * @param select which files: exclude patterns, caches, {@code --files-from}
 * @param allowChanging keep files that change while read, marked, instead of failing
 * @param skipUnreadable skip what cannot be read, recorded, instead of failing
 * @param base the base image of an incremental save ({@code latest} or a location), or null
 * @param baseOptional save whole a library without a usable base instead of failing
 * @param fullEvery every Nth save of a chain is full; 0: never
 * @param recipients those each image is encrypted for; empty: not encrypted
 * @param keys what opens an encrypted base
 * @param s3 object storage's settings, or null where nothing is in a store
 * @param reportJson where the report also goes as JSON, or null
 * @param metricsFile where the run's figures go in Prometheus' text format, or null
 * @param snapshot the file-system snapshot each library is read from, or null to read it live
 * @param tags what each image is tagged with ({@code save --tag}), for images and prune
 * @param postgres the conninfo of the PostgreSQL server whose data directory the library is,
 *     or null
 * @param hooks the commands run around the save ({@code --before}, {@code --after-snapshot},
 *     {@code --after})
 * @param ledger whether the save goes into the run ledger beside its images (not a comparison's
 *     or the demo's, which are measurements)
 *
 * <p>Made with {@link #builder}. What the operator said wrong in itself (a codec, a size, an
 * option that needs another) is an {@link IllegalArgumentException}, a usage error; what does
 * not fit together once said is a {@link BeamsaveException}.
 */
public record SaveRequest(
    List<Path> libraries,
    String image,
    String staging,
    String codec,
    Long shardSize,
    long blockSize,
    int linkMbps,
    Selection select,
    boolean allowChanging,
    boolean skipUnreadable,
    String base,
    boolean baseOptional,
    int fullEvery,
    List<Recipient> recipients,
    Keys keys,
    S3Settings s3,
    Path reportJson,
    Path metricsFile,
    io.beamsave.pipelines.snapshot.Snapshot.Kind snapshot,
    io.beamsave.pipelines.postgres.Conninfo postgres,
    List<String> tags,
    Hooks.Plan hooks,
    boolean ledger) {

  /**
   * Which files of the libraries are saved.
   *
   * @param excludes the {@code --exclude} patterns, then those of each {@code --exclude-file}
   * @param excludeCaches leave out the contents of directories tagged {@code CACHEDIR.TAG}
   * @param filesFrom the file listing the paths to save ({@code -}: standard input), or null
   * @param from0 the list is separated by NUL bytes, not lines
   * @param oneFileSystem stay on each library root's filesystem ({@code --one-file-system})
   */
  public record Selection(List<String> excludes, boolean excludeCaches, String filesFrom,
      boolean from0, boolean oneFileSystem) {
    public Selection(List<String> excludes, boolean excludeCaches, String filesFrom,
        boolean from0) {
      this(excludes, excludeCaches, filesFrom, from0, false);
    }

    /** Every file: no excludes, no list. */
    public static final Selection ALL = new Selection(List.of(), false, null, false);

    public Selection {
      excludes = List.copyOf(excludes);
      if (filesFrom == null && from0) {
        throw new BeamsaveException("--from0 needs --files-from FILE");
      }
    }
  }

  /** What a tag may hold: a comma separates tags in the image. */
  public static final java.util.regex.Pattern TAG =
      java.util.regex.Pattern.compile("[A-Za-z0-9._:@+-]{1,64}");

  public SaveRequest {
    libraries = List.copyOf(libraries);
    hooks = hooks == null ? Hooks.Plan.NONE : hooks;
    select = select == null ? Selection.ALL : select;
    keys = keys == null ? Keys.NONE : keys;
    recipients = recipients == null ? List.of() : recipients;
    io.beamsave.transforms.codec.Codecs.parse(codec);
    if (blockSize < io.beamsave.transforms.format.ImageFormat.MIN_BLOCK_SIZE
        || blockSize > io.beamsave.transforms.format.ImageFormat.MAX_BLOCK_SIZE) {
      throw new IllegalArgumentException("--block-size "
          + io.beamsave.pipelines.runner.Sizes.human(blockSize) + " must be between 4 KiB and"
          + " 64 MiB");
    }
    if (postgres != null && libraries.size() != 1) {
      throw new IllegalArgumentException(
          "--postgres saves one library, the cluster's data directory");
    }
    if (!hooks.afterSnapshot().isEmpty() && snapshot == null) {
      throw new IllegalArgumentException(
          "--after-snapshot runs once --snapshot has taken the snapshots: give --snapshot too");
    }
    tags = tags == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(tags));
    for (String t : tags) {
      if (!TAG.matcher(t).matches()) {
        throw new BeamsaveException("--tag '" + io.beamsave.transforms.Printable.text(t)
            + "': a tag is 1 to 64 of A-Z a-z 0-9 . _ : @ + -");
      }
    }
    recipients = List.copyOf(recipients);
    if (libraries.isEmpty()) {
      throw new BeamsaveException("no library given: use --library DIR");
    }
    if (base == null && (baseOptional || fullEvery != 0)) {
      throw new BeamsaveException((baseOptional ? "--base-optional" : "--full-every")
          + " needs --base IMAGE|latest");
    }
    if (fullEvery < 0) {
      throw new BeamsaveException("--full-every " + fullEvery + ": give 0 (never) or more");
    }
  }

  /** Whether each image is encrypted. */
  public boolean encrypted() {
    return !recipients.isEmpty();
  }

  /** A request to save {@code libraries} into {@code image}, with every other choice left. */
  public static Builder builder(List<Path> libraries, String image) {
    return new Builder(libraries, image);
  }

  /** Fills in a {@link SaveRequest}: the defaults are those of the command line. */
  public static final class Builder {
    private final List<Path> libraries;
    private final String image;
    private String staging;
    private String codec = "zstd:3";
    private Long shardSize;
    private long blockSize = io.beamsave.transforms.save.SaveSpec.DEFAULT_BLOCK_SIZE;
    private int linkMbps;
    private Selection select = Selection.ALL;
    private boolean allowChanging;
    private boolean skipUnreadable;
    private String base;
    private boolean baseOptional;
    private int fullEvery;
    private List<Recipient> recipients = List.of();
    private Keys keys = Keys.NONE;
    private S3Settings s3;
    private Path reportJson;
    private Path metricsFile;
    private io.beamsave.pipelines.snapshot.Snapshot.Kind snapshot;
    private io.beamsave.pipelines.postgres.Conninfo postgres;
    private List<String> tags = List.of();
    private Hooks.Plan hooks = Hooks.Plan.NONE;
    private boolean ledger = true;

    private Builder(List<Path> libraries, String image) {
      this.libraries = libraries;
      this.image = image;
    }

    public Builder staging(String s) {
      staging = s;
      return this;
    }

    public Builder codec(String spec) {
      codec = spec;
      return this;
    }

    /** Raw bytes per shard, and per block; null shard size: the default of the image's kind. */
    public Builder sizes(Long shard, long block) {
      shardSize = shard;
      blockSize = block;
      return this;
    }

    public Builder linkMbps(int mbps) {
      linkMbps = mbps;
      return this;
    }

    public Builder select(Selection s) {
      select = s;
      return this;
    }

    public Builder allowChanging(boolean on) {
      allowChanging = on;
      return this;
    }

    public Builder skipUnreadable(boolean on) {
      skipUnreadable = on;
      return this;
    }

    /** The base of an incremental save, whether it may be missing, and every how many full. */
    public Builder base(String image, boolean optional, int everyFull) {
      base = image;
      baseOptional = optional;
      fullEvery = everyFull;
      return this;
    }

    /** Whom the images are for, and what opens an encrypted base. */
    public Builder encryption(List<Recipient> forWhom, Keys opening) {
      recipients = forWhom;
      keys = opening;
      return this;
    }

    public Builder s3(S3Settings settings) {
      s3 = settings;
      return this;
    }

    /** Where the report goes as JSON, and the figures for Prometheus; null: nowhere. */
    public Builder reports(Path json, Path metrics) {
      reportJson = json;
      metricsFile = metrics;
      return this;
    }

    public Builder snapshot(io.beamsave.pipelines.snapshot.Snapshot.Kind kind) {
      snapshot = kind;
      return this;
    }

    public Builder postgres(io.beamsave.pipelines.postgres.Conninfo server) {
      postgres = server;
      return this;
    }

    public Builder tags(List<String> t) {
      tags = t;
      return this;
    }

    public Builder hooks(Hooks.Plan plan) {
      hooks = plan;
      return this;
    }

    /** Whether the save goes into the run ledger (it does unless told). */
    public Builder ledger(boolean on) {
      ledger = on;
      return this;
    }

    public SaveRequest build() {
      return new SaveRequest(libraries, image, staging, codec, shardSize, blockSize, linkMbps,
          select, allowChanging, skipUnreadable, base, baseOptional, fullEvery, recipients, keys,
          s3, reportJson, metricsFile, snapshot, postgres, tags, hooks, ledger);
    }
  }
}
