package io.beamsave.pipelines.compare;

import io.beamsave.pipelines.restore.Restore;
import io.beamsave.pipelines.restore.RestorePolicy;
import io.beamsave.pipelines.restore.RestoreRequest;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.runner.Workers;
import io.beamsave.pipelines.save.Save;
import io.beamsave.pipelines.save.SavePipeline;
import io.beamsave.pipelines.save.SaveRequest;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.stored.Ledger;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.transfer.ImageUpload;
import io.beamsave.transforms.transfer.TransferCodec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Runs the measurements of {@code bench} and {@code compare}: real saves through the save
 * pipeline and real uploads to object storage, run after run, nothing estimated. Runs are
 * interleaved (run 1 of every codec, then run 2, ...) so that drift on a busy machine spreads
 * over all of them.
 */
public final class Experiments {
  private final Path library;
  private final List<String> codecs;
  private final int runs;
  private final Path work;
  private final PipelineOptions options;
  private final PrintWriter log;

  public Experiments(
      Path library, List<String> codecs, int runs, Path work, PipelineOptions options,
      PrintWriter log) {
    if (runs < 1) {
      throw new BeamsaveException("--runs must be at least 1");
    }
    this.library = library;
    this.codecs = codecs.stream().map(c -> canonical(c)).distinct().toList();
    this.runs = runs;
    this.work = work;
    this.options = options;
    this.log = log;
  }

