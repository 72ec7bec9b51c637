package io.beamsave.pipelines.save;

import io.beamsave.pipelines.runner.Workers;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.CatalogCursor;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.save.SaveScan;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.transfer.ImageUpload;
import io.beamsave.transforms.transfer.TransferCodec;
import io.beamsave.transforms.walk.Unreadable;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * A save, from the operator's request to its record: the one entry point of the save path, as
 * {@code restore.Restore.run} is of restore. In order: where each image goes ({@link
 * SaveSpecs}), which files ({@code --exclude}, {@code --files-from}), a walk begun ahead for
 * workers in this JVM, the bases ({@link BaseImages}), the keys ({@link SaveKeys}), how what
 * is read holds together ({@link Consistency}: as it is, {@code --snapshot}, or PostgreSQL's backup
 * mode), the run with its lock, lease and sinks
 * ({@link SavePipeline}), and then the report, the metrics file and the ledger beside each
 * image.
 */
public final class Save {
  /**
   * Where the save speaks: notes and warnings as they come, progress while it runs, and the
   * result once the images are complete, before the report file and the ledger are written
   * (the operator sees the report even when those fail); {@code hookLine} a line a hook printed,
   * and {@code hooksRan} the hooks that ran, once the save has ended however it ended.
   */
  public record Output(Consumer<String> note, Consumer<String> warning, PrintWriter progress,
      Consumer<Result> result, Consumer<String> hookLine, Consumer<List<Hooks.Ran>> hooksRan) {
    public Output(Consumer<String> note, Consumer<String> warning, PrintWriter progress,
        Consumer<Result> result) {
      this(note, warning, progress, result, line -> { }, ran -> { });
    }
  }

  /**
   * What a save produced.
   *
   * @param outcome the run: its spec, a summary per image and the job's figures
   * @param report the report over it
   * @param partial whether an image is partial ({@code --skip-unreadable} skipped entries, or
   *     {@code --files-from} listed paths the library lacks), each said in a warning
   */
  public record Result(
      SavePipeline.Outcome outcome, SaveReport report, boolean partial, Instant start,
      Instant end) {}

  private final SaveRequest request;
  private final Output output;
  /** The run's one id: its staging, lock, lease, snapshots, hooks and Beam job are named by it. */
  private final RunId run;
  /** Runs once the snapshots are taken, before a file is read: the --after-snapshot hooks. */
  private Runnable afterSnapshots = () -> { };
  /** The lines of the --files-from list, kept to name them in warnings. */
  private List<FilesFrom.Line> listed = List.of();

  private Save(SaveRequest request, Output output, RunId run) {
    this.request = request;
    this.output = output;
    this.run = run;
  }

  /**
   * Runs the save {@code request} asks for to its end, with its hooks around it. On failure no
   * unfinished image or staging is left (see {@link SavePipeline#run}). {@code metricsFile}, if
   * not null, gets the run's figures once, when it has ended: a failure too, also when the
   * request or the options cannot be made (which is why they are made here), and the hooks
   * that ran. {@code options} makes the options of a run given its default job name, the run's
   * id ({@link RunId#jobName}).
   */
  public static Result run(Path metricsFile, Supplier<SaveRequest> request,
      Function<String, PipelineOptions> options, Output output) throws IOException {
    Instant began = Instant.now();
    RunId run = RunId.mint();
    Result[] result = {null};
    Hooks hooks = null;
    try {
      checkMetricsFile(metricsFile);
      SaveRequest asked = request.get();
      PipelineOptions beam = options.apply(run.jobName("save"));
      Save save = new Save(asked, output, run);
      Hooks.Plan plan = asked.hooks();
      if (plan.isEmpty()) {
        result[0] = save.run(beam);
        return result[0];
      }
      hooks = new Hooks(plan.before(), plan.afterSnapshot(), plan.after(),
          plan.timeoutSeconds(), output.hookLine());
      Hooks running = hooks;
      Map<String, String> env = Hooks.environment(asked.libraries(), asked.image(), run.value());
      save.afterSnapshots = () -> running.afterSnapshot(env)
          .forEach(failed -> output.warning().accept(failed.describe()));
      hooks.around(env, output.warning(), () -> {
        result[0] = save.run(beam);
        return result[0].partial() ? PARTIAL : 0;
      });
      return result[0];
    } finally {
      List<Hooks.Ran> ran = hooks == null ? List.of() : hooks.ran();
      if (metricsFile != null && !io.beamsave.pipelines.runner.Interrupts.interrupted()) {
        // Once, at the end: a failure is news for the monitoring too (what it was is on
        // stderr), and so are the hooks.
        SaveMetrics.write(metricsFile, result[0] == null ? null : result[0].report(),
            result[0] == null ? began : result[0].start(),
            result[0] == null ? Instant.now() : result[0].end(), ran);
      }
      output.hooksRan().accept(ran);
    }
  }

