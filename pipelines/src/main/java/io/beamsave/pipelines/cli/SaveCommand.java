package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.postgres.Conninfo;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.save.Hooks;
import io.beamsave.pipelines.save.Save;
import io.beamsave.pipelines.save.SaveRequest;
import io.beamsave.pipelines.snapshot.Snapshot;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave save}: libraries into images. */
@Command(
    name = "save",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave save --library /srv/data --image /backup/data.bsave",
      "  beamsave save --library /srv/data --image 's3://backups/nightly/{library}/{library}-{utc}.bsave' --exclude '*.tmp' --exclude-caches",
      "  beamsave save --library /srv/a --library /srv/b --image /backup/ --codec auto:100 --json",
      "  beamsave save --library /srv/data --image /backup/data.bsave -- --runner=FlinkRunner --flinkMaster=flink:8081",
      "  beamsave save --library /srv/data --image '/backup/{library}-{utc}.bsave' --recipient beamsave-pub-...   # write-only",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Save one or more libraries (directory trees) into save images.",
      "Files are packed into shards of --shard-size raw bytes, compressed in parallel in blocks"
          + " of --block-size with --codec, and assembled into one image per library. Symlinks"
          + " are stored as links, never followed; FIFOs and devices are kept, sockets skipped"
          + " with a warning.",
      "With --recipient, --key-file, --password-file, --identity or $BEAMSAVE_PASSWORD, each"
          + " image is encrypted (AES-256-GCM, a data key of its own wrapped for each of them):"
          + " names, sizes and contents are hidden; see docs/security.md. An incremental"
          + " save's base must be encrypted too, and opened by one of the keys given."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the images are complete",
      "1:the save failed (one line names the file and the cause); no image was left"
          + " unfinished",
      "2:usage error",
      "3:the images are complete and usable but partial: --skip-unreadable skipped entries"
          + " or --files-from listed paths the library lacks (each named in a warning)"
    })
final class SaveCommand implements Callable<Integer> {
  @Option(
      names = "--library",
      paramLabel = "DIR",
      required = true,
      description = "A library (directory) to save; repeat for several.")
  List<Path> libraries;

  @Option(
      names = "--image",
      paramLabel = "PATH",
      required = true,
      description =
          "The image file to write; with several libraries, a directory that receives"
              + " <library-dir-name>.bsave per library. An existing image is replaced only once"
              + " the new one is complete, and never one of --base's chain (its base, its"
              + " base's base, to the first), however spelled. {utc} becomes the run's UTC start"
              + " (20261130T021500Z) and {library} each library's directory name, which gives"
              + " each run and library its own image (see 'beamsave prune')."
              + " s3://BUCKET/KEY (or s3://BUCKET/PREFIX with several"
              + " libraries) writes the image to object storage: each shard is uploaded as soon"
              + " as it is compressed, and the image is assembled in the store from them (the"
              + " image never touches the local disk), on every runner.")
  String image;

  @Option(
      names = "--codec",
      paramLabel = "CODEC",
      defaultValue = "zstd:3",
      completionCandidates = SaveCommand.CodecNames.class,
      description =
          "none, lz4, zlib[:1-9], zstd[:1-22], xz[:0-9], auto[:LINK_MBPS], or an IBM i DTACPR name (*NO, *LOW,"
              + " *MEDIUM, *HIGH, *ZLIB); see 'beamsave codecs'. Default: ${DEFAULT-VALUE}.")
  String codec;

  @Option(
      names = "--shard-size",
      paramLabel = "SIZE",
      description =
          "Raw bytes per shard (up to 1GiB), the unit of parallel work; each worker holds one"
              + " shard in memory. Default: 64MiB, or 24MiB for s3:// images (smaller shards reach"
              + " the upload sooner; one that compresses to 5MiB or more is a part of the image's"
              + " upload, a smaller one is sent again at the end). Without it, for an image in"
              + " a file on the DirectRunner, a library's shards are made a multiple of the workers in number"
              + " and equal in whole blocks (no larger than the default), so that the workers"
              + " finish together.")
  String shardSize;

  @Option(
      names = "--block-size",
      paramLabel = "SIZE",
      defaultValue = "1MiB",
      description =
          "Raw bytes per independently compressed block (4KiB-64MiB), the unit of random"
              + " access. Default: ${DEFAULT-VALUE}.")
  String blockSize;

  @Option(
      names = "--staging",
      paramLabel = "DIR|s3://BUCKET/PREFIX",
      description =
          "Where the run keeps its working files (each library's listing and summary; shards"
              + " go straight into <image>.partial, or for s3:// images to objects beside it),"
              + " removed afterwards; every worker must reach it. Default: a hidden directory"
              + " beside the image; for s3:// images the system's temporary directory on the"
              + " DirectRunner, and on other runners a prefix beside the image. An s3:// staging"
              + " (in the image's bucket) also holds the shards.")
  String staging;

  @Option(
      names = "--allow-changing",
      description =
          "Keep files that change while being saved (marked as changed in the image) instead"
              + " of failing.")
  boolean allowChanging;

