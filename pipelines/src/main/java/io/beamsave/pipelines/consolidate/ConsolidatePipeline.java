package io.beamsave.pipelines.consolidate;

import io.beamsave.pipelines.locks.ImageLock;
import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.pipelines.locks.RunNames;
import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.JobResult;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.beam.Elements;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.consolidate.AssembleConsolidated;
import io.beamsave.transforms.consolidate.ConsolidatePlan;
import io.beamsave.transforms.consolidate.ConsolidateShards;
import io.beamsave.transforms.consolidate.ConsolidateTask;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ImageLineage;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.sink.ImageSinks;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.transfer.ImageUpload;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.PCollection;

/**
 * Folds an image and the images it references into one self-contained (full) image, without
 * reading the library: {@code tasks → Reshuffle → ConsolidateShards → AssembleConsolidated},
 * through the same {@link ImageSink}s a save writes with. {@link ConsolidatePlan} decides what
 * is copied whole (in object storage by the store itself) and what is rewritten. {@link #build}
 * only constructs the pipeline; {@link #run} also guarantees that a failed or interrupted run
 * leaves no partial file or multipart upload behind.
 */
public final class ConsolidatePipeline {
  private ConsolidatePipeline() {}

  static final String SHARD_STEP = "ConsolidateShards";

  /** What a consolidate made. */
  public record Outcome(
      String image, Catalog newest, int chainLength, ConsolidatePlan plan, long imageBytes,
      long bytesFetched, long bytesFetchedToRewrite, JobResult job, double seconds,
      boolean encrypted) {}

  /** Adds the making of {@code plan}'s shards into {@code sink} (prepared) and its assembly. */
  public static PCollection<String> build(Pipeline p, ConsolidatePlan plan, ImageSink sink,
      Codec codec, S3Settings s3, ImageChain chain) {
    return p.apply("Tasks", Elements.of(plan.tasks(), ConsolidateTask.CODER))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply(SHARD_STEP, ConsolidateShards.into(sink, codec, plan.blockSize(), s3)
            .withKeys(chain.keys()).withTags(chain.tags()))
        .apply("AssembleConsolidated", AssembleConsolidated.of(plan, sink, codec));
  }

  /**
   * The sink of the image at {@code to}: a file (its directory made, one spelling of it from
   * then on), or an upload staging small shards beside it.
   */
  static ImageSink sinkFor(String to, S3Settings s3, RunId run) {
    Location at = Location.of(to).forImage("--to", s3);
    return ImageSinks.forImage(at, at.sibling(RunNames.STAGING_PREFIX + run + "/shards/"), s3,
        0, ImageUpload.Options.defaults().parallelParts());
  }