  private static String canonical(String codec) {
    try {
      return Codecs.parse(codec).spec();
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
  }

  /**
   * {@code bench}: each codec saved locally, {@code runs} times, and each image restored into a
   * scratch directory the way {@code restore} does it, checked against the library, removed.
   */
  public List<Measurement> bench() throws IOException {
    TreeSnapshot original = TreeSnapshot.of(library);
    say("warm-up (not measured): one save and restore per codec");
    for (String codec : codecs) {
      Saved s = save(codec, 0);
      restore(s, original);
      Removal.file(s.image);
    }
    List<Measurement> rows = new ArrayList<>();
    for (int run = 1; run <= runs; run++) {
      for (String codec : codecs) {
        Saved s = save(codec, run);
        Restored r = restore(s, original);
        rows.add(Measurement.local(codec, run, s.seconds, s.raw, s.bytes, s.storedRaw, s.usage,
            r.seconds, r.usage));
        Removal.file(s.image);
      }
    }
    return rows;
  }

  private record Restored(double seconds, ProcessUsage usage) {}

  /** Restores {@code saved} as {@code restore} does, checks it, and removes what it made. */
  private Restored restore(Saved saved, TreeSnapshot original) throws IOException {
    Path target = work.resolve("restored-" + saved.image.getFileName());
    say("restoring %s (%s) to check it", saved.image.getFileName(), saved.codec);
    try {
      ProcessUsage before = ProcessUsage.now();
      long start = System.nanoTime();
      // The image this run just saved, checked against its library: trusted as it is.
      Restore.run(() -> ImageRef.of(saved.image.toString(), null, null),
          RestoreRequest.of(target).withPolicy(RestorePolicy.trustImage())
              .withUse(io.beamsave.pipelines.restore.ReadRun.PipelineUse.ALWAYS),
          () -> options, null, Restore.QUIET);
      double seconds = (System.nanoTime() - start) / 1e9;
      ProcessUsage usage = ProcessUsage.now().since(before);
      String diff = TreeSnapshot.of(target).diff(original);
      if (diff != null) {
        throw new BeamsaveException("the " + saved.codec + " image " + saved.image
            + " restored differently from the library " + library + ": " + diff);
      }
      return new Restored(seconds, usage);
    } finally {
      Removal.tree(target);
    }
  }

  /**
   * {@code compare}: per run, one raw save and one save per codec, then at each link speed the
   * baseline upload and, per codec, the compressed image uploaded raw, the raw image uploaded
   * with the codec as transfer compression (zlib and zstd only: the transfer codecs), and a
   * save with the codec that uploads the image while writing it (compress while transferring). {@code auto} is
   * tuned to each link, so its images are saved once per link speed. Every save and upload goes
   * into the ledger at {@code prefix}. Unless {@code keepObjects}, every object the run
   * created under {@code prefix} (images, ledger records) is removed when it ends, also when it
   * fails: a comparison is a measurement, not a backup.
   */
  public List<Measurement> compare(
      Location prefix, List<Integer> linksMbps, S3Settings s3, boolean keepObjects)
      throws IOException {
    Store store = prefix.placed(s3).store();
    store.check(prefix.placed(s3).key());
    if (keepObjects) {
      return measureUploads(store, prefix, linksMbps, s3);
    }
    String under = prefix.child("").placed(s3).key();
    Set<String> before = new HashSet<>();
    store.list(under).forEach(i -> before.add(i.key()));
    boolean finished = false;
    try {
      List<Measurement> rows = measureUploads(store, prefix, linksMbps, s3);
      finished = true;
      return rows;
    } finally {
      try {
        int removed = 0;
        for (Store.Item i : store.list(under)) {
          if (!before.contains(i.key())) {
            store.delete(i.key());
            removed++;
          }
        }
        say("removed the %d objects this comparison created under %s (--keep-objects keeps"
            + " them)", removed, prefix);
      } catch (RuntimeException e) {
        if (finished) {
          throw e;
        }
        // The failure of the comparison is the news; this one would hide it.
      }
    }
  }

  private List<Measurement> measureUploads(
      Store store, Location prefix, List<Integer> linksMbps, S3Settings s3) throws IOException {
    // Elsewhere the workers send the shards to the store themselves, beyond the link emulation,
    // which throttles this process only: that strategy could not be measured at a link speed.
    boolean whileTransferring = Workers.of(options).inThisJvm();
    if (!whileTransferring) {
      say("%s is measured on the DirectRunner only: on %s the workers send the shards to the"
          + " store themselves, where the emulated link does not reach", Strategy.COMPRESS_WHILE_TRANSFERRING.label(),
          options.getRunner().getSimpleName());
    }
    warmUp(store, s3, prefix, linksMbps.get(0), whileTransferring);
    List<Measurement> rows = new ArrayList<>();
    for (int run = 1; run <= runs; run++) {
      Saved raw = save("none", run);
      ledgerSave(prefix, s3, raw, "none");
      Map<String, Saved> compressed = new LinkedHashMap<>();
      for (String codec : codecs) {
        if (!codec.equals("none") && !Codecs.isAuto(codec)) {
          Saved s = save(codec, run);
          ledgerSave(prefix, s3, s, codec);
          compressed.put(codec, s);
        }
      }
      for (int link : linksMbps) {
        rows.add(upload(store, s3, prefix, link, Strategy.BASELINE, "none", run, raw,
            TransferCodec.NONE));
        for (String codec : codecs) {
          if (codec.equals("none")) {
            continue;
          }
          Saved saved = compressed.get(codec);
          if (saved == null) {
            saved = save(Codecs.forLink(codec, link), run);
            ledgerSave(prefix, s3, saved, saved.codec);
          }
          rows.add(upload(store, s3, prefix, link, Strategy.COMPRESS_AT_SAVE, codec, run, saved,
              TransferCodec.NONE));
          if (saved != compressed.get(codec)) {
            Removal.file(saved.image);
          }
          TransferCodec inTransfer = transferForm(codec);
          if (inTransfer != null) {
            rows.add(upload(store, s3, prefix, link, Strategy.COMPRESS_IN_TRANSFER, codec,
                run, raw, inTransfer));
          }
          if (whileTransferring) {
            rows.add(whileTransferring(s3, prefix, link, codec, run));
          }
        }
      }
      Removal.file(raw.image);
      for (Saved s : compressed.values()) {
        Removal.file(s.image);
      }
    }
    return rows;
  }

  /**
   * One unmeasured round of every kind of step, unthrottled, before the runs. A JVM's first runs
   * pay for class loading, JIT compilation and a cold page cache, and each kind of step warms
   * code of its own (a codec, a transfer codec, the upload while saving): a warm-up of one raw
   * save and upload left the C2 compiler busy through the first measured runs of the others,
   * most of all the saves that compress while transferring. Nothing of it is kept in the store or the ledger.
   */
  private void warmUp(Store store, S3Settings s3, Location prefix, int link,
      boolean whileTransferring) throws IOException {
    say("warm-up (not measured): every save, transfer and codec once, unthrottled");
    Location warm = prefix.child("warm-up.bsave");
    Saved raw = save("none", 0);
    send(s3, raw.image, warm, TransferCodec.NONE, 0);
    for (String codec : codecs) {
      if (codec.equals("none")) {
        continue;
      }
      Saved saved = save(Codecs.forLink(codec, link), 0);
      send(s3, saved.image, warm, TransferCodec.NONE, 0);
      Removal.file(saved.image);
      TransferCodec inTransfer = transferForm(codec);
      if (inTransfer != null) {
        // As measured: the transfer codec compresses the raw image.
        send(s3, raw.image, warm, inTransfer, 0);
      }
      if (whileTransferring) {
        saveWhileUploading(s3, warm, Codecs.forLink(codec, link), 0);
      }
    }
    store.delete(warm.placed(s3).key());
    Removal.file(raw.image);
  }

  /** Saves with {@code codec} straight to the store, the upload running while shards compress. */
  private Measurement whileTransferring(
      S3Settings s3, Location prefix, int link, String codec, int run) {
    Location to = objectFor(prefix, link, Strategy.COMPRESS_WHILE_TRANSFERRING, codec, run);
    String saveCodec = Codecs.forLink(codec, link);
    say("run %d, %s: %s with %s", run, linkName(link), Strategy.COMPRESS_WHILE_TRANSFERRING.label(), saveCodec);
    Instant start = Instant.now();
    ProcessUsage before = ProcessUsage.now();
    SavePipeline.Outcome o = saveWhileUploading(s3, to, saveCodec, link);
    ImageSummary s = o.images().get(0);
    // The upload spans the save: shards leave as they are compressed, and the image is
    // assembled in the store when the last has arrived.
    double seconds = o.job().seconds();
    ProcessUsage usage = ProcessUsage.now().since(before);
    Ledger.append(prefix.toString(), s3,
        new Ledger.Record("save-upload", s.library(), saveCodec, "none",
            Ledger.strategy("save-upload", saveCodec, "none"), start, Instant.now(),
            seconds, s.rawBytes(), s.imageBytes(), to.toString()));
    return new Measurement(link, Strategy.COMPRESS_WHILE_TRANSFERRING.id(), codec, run, seconds, seconds,
        seconds, s.rawBytes(), s.imageBytes(), s.imageBytes(), to.toString(),
        o.job().counter(StageMetrics.BYTES_STORED_RAW), usage, 0, null);
  }

  private SavePipeline.Outcome saveWhileUploading(
      S3Settings s3, Location to, String codec, int link) {
    return save(SaveRequest.builder(List.of(library), to.toString()).staging(work.toString())
        .codec(codec).linkMbps(link)
        .sizes((long) SaveSpec.DEFAULT_OBJECT_SHARD_SIZE, SaveSpec.DEFAULT_BLOCK_SIZE)
        .s3(s3).ledger(false).build());
  }

  /** A save as the save command makes it, but for the ledger (a comparison is a measurement). */
  private SavePipeline.Outcome save(SaveRequest request) {
    try {
      return Save.run(null, () -> request, jobName -> {
            options.setJobName(jobName);
            return options;
          },
          new Save.Output(note -> { }, warning -> { }, null, done -> { })).outcome();
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  private static ImageUpload.Result send(
      S3Settings s3, Path image, Location to, TransferCodec transfer, int link) {
    return ImageUpload.upload(image, to, s3,
        new ImageUpload.Options(transfer, ImageUpload.DEFAULT_PART, 4, link, false), null);
  }

  private static Location objectFor(
      Location prefix, int link, Strategy strategy, String codec, int run) {
    return prefix.child((link == 0 ? "unthrottled" : link + "mbps") + "/" + strategy.id()
        + "/" + codec.replace(':', '-') + "-run" + run + ".bsave");
  }

  private static String linkName(int link) {
    return link == 0 ? "unthrottled" : link + " Mbit/s";
  }

  /** The transfer codec doing what {@code codec} does, or null (lz4 and xz have none). */
  static TransferCodec transferForm(String codec) {
    return codec.startsWith("zlib") || codec.startsWith("zstd") ? TransferCodec.parse(codec) : null;
  }

  private record Saved(String codec, Path image, double seconds, long raw, long bytes,
      Instant start, Instant end, String library, long storedRaw, ProcessUsage usage) {}

  private Saved save(String codec, int run) {
    Path image = work.resolve(codec.replaceAll("[^A-Za-z0-9]+", "-") + "-run" + run + ".bsave");
    say("run %d: saving with %s", run, codec);
    Instant start = Instant.now();
    ProcessUsage before = ProcessUsage.now();
    SavePipeline.Outcome o = save(SaveRequest.builder(List.of(library), image.toString())
        .codec(codec).ledger(false).build());
    ProcessUsage usage = ProcessUsage.now().since(before);
    ImageSummary s = o.images().get(0);
    return new Saved(codec, image, o.job().seconds(), s.rawBytes(), s.imageBytes(), start,
        Instant.now(), s.library(), o.job().counter(StageMetrics.BYTES_STORED_RAW), usage);
  }

  private Measurement upload(
      Store store, S3Settings s3, Location prefix, int link, Strategy strategy, String codec,
      int run, Saved saved, TransferCodec transfer) {
    Location to = objectFor(prefix, link, strategy, codec, run);
    say("run %d, %s: %s with %s", run, linkName(link), strategy.label(),
        saved.codec.equals("none") ? codec : saved.codec);
    Instant start = Instant.now();
    ImageUpload.Result r = send(s3, saved.image, to, transfer, link);
    Ledger.append(prefix.toString(), s3,
        new Ledger.Record("upload", saved.library, saved.codec, transfer.spec(),
            Ledger.strategy("upload", saved.codec, transfer.spec()), start, Instant.now(),
            r.seconds(), r.rawBytes(), r.storedBytes(), to.toString()));
    return Measurement.sequential(link, strategy.id(), codec, run, saved.seconds, r.seconds(),
        saved.raw, saved.bytes, r.storedBytes(), to.toString(), saved.storedRaw, saved.usage);
  }

  private void ledgerSave(Location prefix, S3Settings s3, Saved s, String codec) {
    Ledger.append(prefix.toString(), s3,
        new Ledger.Record("save", s.library, codec, "none", Ledger.strategy("save", codec, "none"),
            s.start, s.end, s.seconds, s.raw, s.bytes, s.image.toString()));
  }

  private void say(String format, Object... args) {
    if (log != null) {
      log.println(String.format(Locale.ROOT, format, args));
      log.flush();
    }
  }
}