  @Option(
      names = "--skip-unreadable",
      description =
          "Skip what cannot be read (a file that may not be opened or fails to read, a"
              + " directory that may not be listed) with a warning naming it, instead of failing"
              + " the save. The image records each such entry as unreadable ('?' in 'beamsave"
              + " list'; restore leaves such files out), the report counts them"
              + " (filesUnreadable), and the exit code is 3.")
  boolean skipUnreadable;

  @Option(
      names = "--link-mbps",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "The speed in Mbit/s of the link the image will cross. Tunes --codec auto (the level"
              + " that keeps the cores and the link equally busy) and throttles what an s3://"
              + " save sends, shared by the workers of each JVM, to emulate such a link. Default:"
              + " no link (auto picks its fastest level; uploads go as fast as they can).")
  int linkMbps;

  @Option(
      names = "--report-json",
      paramLabel = "FILE",
      description = "Also write the report as one JSON object to FILE.")
  Path reportJson;

  @Option(
      names = "--metrics-file",
      paramLabel = "FILE",
      description =
          "Also write the run's figures (success, timestamps, duration, per-stage seconds, bytes,"
              + " ratio per library) to FILE in Prometheus' text format, for node_exporter's"
              + " textfile collector (FILE should end in .prom). Written on failure too, with"
              + " beamsave_save_success 0; replaced whole, never half-written.")
  Path metricsFile;

  @Option(
      names = "--snapshot",
      paramLabel = "btrfs|auto",
      description = "Save each library from a read-only snapshot of its file system, taken when"
          + " the save starts and removed when it ends (also when it fails or is interrupted),"
          + " so that every file is saved as it was at that one instant: files that must agree,"
          + " such as a database's, restore consistent. btrfs snapshots the subvolume that holds"
          + " the library, in a directory .beamsave-snapshots beside it; auto takes what the"
          + " library's file system supports and refuses where none is. The image notes the"
          + " snapshot and when it was taken. A snapshot left by a killed save is removed by"
          + " cleanup --at LIBRARY --yes. --before hooks run before the snapshot is taken.")
  String snapshot;

  @Option(
      names = "--tag",
      paramLabel = "TAG",
      description = "Tag each image with TAG (repeatable; letters, digits and . _ : @ + -, up to"
          + " 64): kept in the image, shown by list, and chosen by images --tag and prune --tag"
          + " (which then counts and deletes only images with the tag).")
  List<String> tags = new java.util.ArrayList<>();

  @Option(
      names = "--postgres",
      paramLabel = "CONNINFO",
      description = "The library is the data directory of the running PostgreSQL server"
          + " CONNINFO reaches (as psql takes it: 'host=/var/run/postgresql user=postgres', a"
          + " postgresql:// URI); the save refuses a tablespace of its own and a pg_wal that is"
          + " a link, and leaves out postmaster.pid. With --snapshot: a checkpoint, then the save"
          + " reads the snapshot, and PostgreSQL recovers from the WAL in it as after a crash."
          + " Without: backup mode (pg_backup_start, the files read as the server writes them,"
          + " pg_backup_stop), and the image gets the backup_label and the WAL up to the"
          + " backup's end; this needs the workers in this JVM. Either way PostgreSQL started on"
          + " the restored directory is consistent with no other step. Needs psql, which gets a"
          + " password in CONNINFO in its environment, never on its command line; beamsave's"
          + " own command line shows it, so prefer ~/.pgpass or $PGPASSWORD.")
  String postgres;

  @Mixin SelectArgs select;

  @Mixin BaseArgs incremental;

  @Mixin PipelineArgs pipeline;

  @Mixin JsonOutput json;

  @Mixin S3Args s3;

  @Mixin RecipientArgs crypt;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** What shell completion offers for --codec: each codec at its default level, and auto. */
  static final class CodecNames extends java.util.ArrayList<String> {
    CodecNames() {
      super(List.of("none", "lz4", "zlib:6", "zstd:3", "zstd:19", "xz:6", "auto", "*NO", "*LOW",
          "*MEDIUM", "*HIGH", "*ZLIB"));
    }
  }

  @Option(
      names = "--dry-run",
      description = "Walk the libraries as the save would (excludes, --files-from, the base an"
          + " incremental save would choose) and say what it would save and how much, and for"
          + " an incremental save how much it would find unchanged: nothing is written, no"
          + " lock taken, no file read.")
  boolean dryRun;

  @Option(
      names = "--before",
      paramLabel = "CMD",
      description = "Run CMD with /bin/sh -c before the save (repeatable, in order), told what"
          + " is saved in BEAMSAVE_LIBRARY, BEAMSAVE_LIBRARIES (one a line), BEAMSAVE_IMAGE and"
          + " BEAMSAVE_RUN_ID. If one fails (or outlives --hook-timeout), the save does not"
          + " start and nothing is written. Its output goes to stderr, a line at a time.")
  List<String> before = new java.util.ArrayList<>();