  /**
   * Consolidates {@code newest} into {@code to}, rewriting with {@code codecSpec} (null: the
   * newest image's codec). The chain is opened and checked before anything is written: a missing
   * or replaced base fails with nothing made. The new image is encrypted for {@code recipients};
   * an encrypted chain, when none are given, for the keys that opened it ({@link
   * io.beamsave.transforms.crypt.Keys#asRecipients}).
   */
  public static Outcome run(
      ImageRef newest, String to, String codecSpec, double minLive, List<Recipient> recipients,
      boolean dropRecipients, PipelineOptions options, PrintWriter progress) {
    long start = System.nanoTime();
    RunId run = RunId.mint();
    S3Settings s3 = newest.s3();
    Catalog catalog = newest.readCatalog();
    List<Entry> files = catalog.entries().stream().filter(Entry::isFile).toList();
    ImageChain chain = ImageChain.resolve(newest.member(), files, s3, newest.keys(),
        newest.baseLocations());
    refuseChainTarget(to, newest, catalog);
    Codec codec;
    try {
      codec = Codecs.parse(codecSpec != null ? codecSpec : catalog.codecSpec());
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
    if (recipients.isEmpty() && catalog.encrypted()) {
      recipients = newest.keys().asRecipients();
    }
    if (catalog.encrypted() && !dropRecipients) {
      // Consolidating and deleting the chain must not lose a recipient (an escrow key, say)
      // that the operator did not think to name.
      List<Recipient> to2 = recipients;
      List<String> lost = catalog.key().envelope().stanzas().stream()
          .filter(st -> to2.stream().noneMatch(r -> r.owns(st)))
          .map(io.beamsave.transforms.crypt.Stanza::describe).distinct().toList();
      if (!lost.isEmpty()) {
        throw new BeamsaveException(newest.display() + " is also for " + String.join(", ", lost)
            + ", which the new image would not be: name them (--recipient, --key-file,"
            + " --password-file), or give --drop-recipients");
      }
    }
    ImageSink sink = sinkFor(to, s3, run);
    if (!recipients.isEmpty()) {
      // A full image of the newest one's point in time, with a data key of its own.
      sink = sink.encryptedWith(ImageKey.create(ImageId.random(), catalog.createdMillis(), 0,
          catalog.id(), List.of(), recipients));
    }
    AtomicReference<ImageSink> running = new AtomicReference<>();
    AtomicReference<ImageLock> lock = new AtomicReference<>();
    AtomicReference<RunLease> lease = new AtomicReference<>();
    try (Interrupts.Registration undo = Interrupts.onInterrupt(
        "consolidate " + to,
        () -> stop(running.get(), lock.get(), lease.get()).forEach(left -> System.err.println(
            "beamsave: warning: could not remove " + left + "; 'beamsave cleanup' removes it")))) {
      // As a save: one run writes an image at a time, and what a killed one left goes first.
      lock.set(ImageLock.acquire(run, "consolidate", List.of(sink.location()), null, progress));
      // Prune leaves the chain alone while it is read.
      List<RunLease.Use> uses = new java.util.ArrayList<>();
      for (ImageChain.Member m : chain.opened()) {
        uses.add(new RunLease.Use(m.catalog().id(), m.location()));
      }
      lease.set(RunLease.take(lock.get().run(), "consolidate", uses,
          List.of(sink.location()), sink instanceof StoreImageSink st
              ? List.of(st.stagingLocation()) : List.of(), s3));
      for (String w : lease.get().warnings()) {
        Job.printNote(progress, "beamsave: warning: " + w, System.console() != null);
      }
      ConsolidatePlan plan = ConsolidatePlan.of(chain, catalog, codec.spec(), sink, minLive);
      try {
        running.set(sink.prepare());
      } catch (IOException e) {
        throw BeamsaveException.io("cannot begin image", to, e);
      }
      ImageSink prepared = running.get();
      JobResult job = null;
      long imageBytes;
      if (plan.tasks().isEmpty()) {
        imageBytes = AssembleConsolidated.finish(plan, prepared, codec, List.of());
      } else {
        Pipeline p = Pipeline.create(options);
        build(p, plan, prepared, codec, s3, chain);
        job = Job.run(p, progress(plan), progress);
        imageBytes = sizeOf(prepared.location(), s3);
      }
      return new Outcome(prepared.location(), catalog, 1 + catalog.bases().size(), plan,
          imageBytes, job == null ? 0 : job.counter(StageMetrics.BYTES_FETCHED),
          job == null ? 0 : job.counter(StageMetrics.BYTES_FETCHED_TO_REWRITE), job,
          (System.nanoTime() - start) / 1e9, prepared.key() != null);
    } catch (RuntimeException e) {
      List<String> left = stop(running.get(), null, null);
      if (!left.isEmpty()) {
        throw new BeamsaveException(Job.translate(e).getMessage() + "; left behind: "
            + String.join(", ", left) + " ('beamsave cleanup' removes it)", e);
      }
      throw e;
    } finally {
      stop(null, lock.get(), lease.get());
    }
  }

  /** Removes what a stopped run made, then its lease and lock; returns what is left. */
  private static List<String> stop(ImageSink sink, ImageLock lock, RunLease lease) {
    List<String> left;
    try {
      left = sink == null ? List.of() : sink.discard();
    } catch (RuntimeException e) {
      left = List.of("the unfinished image " + sink.location());
    }
    if (lease != null) {
      lease.close();
    }
    if (lock != null) {
      lock.close();
    }
    return left;
  }

  /**
   * Refuses {@code to} when it is any image of the newest one's lineage: the image itself, its
   * base, its base's base to the root, whether or not a file still has bytes in it (the images
   * between need it all the same), however it is spelled ({@link ImageLineage}).
   */
  static void refuseChainTarget(String to, ImageRef newest, Catalog catalog) {
    ImageLineage.of(newest.display(), newest.location(), catalog, newest.s3(), newest.keys(),
        newest.baseLocations()).refuse("--to", to, newest.s3(), "consolidate into a new name");
  }

  /** Raw bytes placed against the plan's; on Flink, shards made against the tasks. */
  static Job.Progress progress(ConsolidatePlan plan) {
    return new Job.Progress("consolidated", StageMetrics.BYTES_CONSOLIDATED, null,
        plan.rawBytes(), SHARD_STEP, null, plan.tasks().size(), null);
  }

  private static long sizeOf(String image, S3Settings s3) {
    return Location.of(image).stat(s3).orElseThrow(
        () -> new BeamsaveException(image + ": not there after it was finished")).size();
  }

}
