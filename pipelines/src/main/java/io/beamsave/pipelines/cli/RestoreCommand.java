package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.restore.Restore;
import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.restore.RestorePolicy;
import io.beamsave.pipelines.restore.RestoreRequest;
import io.beamsave.pipelines.restore.TargetMirror;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

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
          + " is checked. Permissions and mtimes are restored, and owners (by number) when run"
          + " as root. Nothing is ever written outside --target.",
      "An image grants no privilege unless asked: set-id bits, file capabilities, devices and"
          + " trusted./security. attributes are left out, and counted in a warning, unless their"
          + " --restore-* flag or --trust-image is given (docs/security.md, \"What a restore"
          + " grants\")."
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
      hidden = true,
      description = "Owners by the numbers saved: the default; kept for scripts that give it.")
  boolean numericOwner;

  @Option(
      names = "--owner-by-name",
      description = "As root, give an entry whose image names its owner and group (image format"
          + " 9 on) the user and group of those names on this host, where it has them, as tar"
          + " does by default; never user or group 0 unless saved as 0. Without it, owners are"
          + " the numbers saved: a name in an image, which whoever writes images chooses, does"
          + " not choose who owns a file.")
  boolean ownerByName;

  @Option(
      names = "--restore-setid",
      description = "Restore the set-user-ID and set-group-ID bits of files, as root, where the"
          + " owner (group) is restored as saved. Without it they are cleared and counted in a"
          + " warning. As another user they are always cleared.")
  boolean restoreSetid;

  @Option(
      names = "--restore-capabilities",
      description = "Restore file capabilities (security.capability). Without it they are left"
          + " out and counted in a warning.")
  boolean restoreCapabilities;

  @Option(
      names = "--restore-devices",
      description = "Make character and block devices (as root). Without it they are left out"
          + " and counted in a warning; FIFOs are always made.")
  boolean restoreDevices;

  @Option(
      names = "--restore-system-xattrs",
      description = "Restore extended attributes in the trusted. and security. namespaces"
          + " (SELinux labels, IMA), but the capability, which --restore-capabilities grants."
          + " Without it they are left out and counted in a warning.")
  boolean restoreSystemXattrs;

  @Option(
      names = "--trust-image",
      description = "Grant the image everything it asks for: --restore-setid,"
          + " --restore-capabilities, --restore-devices and --restore-system-xattrs, for a"
          + " whole-system restore from an image you know to be yours. Says so when it runs.")
  boolean trustImage;

  @Option(
      names = "--delete",
      description = "Make the target exactly the image's tree: after a restore that succeeded,"
          + " remove from the target what the image does not hold (a directory with all"
          + " beneath it), working beneath the target the restore opened, never its path again."
          + " Links are removed as links, never followed; nothing on another file system (a"
          + " mount point) and nothing in a directory the save could not wholly list (d? in"
          + " 'list') is removed, and both are reported. Refuses / and a mount root reached"
          + " through a link. A target that holds anything needs --overwrite too. With"
          + " --dry-run, lists what would be removed. Not with --include.")
  boolean delete;

  @Option(
      names = "--no-preserve-root",
      description = "Let --delete work in / or in the root of a mounted file system that"
          + " --target reaches through a link.")
  boolean noPreserveRoot;

  @Option(
      names = "--skip-damaged",
      description = "Restore every file whose blocks check, and leave out those with bytes in a"
          + " damaged block (or whose digest does not match): each is named in one line on"
          + " stderr (a \"damaged\" line with --json), the restore finishes, no marker blocks"
          + " the next one, and the exit code is 3. Without it, the first damaged block fails"
          + " the restore.")
  boolean skipDamaged;

  @Option(
      names = "--dry-run",
      description = "Say what would be restored where (files, bytes, other entries, what would"
          + " be left out), after the checks a restore makes first (the target, the"
          + " selection, the base images), and with --delete what would be removed: reads"
          + " only the catalog and the target, writes nothing.")
  boolean dryRun;

  @Mixin PipelineArgs pipeline;

  @Mixin ReadArgs read;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** What a dry run names of what --delete would remove, in text; --json names all. */
  static final int NAMED = 20;

  @Override
  public Integer call() {
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr(), json);
    RestoreRequest request;
    try {
      request = RestoreRequest.of(target).withIncludes(includes).withOverwrite(overwrite)
          .withDelete(delete, noPreserveRoot).withPolicy(policy()).withSkipDamaged(skipDamaged)
          .withUse(read.use(pipeline));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    if (trustImage && !dryRun) {
      json.note("trusting the image: set-id bits, file capabilities, devices and trusted. and"
          + " security. attributes are restored as saved");
    }
    return dryRun ? dryRun(request, progress) : restore(request, progress);
  }

  private RestorePolicy policy() {
    RestorePolicy p = trustImage ? RestorePolicy.trustImage() : RestorePolicy.SAFE;
    p = restoreSetid ? p.with(RestorePolicy.Grant.SETID) : p;
    p = restoreCapabilities ? p.with(RestorePolicy.Grant.CAPABILITIES) : p;
    p = restoreDevices ? p.with(RestorePolicy.Grant.DEVICES) : p;
    p = restoreSystemXattrs ? p.with(RestorePolicy.Grant.SYSTEM_XATTRS) : p;
    return p.withOwnersByName(ownerByName);
  }

  private int dryRun(RestoreRequest request, PrintWriter progress) {
    PrintWriter out = spec.commandLine().getOut();
    Removals named = new Removals(true);
    Restore.Planned planned = Restore.dryRun(() -> image.open(progress), request,
        named.listener());
    RestorePipeline.Planned p = planned.restore();
    TargetMirror.Removed gone = planned.removal();
    String where = io.beamsave.transforms.Printable.text(target.toString());
    if (json.on()) {
      Map<String, Object> m = JsonOutput.object("dryRun");
      m.put("target", where);
      m.put("files", p.files());
      m.put("bytes", p.bytes());
      m.put("otherEntries", p.others());
      m.put("leftOut", p.leftOut());
      m.put("targetExists", p.targetExists());
      m.put("wouldRemove", gone == null ? null : gone.entries());
      json.emit(m);
    } else {
      out.printf(Locale.ROOT, "would restore %s (%s) and %s into %s%s%s%n",
          Sizes.count(p.files(), "file", "files"), Sizes.human(p.bytes()),
          Sizes.count(p.others(), "other entry", "other entries"), where,
          p.targetExists() ? "" : " (created)",
          p.leftOut() == 0 ? "" : ", leaving out " + Sizes.count(p.leftOut(), "file", "files")
              + " the save could not read");
      if (gone != null) {
        out.println(removedLine("would remove", gone));
        named.first.forEach(f -> out.println("  " + f));
        if (gone.entries() > NAMED) {
          out.println("  ... and " + (gone.entries() - NAMED) + " more (--json lists every"
              + " one)");
        }
      }
      out.println("dry run: nothing was written");
    }
    if (gone != null) {
      removalWarnings(gone);
    }
    return 0;
  }

  private int restore(RestoreRequest request, PrintWriter progress) {
    Restore.Result r = Restore.run(() -> image.open(progress), request, pipeline::options,
        progress, new Removals(false).listener());
    RestorePipeline.Outcome o = r.outcome();
    String next = r.next();
    o.warnings().forEach(json::warning);
    String where = io.beamsave.transforms.Printable.text(o.target().toString());
    if (json.on()) {
      Map<String, Object> m = JsonOutput.object("restored");
      m.put("target", where);
      m.put("files", o.files());
      m.put("bytes", o.bytes());
      m.put("otherEntries", o.entries() - o.files());
      m.put("seconds", o.seconds());
      m.put("removed", o.removed() == null ? null : o.removed().entries());
      m.put("damaged", o.damaged().size());
      json.emit(m);
    } else {
      PrintWriter out = spec.commandLine().getOut();
      out.println(String.format(Locale.ROOT, "restored %s (%s) and %s into %s in %.2fs",
          Sizes.count(o.files(), "file", "files"), Sizes.human(o.bytes()),
          Sizes.count(o.entries() - o.files(), "other entry", "other entries"), where,
          o.seconds()));
      if (o.removed() != null) {
        out.println(removedLine("removed", o.removed()));
      }
      if (next != null) {
        out.println("next: " + next);
      }
    }
    if (o.removed() != null) {
      removalWarnings(o.removed());
    }
    return damaged(o);
  }

  /** Names each file left out as damaged; the exit code: 3 if any was, else 0. */
  private int damaged(RestorePipeline.Outcome o) {
    PrintWriter err = spec.commandLine().getErr();
    for (Map.Entry<PathBytes, String> d : o.damaged().entrySet()) {
      err.println("beamsave: damaged, not restored: " + d.getKey() + ": " + d.getValue());
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("damaged");
        EntryJson.putName(m, "path", d.getKey().bytes());
        m.put("message", d.getValue());
        json.emitBuffered(m);
      }
    }
    err.flush();
    if (o.damaged().isEmpty()) {
      return 0;
    }
    json.warning(Sizes.count(o.damaged().size(), "entry", "entries") + " of the image could"
        + " not be restored: their bytes do not read back as saved (named above); all else was"
        + " restored");
    return 3;
  }

  /**
   * What --delete removes, told as it goes: each entry as a JSON line with --json; in a dry
   * run's text, the first {@link #NAMED}.
   */
  private final class Removals {
    private final boolean dryRun;
    private long n;
    /** A dry run's first {@link #NAMED} in text, printed after its summary. */
    final List<PathBytes> first = new ArrayList<>();

    Removals(boolean dryRun) {
      this.dryRun = dryRun;
    }

    void told(PathBytes p) {
      n++;
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("removal");
        EntryJson.putName(m, "path", p.bytes());
        m.put("dryRun", dryRun);
        json.emitBuffered(m);
      } else if (dryRun && n <= NAMED) {
        first.add(p);
      }
    }

    Restore.Listener listener() {
      return new Restore.Listener() {
        @Override
        public void removing(PathBytes path) {
          told(path);
        }
      };
    }
  }

  private void removalWarnings(TargetMirror.Removed r) {
    if (!r.mountsLeft().isEmpty()) {
      json.warning("--delete left " + Sizes.count(r.mountsLeft().size(), "mount point",
          "mount points") + " as " + (r.mountsLeft().size() == 1 ? "it is" : "they are")
          + " (it stays on the target's file system): " + r.mountsLeft().get(0));
    }
    if (r.kept() > 0) {
      json.warning("--delete kept " + Sizes.count(r.kept(), "entry", "entries") + " in"
          + " directories the save could not wholly list (marked d? in 'list'), which the image"
          + " may lack only because the save could not read them, e.g. " + r.firstKept());
    }
  }

  private static String removedLine(String verb, TargetMirror.Removed r) {
    return verb + " " + Sizes.count(r.entries(), "entry", "entries")
        + " the image does not hold" + (r.first() == null ? "" : ", e.g. " + r.first());
  }
}