  @Option(
      names = "--after",
      paramLabel = "CMD",
      description = "Run CMD with /bin/sh -c after the save, whether it succeeded, failed or"
          + " was interrupted (repeatable, in order), told as --before's are and also"
          + " BEAMSAVE_RESULT (success, failure or interrupted) and BEAMSAVE_EXIT_CODE. Its"
          + " failure is reported as a warning (and in --json) and does not change the save's"
          + " exit code.")
  List<String> after = new java.util.ArrayList<>();

  @Option(
      names = "--after-snapshot",
      paramLabel = "CMD",
      description = "With --snapshot: run CMD with /bin/sh -c as soon as the snapshots are"
          + " taken, before any file is read (repeatable, in order), told as --before's are."
          + " The checkpoint: an application a --before hook paused may go on, as IBM i's"
          + " SAVACT checkpoint message allows. Its failure is a warning; the save goes on.")
  List<String> afterSnapshot = new java.util.ArrayList<>();

  @Option(
      names = "--hook-timeout",
      paramLabel = "SECONDS",
      defaultValue = "600",
      description = "The time a --before or --after command may take before it and what it"
          + " started are killed. Default: ${DEFAULT-VALUE}.")
  long hookTimeout;

  @Override
  public Integer call() throws IOException {
    CommandLine cli = spec.commandLine();
    Save.Output output = new Save.Output(json::note, json::warning,
        pipeline.progress(cli.getErr(), json), done -> print(done, cli.getOut()),
        line -> {
          cli.getErr().println("beamsave: " + line);
          cli.getErr().flush();
        }, this::printHooks);
    if (dryRun) {
      printDryRun(Save.dryRun(this::request, pipeline::options, output), cli.getOut());
      return 0;
    }
    Save.Result result = Save.run(metricsFile, this::request, pipeline::options, output);
    return result.partial() ? BeamsaveCommand.EXIT_PARTIAL : 0;
  }

  /** The request the options make; what they say wrong is a usage error (exit 2). */
  private SaveRequest request() {
    try {
      return SaveRequest.builder(libraries, image)
          .staging(staging)
          .codec(codec)
          .sizes(shardSize == null ? null : Sizes.parse(shardSize), Sizes.parse(blockSize))
          .linkMbps(linkMbps)
          .select(select.selection())
          .allowChanging(allowChanging)
          .skipUnreadable(skipUnreadable)
          .base(incremental.base, incremental.baseOptional, incremental.fullEvery)
          .encryption(crypt.recipients(), crypt.keys())
          .s3(s3.settings())
          .reports(reportJson, metricsFile)
          .snapshot(snapshot == null ? null : Snapshot.Kind.parse(snapshot))
          .postgres(postgres == null ? null : Conninfo.parse(postgres))
          .tags(tags)
          .hooks(new Hooks.Plan(before, afterSnapshot, after, hookTimeout))
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  /** With --json, a line per hook that ran. */
  private void printHooks(List<Hooks.Ran> ran) {
    if (!json.on()) {
      return;
    }
    for (Hooks.Ran r : ran) {
      Map<String, Object> m = JsonOutput.object("hook");
      m.put("phase", r.phase());
      m.put("index", r.index());
      m.put("command", r.command());
      m.put("exitCode", r.exitCode() == Hooks.TIMED_OUT ? null : r.exitCode());
      m.put("timedOut", r.exitCode() == Hooks.TIMED_OUT);
      m.put("seconds", r.seconds());
      json.emit(m);
    }
  }

  private void printDryRun(java.util.List<Save.Planned> planned, PrintWriter out) {
    for (Save.Planned p : planned) {
      io.beamsave.transforms.save.SaveScan.Found f = p.found();
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("dryRun");
        m.put("library", p.library());
        m.put("image", p.image());
        m.put("base", p.base());
        m.put("entries", f.entries());
        m.put("files", f.files());
        m.put("rawBytes", f.rawBytes());
        m.put("unchangedFiles", f.unchangedFiles());
        m.put("unchangedBytes", f.unchangedBytes());
        json.emit(m);
        continue;
      }
      out.printf(java.util.Locale.ROOT, "%s: %s, %s, %s, to %s%s%n",
          io.beamsave.transforms.Printable.text(p.library()),
          Sizes.count(f.entries(), "entry", "entries"), Sizes.count(f.files(), "file", "files"),
          Sizes.human(f.rawBytes()), io.beamsave.transforms.Printable.text(p.image()),
          p.base() == null ? " (a full save)"
              : " (incremental on " + io.beamsave.transforms.Printable.text(p.base()) + ": "
                  + Sizes.count(f.unchangedFiles(), "file", "files") + ", "
                  + Sizes.human(f.unchangedBytes()) + " unchanged; "
                  + Sizes.count(f.files() - f.unchangedFiles(), "file", "files") + ", "
                  + Sizes.human(f.rawBytes() - f.unchangedBytes()) + " to read)");
    }
    if (!json.on()) {
      out.println("dry run: nothing was written");
    }
  }

  private void print(Save.Result result, PrintWriter out) {
    if (!json.on()) {
      result.report().print(out);
      return;
    }
    Map<String, Object> summary = JsonOutput.object("summary");
    summary.put("start", result.start().toString());
    summary.put("end", result.end().toString());
    summary.putAll(result.report().json());
    json.emit(summary);
  }
}
