package io.beamsave.pipelines.restore;

import io.beamsave.pipelines.postgres.PostgresSave;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.PrintWriter;
import java.util.function.Supplier;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * A restore, from the operator's request to what to do next: the one entry point of the restore
 * path, as {@code save.Save.run} is of the save's. It opens the image, reads ahead what a
 * pipeline will need while Beam starts, restores ({@link RestorePipeline#run}) and, for an
 * image of a PostgreSQL data directory, says how to start the server on it. The command line
 * only maps its options to a {@link RestoreRequest} and prints what comes back.
 */
public final class Restore {
  private Restore() {}

  /** What a restore tells as it goes, beyond its progress. */
  public interface Listener {
    /** {@code --delete} removed {@code path} (relative to the target), a directory last. */
    default void removing(PathBytes path) {}
  }

  /** Tells nothing. */
  public static final Listener QUIET = new Listener() {};

  /**
   * What a restore did, and what the operator should do next ({@code next}: starting
   * PostgreSQL on a data directory restored whole; else null).
   */
  public record Result(RestorePipeline.Outcome outcome, String next) {}

  /** What a restore would do ({@code --dry-run}); {@code removal} null without --delete. */
  public record Planned(RestorePipeline.Planned restore, TargetMirror.Removed removal) {}

  /** Restores the image {@code image} opens as {@code request} says. */
  public static Result run(Supplier<ImageRef> image, RestoreRequest request,
      Supplier<PipelineOptions> options, PrintWriter progress,
      Restore.Listener listener) {
    try (ImageRef ref = image.get()) {
      if (RestorePipeline.literalPaths(request.includes()) == null && !request.whole()
          && !request.use().here(0)) {
        // A pipeline's patterns are matched against the whole catalog: read it while Beam
        // starts. Otherwise a selection is read page by page, here first.
        ref.readCatalogAhead();
      }
      RestorePipeline.Outcome o = RestorePipeline.run(ref, request, options, progress, listener);
      String next = request.whole()
          ? PostgresSave.nextStep(ref.head().catalog().notes(), o.target()) : null;
      return new Result(o, next);
    }
  }

  /**
   * What {@link #run} would do, after the checks it makes first: reads the catalog and the
   * target, writes nothing; {@code listener} hears what {@code --delete} would remove.
   */
  public static Planned dryRun(Supplier<ImageRef> image, RestoreRequest request,
      Restore.Listener listener) {
    try (ImageRef ref = image.get()) {
      RestorePipeline.Planned p = RestorePipeline.dryRun(ref, request);
      TargetMirror.Removed gone = request.delete()
          ? TargetMirror.dryRun(ref, request.target(), request.noPreserveRoot(),
              listener::removing)
          : null;
      return new Planned(p, gone);
    }
  }
}
