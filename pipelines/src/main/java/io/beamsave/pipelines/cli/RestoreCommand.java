package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.transfer.ImageRef;
import java.io.PrintWriter;
import io.beamsave.pipelines.restore.ReadRun;
import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.restore.TargetMirror;
import io.beamsave.pipelines.runner.Sizes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave restore}: an image back into a directory. */
@Command(
    name = "restore",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave restore /backup/data.bsave --target /srv/restored",
      "  beamsave restore s3://backups/nightly/data/latest --target /tmp/etc --include 'etc/**'",
      "  beamsave restore /backup/data.bsave --target /srv/data --include '*.conf' --overwrite",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Restore an image, or the entries matching --include, into a directory.",
      "Only the shards holding the chosen files are read; every block checksum and file digest"
          + " is checked. Permissions and mtimes are restored, and owners when run as root."
          + " Nothing is ever written outside --target."
    })
final class RestoreCommand implements Callable<Integer> {
  @Mixin ImageArgs image;

  @Option(
      names = "--target",
      paramLabel = "DIR",
      required = true,
      description = "The directory to restore into; created if missing, must be empty unless"
          + " --overwrite.")
  Path target;

  @Option(
      names = "--include",
      paramLabel = "GLOB",
      description =
          "Restore only entries whose relative path, or a parent directory's, matches GLOB;"
              + " repeat for several. As in .gitignore, a GLOB without a '/' matches at any depth"
              + " ('*.conf'), one with a '/' from the top ('etc/*.conf', '/bin'), and a trailing"
              + " '/' directories only; * stays within a name, ** crosses directories. A byte of a"
              + " name that is not"
              + " UTF-8 is written \\xNN, as 'list' prints it; the glob characters *?[]{},\\"
              + " in a name need a backslash before them. Only the catalog pages beneath the"
              + " directories the GLOBs start with are read ('etc' for 'etc/*.conf'; all for"
              + " '*.conf').")
  List<String> includes = new ArrayList<>();

  @Option(
      names = "--overwrite",
      description = "Restore into a non-empty target, replacing files that are in the way.")
  boolean overwrite;

  @Option(
      names = "--numeric-owner",
      description = "As root, give entries the owner and group numbers saved. Without it, an"
          + " entry whose image names its owner (image format 9 on) goes to the user"
          + " and group of those names on this host, where it has them, as tar does.")
  boolean numericOwner;

  @Option(
      names = "--delete",
      description = "Make the target exactly the image's tree: after a restore that succeeded,"
          + " remove from the target what the image does not hold (a directory with all"
          + " beneath it). Symbolic links are removed as links, never followed; nothing outside"
          + " the target is touched. With --dry-run, says what would be removed. Not with"
          + " --include.")
  boolean delete;

  @Option(
      names = "--dry-run",
      description = "Say what would be restored where (files, bytes, other entries, what would"
          + " be left out), after the checks a restore makes first (the target, the"
          + " selection, the base images): reads only the catalog, writes nothing.")
  boolean dryRun;

  @Mixin PipelineArgs pipeline;

  @Mixin ReadArgs read;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr());
    if (delete && includes != null && !includes.isEmpty()) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--delete makes the target"
          + " the whole image's tree, which --include does not restore; drop one of them");
    }
    if (dryRun) {
      RestorePipeline.Planned p;
      TargetMirror.Removed gone = null;
      try (ImageRef ref = image.open(progress)) {
        p = RestorePipeline.dryRun(ref, target, includes, overwrite || delete);
        if (delete) {
          gone = TargetMirror.run(ref, target, false);
        }
      }
      PrintWriter out = spec.commandLine().getOut();
      out.printf(Locale.ROOT, "would restore %s (%s) and %s into %s%s%s%n",
          Sizes.count(p.files(), "file", "files"), Sizes.human(p.bytes()),
          Sizes.count(p.others(), "other entry", "other entries"),
          io.beamsave.transforms.Printable.text(target.toString()),
          p.targetExists() ? "" : " (created)",
          p.leftOut() == 0 ? "" : ", leaving out " + Sizes.count(p.leftOut(), "file", "files")
              + " the save could not read");
      if (gone != null) {
        out.println(removedLine("would remove", gone));
      }
      out.println("dry run: nothing was written");
      return 0;
    }
    RestorePipeline.Outcome o;
    String removed = null;
    String next = null;
    try (ImageRef ref = image.open(progress)) {
      ReadRun.PipelineUse use = read.use(pipeline);
      if (RestorePipeline.literalPaths(includes) == null && includes != null
          && !includes.isEmpty() && !use.here(0)) {
        // A pipeline's patterns are matched against the whole catalog: read it while Beam
        // starts. Otherwise a selection is read page by page, here first.
        ref.readCatalogAhead();
      }
      o = RestorePipeline.run(ref, target, includes, overwrite || delete, numericOwner, use,
          pipeline::options, progress);
      if (delete) {
        removed = removedLine("removed", TargetMirror.run(ref, target, true));
      }
      next = io.beamsave.pipelines.postgres.PostgresSave.nextStep(
          ref.head().catalog().notes(), o.target());
    }
    boolean mended = next != null && next.contains(" saved in backup mode ");
    for (String w : o.warnings()) {
      if (mended && w.contains(" changed while being saved")) {
        // A backup's files change as the server writes them; the WAL in the image mends them.
        w = w.replaceAll(" \\(marked f! in 'list'\\):.*", ", as PostgreSQL wrote them (marked"
            + " f! in 'list'): its recovery from the WAL in the image, when it starts, mends them");
      }
      spec.commandLine().getErr().println("beamsave: warning: " + w);
    }
    spec.commandLine()
        .getOut()
        .println(
            String.format(
                Locale.ROOT,
                "restored %s (%s) and %s into %s in %.2fs",
                Sizes.count(o.files(), "file", "files"),
                Sizes.human(o.bytes()),
                Sizes.count(o.entries() - o.files(), "other entry", "other entries"),
                io.beamsave.transforms.Printable.text(o.target().toString()),
                o.seconds()));
    if (removed != null) {
      spec.commandLine().getOut().println(removed);
    }
    if (next != null && (includes == null || includes.isEmpty())) {
      spec.commandLine().getOut().println("next: " + next);
    }
    return 0;
  }

  private static String removedLine(String verb, TargetMirror.Removed r) {
    return verb + " " + Sizes.count(r.entries(), "entry", "entries")
        + " the image does not hold" + (r.first() == null ? "" : ", e.g. " + r.first());
  }
}
