package io.beamsave.pipelines.save;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.pipelines.runner.JobResult;
import io.beamsave.pipelines.runner.Workers;
import io.beamsave.pipelines.locks.ImageLock;
import io.beamsave.pipelines.locks.Leases;
import io.beamsave.pipelines.locks.RunLease;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.AssembleImage;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.PlanShards;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.save.Staging;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.Location;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
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
 * {@link SaveSpecs} chose for it. {@link #build} only constructs the pipeline (tests and the
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
   * Like {@link #build(Pipeline, SaveSpec)}, for workers in this JVM: with the libraries'
   * listings taken from {@code walked} (if not null), a walk begun here.
   */
  static PCollection<KV<String, String>> build(
      Pipeline p, SaveSpec spec, ListLibrary.WalkedAhead walked) {
    ListLibrary list = ListLibrary.of(spec);
    return p.apply("ListLibrary", walked == null ? list : list.withWalkedAhead(walked))
        .apply(PLAN_STEP, PlanShards.of(spec))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply(COMPRESS_STEP, CompressShards.of(spec))
        .apply("AssembleImage", AssembleImage.of(spec));
  }

  /** What a finished save produced: a summary of each image, and the job. */
  public record Outcome(SaveSpec spec, List<ImageSummary> images, JobResult job) {}

  /**
   * Runs the save to its end. On failure, removes the staging and every unfinished image of
   * this run (its partial file, or its multipart upload and staged shards), then rethrows;
   * images already completed stay (each is whole).
   */
  static Outcome run(SaveSpec spec, RunId run, PipelineOptions options,
      PrintWriter progress) {
    return run(spec, run, options, progress, false);
  }

  /**
   * Like {@link #run(SaveSpec, RunId, PipelineOptions, PrintWriter)}; with {@code walkAhead}, where
   * the workers run in this JVM ({@link Workers}), the libraries are walked here while Beam and
   * its runner start (see {@link ListLibrary#walkAhead}); elsewhere workers walk them.
   */
  static Outcome run(SaveSpec spec, RunId run, PipelineOptions options, PrintWriter progress,
      boolean walkAhead) {
    return run(spec, run, options, progress, walkAhead,
        java.util.function.UnaryOperator.identity());
  }

  /**
   * Like {@link #run(SaveSpec, RunId, PipelineOptions, PrintWriter, boolean)}; {@code beforeRead}
   * turns
   * the spec into the one that is read, once the run holds its images (their locks and lease)
   * and before any file is: where {@code --snapshot} takes its snapshots, so that a second save
   * of the same image is refused before it takes one.
   */
  static Outcome run(SaveSpec spec, RunId run, PipelineOptions options, PrintWriter progress,
      boolean walkAhead, java.util.function.UnaryOperator<SaveSpec> beforeRead) {
    walkAhead &= Workers.of(options).inThisJvm();
    AtomicReference<ImageLock> lock = new AtomicReference<>();
    AtomicReference<RunLease> lease = new AtomicReference<>();
    // The spec as prepared so far: what a failure or Ctrl-C has to undo.
    AtomicReference<SaveSpec> running = new AtomicReference<>(spec);
    // Undone on Ctrl-C from the first moment, before anything is made.
    try (Interrupts.Registration undo =
        Interrupts.onInterrupt("save " + spec.staging(), () -> warnLeft(stop(running.get(), lock.get(), lease.get())))) {
      // Refuses a second save of the same image, and clears what killed runs left.
      lock.set(ImageLock.acquire(run, "save",
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
      running.set(beforeRead.apply(running.get()));
      SaveSpec prepared = running.get();
      // Once the run holds its images and staging, where the walk stages its listing.
      ListLibrary.WalkedAhead walked = walkAhead ? ListLibrary.walkAhead(prepared) : null;
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
      String prune = Leases.deleting(lib.base().id(), lib.base().location(), spec.s3());
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
    return RunLease.take(run, "save", uses, writes, staging, spec.s3());
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
    String at = Location.of(where).parent().toString();
    return new BeamsaveException(shown.getMessage() + "; left behind: " + String.join(", ", left)
        + " ('beamsave cleanup --at " + at + " --yes' removes " + (left.size() == 1 ? "it"
            : "them") + ")", e);
  }


}