  /** The exit code of a save whose images are complete but partial, which after hooks hear. */
  private static final int PARTIAL = 3;

  /** One library's dry run: where its image would go, on which base, and what it would take. */
  public record Planned(String library, String image, String base, SaveScan.Found found) {}

  /**
   * {@code save --dry-run}: the libraries walked as the save would walk them (excludes,
   * {@code --files-from}, the base an incremental save would choose), and nothing else: no
   * image, staging, lock or directory is made, no file's bytes are read.
   */
  public static List<Planned> dryRun(Supplier<SaveRequest> request,
      Function<String, PipelineOptions> options, Output output) throws IOException {
    RunId run = RunId.mint();
    Save s = new Save(request.get(), output, run);
    if (!s.request.hooks().isEmpty()) {
      output.note().accept("--dry-run runs no hooks: it saves nothing for them to be around");
    }
    SaveSpec save = s.spec(Workers.of(options.apply(run.jobName("save"))), false);
    save = Consistency.dryRun(s.request, save, output);
    BasePlan bases = BaseImages.choose(save, s.request, output.note());
    List<Planned> planned = new java.util.ArrayList<>();
    for (SaveSpec.Library lib : save.libraries().values()) {
      BasePlan.Base b = bases.byLibrary().get(lib.name());
      SaveScan.Found found;
      if (b == null) {
        found = SaveScan.of(save, lib, null);
      } else {
        try (ImageSource src = ImageSources.open(b.location(), s.request.s3())) {
          CatalogHead head = ImageReader.readHead(src, s.request.keys(), false);
          found = SaveScan.of(save, lib, new CatalogCursor(src, head));
        }
      }
      planned.add(new Planned(lib.name(), lib.destination(), b == null ? null : b.location(),
          found));
    }
    return planned;
  }

  private Result run(PipelineOptions options) throws IOException {
    Workers workers = Workers.of(options);
    SaveSpec save = spec(workers, true);
    // Not into a store: there a shard that compresses to under 5 MiB cannot be a part of the
    // image's upload and is sent twice, and 24 MiB shards reach the link sooner already.
    if (request.shardSize() == null && workers.inThisJvm()
        && Location.of(request.image()).minimumPart() == 0) {
      save = save.withSpreadOver(
          options.as(org.apache.beam.runners.direct.DirectOptions.class).getTargetParallelism());
    }
    BasePlan bases = BaseImages.choose(save, request, output.note());
    save = SaveKeys.apply(bases.applyTo(save), request.recipients(), bases);
    if (!request.tags().isEmpty()) {
      for (String name : save.libraries().keySet()) {
        save = save.withNotes(name, Map.of(io.beamsave.transforms.image.catalog.Notes.TAGS,
            String.join(",", request.tags())));
      }
    }
    Instant start = Instant.now();
    SavePipeline.Outcome outcome;
    boolean backupMode;
    try (Consistency consistency =
        Consistency.choose(request, save, workers, run, output, afterSnapshots)) {
      outcome = SavePipeline.run(save, run, options, output.progress(), true, consistency);
      backupMode = consistency.inBackupMode();
    }
    Instant end = Instant.now();
    SaveReport report = new SaveReport(outcome);
    warnUnmatchedExcludes(save, outcome);
    long changed = report.json().get("filesChanged") instanceof Long l ? l : 0;
    if (changed > 0 && backupMode) {
      output.note().accept(changed + " file(s) changed while being saved, as PostgreSQL wrote"
          + " them; its recovery from the WAL in the image repairs them");
    } else if (changed > 0) {
      output.warning().accept(changed + " file(s) changed while being saved; marked in the image");
    }
    boolean partial = warnPartial(save, outcome);
    Result result = new Result(outcome, report, partial, start, end);
    output.result().accept(result);
    if (request.reportJson() != null) {
      report.writeJson(request.reportJson());
    }
    if (request.ledger()) {
      record(save, outcome, start, end);
    }
    return result;
  }

