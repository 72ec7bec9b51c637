package io.beamsave.pipelines.save;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.JobResult;
import io.beamsave.pipelines.runs.ImageLock;
import io.beamsave.pipelines.runs.Leases;
import io.beamsave.pipelines.runs.RunLease;
import io.beamsave.pipelines.runs.RunNames;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.AssembleImage;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.PlanShards;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.save.Staging;
import io.beamsave.transforms.sink.FileImageSink;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Stores;
import io.beamsave.transforms.transfer.ImageUpload;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * Saves libraries into images: {@code ListLibrary → PlanShards → Reshuffle → CompressShard →
 * AssembleImage}, each image through the {@link io.beamsave.transforms.sink.ImageSink} that
 * {@link #spec} chose for it. {@link #build} only constructs the pipeline (tests and the
 * command line share it); {@link #run} also owns the staging and guarantees that a failed run
 * leaves no unfinished image or staging behind.
 */
public final class SavePipeline {
  private SavePipeline() {}

  static final String PLAN_STEP = "PlanShards";
  static final String COMPRESS_STEP = "CompressShard";

  /**
   * Bytes read against the bytes planned; on Flink, shards compressed against shards planned,
   * with the bytes from the plan's listings in staging.
   */
  static Job.Progress progress(SaveSpec spec) {
    return new Job.Progress(
        "saved", StageMetrics.BYTES_READ, StageMetrics.BYTES_PLANNED, 0, COMPRESS_STEP,
        PLAN_STEP, 0, () -> PlanShards.plannedBytes(spec));
  }

  /** Adds the save to {@code p}; returns (library, image location) per library. */
  public static PCollection<KV<String, String>> build(Pipeline p, SaveSpec spec) {
    return build(p, spec, null);
  }

  /**
   * Like {@link #build(Pipeline, SaveSpec)}, with the libraries' listings taken from {@code
   * walked} (if not null), a walk begun in this JVM for a runner that runs here.
   */
  public static PCollection<KV<String, String>> build(
      Pipeline p, SaveSpec spec, ListLibrary.WalkedAhead walked) {
    ListLibrary list = ListLibrary.of(spec);
    return p.apply("ListLibrary", walked == null ? list : list.withWalkedAhead(walked))
        .apply(PLAN_STEP, PlanShards.of(spec))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply(COMPRESS_STEP, CompressShards.of(spec))
        .apply("AssembleImage", AssembleImage.of(spec));
  }

  /**
   * Like {@link #spec(List, Path, Path)}, but {@code image} may be {@code s3://BUCKET/KEY} (a
   * prefix with several libraries), and {@code staging} an {@code s3://} prefix. This is where
   * each image's sink is chosen, once: a {@link FileImageSink} for a path, a {@link
   * StoreImageSink} for {@code s3://}, whose shards are staged as objects beside the image (or
   * under an {@code s3://} {@code --staging} in its bucket) and sent as {@code upload} says.
   * The run's own working files go to local staging (default: the system's temporary
   * directory) when the workers run in this JVM, else, unless {@code --staging} says otherwise,
   * to a prefix beside the image, so workers on several machines need share no disk.
   */
  public static SaveSpec spec(
      List<Path> libraries, String image, String staging, S3Settings s3, boolean runsInThisJvm,
      ImageUpload.Options upload) {
    boolean stagingInStore = staging != null && ObjectUri.isObject(staging);
    if (!ObjectUri.isObject(image)) {
      if (stagingInStore) {
        throw new BeamsaveException("--staging " + staging + " needs an s3:// --image");
      }
      return spec(libraries, Path.of(image), staging == null ? null : Path.of(staging))
          .withStore(s3);
    }
    if (libraries.isEmpty()) {
      throw new BeamsaveException("no library given: use --library DIR");
    }
    image = image.replace(UTC, utcStamp());
    boolean perLibrary = image.contains(LIBRARY);
    ObjectUri to = ObjectUri.parse(image.replace(LIBRARY, "x"), libraries.size() > 1 && !perLibrary);
    List<Path> roots = libraries.stream().map(SavePipeline::checkLibrary).toList();
    List<String> names = libraries.stream().map(SavePipeline::libraryName).toList();
    Stores.bucketOf(to, s3).check(to.key());
    String run = runId();
    ObjectUri shardRoot = null;
    String stagingRoot;
    if (stagingInStore) {
      shardRoot = ObjectUri.parse(staging, true).child(STAGING_PREFIX + run + "/");
      stagingRoot = shardRoot.toString();
    } else if (staging == null && !runsInThisJvm) {
      stagingRoot = to.parent().child(STAGING_PREFIX + run + "/").toString();
    } else {
      Path base = staging != null ? Path.of(staging) : Path.of(System.getProperty("java.io.tmpdir"));
      stagingRoot = base.resolve(STAGING_PREFIX + run).toAbsolutePath().toString();
    }
    SaveSpec spec = SaveSpec.of(stagingRoot).withStore(s3);
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      ObjectUri target =
          perLibrary ? ObjectUri.parse(image.replace(LIBRARY, name), false)
              : roots.size() > 1 ? to.child(name + ImageFormat.EXTENSION) : to;
      ObjectUri shards = (shardRoot != null ? shardRoot
          : target.parent().child(STAGING_PREFIX + run + "/")).child(name + "/shards/");
      try {
        spec = spec.withLibrary(name, root.toUri().toString(), new StoreImageSink(target, shards,
            s3, upload.linkMbps(), upload.parallelParts()));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    // run() creates a local staging directory, with its lock.
    return spec;
  }

  /**
   * A library's name: the name of the directory as the operator gave it (a symlink's own name,
   * not its target's), printable ({@code \xNN} for bytes that are not UTF-8), as it names the
   * image and keys the library through the pipeline.
   */
  private static String libraryName(Path given) {
    Path p = given.toAbsolutePath().normalize();
    if (p.getFileName() == null) {
      return "root";
    }
    byte[] path = Dir.bytesOf(p);
    int slash = path.length - 1;
    while (slash >= 0 && path[slash] != '/') {
      slash--;
    }
    return Printable.bytes(Arrays.copyOfRange(path, slash + 1, path.length));
  }

  /**
   * The spec for saving {@code libraries}: one library goes to the image file {@code image};
   * several go to {@code image/<directory name>.bsave}. In {@code image}, {@value #UTC} stands
   * for the run's start time and {@value #LIBRARY} for each library's name (each library then
   * gets its own image from the template). Checks every library is a readable
   * directory. Staging defaults to a fresh directory beside the images.
   */
  public static SaveSpec spec(List<Path> libraries, Path image, Path staging) {
    if (libraries.isEmpty()) {
      throw new BeamsaveException("no library given: use --library DIR");
    }
    List<Path> roots = libraries.stream().map(SavePipeline::checkLibrary).toList();
    List<String> names = libraries.stream().map(SavePipeline::libraryName).toList();
    String template = image.toString().replace(UTC, utcStamp());
    boolean perLibrary = template.contains(LIBRARY);
    image = Path.of(template);
    boolean many = libraries.size() > 1 && !perLibrary;
    Path imageDir = many ? image : Path.of(template.replace(LIBRARY, names.get(0)))
        .toAbsolutePath().getParent();
    if (many && Files.exists(image) && !Files.isDirectory(image)) {
      throw new BeamsaveException(
          "--image " + image + " must be a directory when saving several libraries");
    }
    List<Path> targets = new ArrayList<>();
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      targets.add(perLibrary ? Path.of(template.replace(LIBRARY, name))
          : many ? image.resolve(name + ImageFormat.EXTENSION) : image);
    }
    for (int i = 0; i < targets.size(); i++) {
      Path target = targets.get(i);
      if (Files.isDirectory(target)) {
        throw new BeamsaveException("--image " + target + " is a directory; name the image file");
      }
      Path dir = target.toAbsolutePath().getParent();
      try {
        Files.createDirectories(dir);
        // One spelling from here on, the kernel's: "link/../x" is where the link leads.
        targets.set(i, dir.toRealPath().resolve(target.getFileName()));
      } catch (IOException e) {
        throw BeamsaveException.io("cannot create image directory", dir, e);
      }
    }
    Path stagingRoot =
        staging != null
            ? staging.resolve(RUN_PREFIX + runId())
            : imageDir.resolve(STAGING_PREFIX + runId());
    SaveSpec spec = SaveSpec.of(stagingRoot.toAbsolutePath().toString());
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      Path target = targets.get(i);
      try {
        spec = spec.withLibrary(name, root.toUri().toString(), new FileImageSink(target));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    return spec;
  }

  private static Path checkLibrary(Path lib) {
    if (!Files.exists(lib)) {
      throw new BeamsaveException("library " + lib + " does not exist");
    }
    if (!Files.isDirectory(lib)) {
      throw new BeamsaveException("library " + lib + " is not a directory");
    }
    if (!Files.isReadable(lib) || !Files.isExecutable(lib)) {
      throw new BeamsaveException("cannot read library " + lib + ": permission denied");
    }
    try {
      return lib.toRealPath();
    } catch (IOException e) {
      throw BeamsaveException.io("cannot resolve library", lib, e);
    }
  }

  private static final String STAGING_PREFIX = RunNames.STAGING_PREFIX;
  private static final String RUN_PREFIX = RunNames.RUN_PREFIX;

  /** In {@code --image}: replaced by the library's directory name. */
  public static final String LIBRARY = "{library}";
  /** In {@code --image}: replaced by the run's start, UTC, e.g. {@code 20261130T021500Z}. */
  public static final String UTC = "{utc}";

  /** The run's start as {@value #UTC} stands for it, e.g. {@code 20261130T021500Z}. */
  public static String utcStamp() {
    return ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
  }

  private static String runId() {
    return RunNames.runId();
  }

  /** What a finished save produced: a summary of each image, and the job. */
  public record Outcome(SaveSpec spec, List<ImageSummary> images, JobResult job) {}

  /**
   * Runs the save to its end. On failure, removes the staging and every unfinished image of
   * this run (its partial file, or its multipart upload and staged shards), then rethrows;
   * images already completed stay (each is whole).
   */
  public static Outcome run(SaveSpec spec, PipelineOptions options, PrintWriter progress) {
    return run(spec, options, progress, null);
  }

  /**
   * Like {@link #run(SaveSpec, PipelineOptions, PrintWriter)}, with the listings taken from
   * {@code walked} (see {@link ListLibrary#walkAhead}) when it is not null.
   */
  public static Outcome run(
      SaveSpec spec, PipelineOptions options, PrintWriter progress,
      ListLibrary.WalkedAhead walked) {
    if (walked != null && !runsInThisJvm(options)) {
      throw new IllegalArgumentException("a walk begun ahead serves only a runner in this JVM");
    }
    AtomicReference<ImageLock> lock = new AtomicReference<>();
    AtomicReference<RunLease> lease = new AtomicReference<>();
    // The spec as prepared so far: what a failure or Ctrl-C has to undo.
    AtomicReference<SaveSpec> running = new AtomicReference<>(spec);
    // Undone on Ctrl-C from the first moment, before anything is made.
    try (Interrupts.Registration undo =
        Interrupts.onInterrupt(() -> warnLeft(stop(running.get(), lock.get(), lease.get())))) {
      // Refuses a second save of the same image, and clears what killed runs left.
      lock.set(ImageLock.acquire("save",
          spec.libraries().values().stream().map(SaveSpec.Library::destination).toList(),
          spec.staging(), progress != null ? progress : new PrintWriter(System.err, true)));
      lease.set(lease(spec, lock.get().run()));
      for (String w : lease.get().warnings()) {
        Job.printNote(progress != null ? progress : new PrintWriter(System.err, true),
            "beamsave: warning: " + w, System.console() != null);
      }
      refuseBasesBeingPruned(spec);
      for (SaveSpec.Library lib : spec.libraries().values()) {
        running.set(running.get().withSink(lib.name(), lib.sink().prepare()));
      }
      SaveSpec prepared = running.get();
      Pipeline p = Pipeline.create(options);
      build(p, prepared, walked);
      JobResult job = Job.run(p, progress(prepared), progress);
      List<ImageSummary> saved = new ArrayList<>();
      for (String library : prepared.libraries().keySet()) {
        saved.add(ImageSummary.read(prepared, library));
      }
      return new Outcome(prepared, saved, job);
    } catch (IOException e) {
      throw withLeftovers(
          new BeamsaveException("cannot prepare or summarise an image: " + e, e),
          stop(running.get(), lock.get(), lease.get()), spec);
    } catch (RuntimeException e) {
      throw withLeftovers(e, stop(running.get(), lock.get(), lease.get()), spec);
    } finally {
      if (lock.get() != null) {
        try {
          Staging.remove(spec, "");
        } catch (RuntimeException e) {
          System.err.println("beamsave: warning: cannot remove staging " + spec.staging() + ": "
              + e.getMessage());
        }
        lock.get().close();
      }
      if (lease.get() != null) {
        lease.get().close();
      }
    }
  }

  /**
   * Fails if a prune in progress is about to delete a base of this save: it said so before it
   * read the leases, and this save's lease came too late for that read (RunLease.intent).
   */
  private static void refuseBasesBeingPruned(SaveSpec spec) {
    for (SaveSpec.Library lib : spec.libraries().values()) {
      if (lib.base() == null) {
        continue;
      }
      String prune = Leases.deleting(lib.base().id(), lib.base().location(), spec.store());
      if (prune != null) {
        throw new BeamsaveException("--base " + lib.base().location() + " is being deleted by a"
            + " " + prune + "; save again once it has ended (with --base latest, the newest"
            + " image left is taken)");
      }
    }
  }

  /**
   * The run's lease beside its base images (which {@code prune} then keeps) and beside the
   * images it writes with their staging (which {@code cleanup} then leaves alone).
   */
  private static RunLease lease(SaveSpec spec, String run) {
    List<RunLease.Use> uses = new ArrayList<>();
    List<String> writes = new ArrayList<>();
    List<String> staging = new ArrayList<>();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      if (lib.base() != null) {
        uses.add(new RunLease.Use(lib.base().id(), lib.base().location()));
      }
      writes.add(lib.destination());
      if (lib.sink() instanceof StoreImageSink s) {
        staging.add(s.stagingLocation());
      }
    }
    staging.add(spec.staging());
    return RunLease.take(run, "save", uses, writes, staging, spec.store());
  }

  /**
   * Undoes a failed or interrupted save: removes its unfinished images (completed ones stay,
   * each whole), its staging and its locks, each so that workers still running cannot make
   * them again. Returns what could not be removed.
   */
  private static List<String> stop(SaveSpec spec, ImageLock lock, RunLease lease) {
    if (lock == null) {
      return List.of(); // Nothing was made yet, or what there is belongs to another save.
    }
    List<String> left = new ArrayList<>();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      try {
        left.addAll(lib.sink().discard());
      } catch (RuntimeException e) {
        left.add("the unfinished image " + lib.destination());
      }
    }
    try {
      Staging.abandon(spec);
    } catch (RuntimeException e) {
      left.add("the staging " + spec.staging());
    }
    if (lease != null) {
      lease.close();
    }
    lock.close();
    return left;
  }

  private static void warnLeft(List<String> left) {
    if (!left.isEmpty()) {
      System.err.println("beamsave: warning: could not remove " + String.join(", ", left)
          + "; 'beamsave cleanup' removes what a stopped save left");
    }
  }

  /**
   * The failure {@code e}, saying in its one line what could not be removed after it and how to
   * remove it: when the store stopped answering, its upload is still there.
   */
  private static RuntimeException withLeftovers(RuntimeException e, List<String> left,
      SaveSpec spec) {
    if (left.isEmpty()) {
      return e;
    }
    RuntimeException shown = Job.translate(e);
    String where = spec.libraries().values().iterator().next().destination();
    String at = ObjectUri.isObject(where) ? ObjectUri.parse(where, false).parent().toString()
        : Path.of(where).toAbsolutePath().getParent().toString();
    return new BeamsaveException(shown.getMessage() + "; left behind: " + String.join(", ", left)
        + " ('beamsave cleanup --at " + at + " --yes' removes " + (left.size() == 1 ? "it"
            : "them") + ")", e);
  }

  /** The shard size when the operator gives none. */
  public static long defaultShardSize(String image) {
    return ObjectUri.isObject(image) ? SaveSpec.DEFAULT_OBJECT_SHARD_SIZE
        : SaveSpec.DEFAULT_SHARD_SIZE;
  }

  /** Whether the runner's workers run in this JVM and so write to this machine's disk. */
  public static boolean runsInThisJvm(PipelineOptions options) {
    return options.getRunner().getSimpleName().equals("DirectRunner");
  }
}