  /** Found out before the save, not after a good one. */
  private static void checkMetricsFile(Path file) {
    if (file == null) {
      return;
    }
    Path dir = file.toAbsolutePath().getParent();
    if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
      throw new BeamsaveException("--metrics-file " + file + ": " + dir
          + (Files.isDirectory(dir) ? " is not writable" : " is no directory"));
    }
  }

  /**
   * The spec of what the request asks, before bases and keys; {@code create} the image's
   * directory if it does not exist (not in a dry run).
   */
  private SaveSpec spec(Workers workers, boolean create) {
    try {
      ImageUpload.Options upload = new ImageUpload.Options(
          TransferCodec.NONE, ImageUpload.DEFAULT_PART, 4, request.linkMbps(), false);
      SaveRequest.Selection select = request.select();
      SaveSpec save = SaveSpecs.of(request.libraries(), request.image(), request.staging(),
              request.s3(), workers, upload, create, run)
          .withCodec(Codecs.forLink(request.codec(), request.linkMbps()))
          .withSizes(request.shardSize() != null ? request.shardSize()
              : SaveSpecs.defaultShardSize(request.image()), request.blockSize())
          .withAllowChanging(request.allowChanging())
          .withExcludes(Excludes.of(select.excludes(), select.excludeCaches())
              .withOtherFileSystems(select.oneFileSystem()))
          .withSkipUnreadable(request.skipUnreadable());
      return withFilesFrom(save);
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
  }

  /** {@code save} restricted to what --files-from lists, if given. */
  private SaveSpec withFilesFrom(SaveSpec save) {
    String filesFrom = request.select().filesFrom();
    if (filesFrom == null) {
      return save;
    }
    byte[] content;
    try {
      content = filesFrom.equals("-") ? System.in.readAllBytes()
          : Files.readAllBytes(Path.of(filesFrom));
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read --files-from", filesFrom, e);
    }
    listed = FilesFrom.lines(content, request.select().from0());
    // An absolute line may name the library as given or as resolved (the spec holds that).
    Map<String, List<byte[]>> roots = new LinkedHashMap<>();
    int i = 0;
    for (SaveSpec.Library lib : save.libraries().values()) {
      roots.put(lib.name(), List.of(Dir.bytesOf(lib.rootPath()),
          Dir.bytesOf(request.libraries().get(i++).toAbsolutePath().normalize())));
    }
    return save.withFilesFrom(FilesFrom.select("--files-from " + filesFrom, listed, roots));
  }

  private void warnUnmatchedExcludes(SaveSpec save, SavePipeline.Outcome outcome) {
    List<String> patterns = save.excludes().patterns();
    for (int i = 0; i < patterns.size(); i++) {
      if (outcome.job().counter(StageMetrics.excludedBy(i)) == 0) {
        String p = patterns.get(i);
        output.warning().accept("--exclude '" + p + "' matched nothing; " + Excludes.hint(p));
      }
    }
  }

  /**
   * Warns about each entry the save skipped and each listed path no library held; returns
   * whether there was any, which makes the image partial.
   */
  private boolean warnPartial(SaveSpec save, SavePipeline.Outcome outcome) {
    boolean partial = false;
    Map<Integer, Integer> missingIn = new HashMap<>();
    for (ImageSummary s : outcome.images()) {
      String root = Printable.bytes(Dir.bytesOf(save.library(s.library()).rootPath()));
      for (Unreadable u : s.unreadable()) {
        output.warning().accept("cannot read " + root + (u.path().isEmpty() ? "" : "/")
            + u.path() + ": " + u.reason() + "; skipped");
        partial = true;
      }
      FilesFrom only = save.filesFrom(s.library());
      for (PathBytes p : s.missing()) {
        missingIn.merge(only.line(p), 1, Integer::sum);
      }
    }
    for (FilesFrom.Line line : listed) {
      // A relative line is looked for in every library, an absolute one in its own.
      int lookedIn = line.path()[0] == '/' ? 1 : outcome.images().size();
      if (missingIn.getOrDefault(line.number(), 0) >= lookedIn) {
        output.warning().accept("--files-from " + request.select().filesFrom() + " line "
            + line.number() + ": '" + Printable.bytes(line.path()) + "' is not in "
            + (lookedIn == 1 && outcome.images().size() == 1 ? "the library" : "any library")
            + "; skipped");
        partial = true;
      }
    }
    return partial;
  }

  /** Appends each image's record to the ledger beside it. */
  private void record(SaveSpec save, SavePipeline.Outcome outcome, Instant start, Instant end) {
    for (ImageSummary s : outcome.images()) {
      // An image with no path on this host was uploaded while it was saved.
      String kind = Location.of(s.image()).localPath().isEmpty() ? "save-upload" : "save";
      String codec = save.codec().spec();
      Ledger.Record record = new Ledger.Record(
          kind, s.library(), codec, "none", Ledger.strategy(kind, codec, "none"), start, end,
          outcome.job().seconds(), s.rawBytes(), s.imageBytes(), s.image(),
          s.base().isEmpty() ? null : s.base(), s.referencedBytes());
      Ledger.append(Ledger.besideImage(s.image()), save.s3(),
          request.encrypted() ? record.encrypted() : record);
    }
  }
}
