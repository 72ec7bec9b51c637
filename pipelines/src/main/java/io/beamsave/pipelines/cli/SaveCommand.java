package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.save.SaveKeys;
import io.beamsave.pipelines.save.SavePipeline;
import io.beamsave.pipelines.save.SaveReport;
import io.beamsave.pipelines.transfer.Ledger;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.PathBytes;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ImageSummary;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.save.Unreadable;
import io.beamsave.transforms.select.Excludes;
import io.beamsave.transforms.select.FilesFrom;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.transfer.ImageUpload;
import io.beamsave.transforms.transfer.TransferCodec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.beam.sdk.options.PipelineOptions;
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
          + " are stored as links, never followed; FIFOs, sockets and devices are skipped.",
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
              + " the new one is complete. {utc} becomes the run's UTC start"
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
              + " upload, a smaller one is sent again at the end).")
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
      names = "--exclude",
      paramLabel = "GLOB",
      description =
          "Leave out entries whose path in the library matches GLOB, and everything under a"
              + " directory that does; repeat for several. As in .gitignore, a GLOB without a '/'"
              + " matches at any depth ('*.tmp', 'node_modules'), one with a '/' from the"
              + " library's top ('/build', 'var/log/*.gz'), and a trailing '/' directories only"
              + " ('cache/'); * stays within a name, ** crosses directories, and a byte of a name"
              + " that is not UTF-8 is written \\xNN. beamsave's own files (images, partial"
              + " images, locks, the ledger, staging) are always left out when they lie inside"
              + " the library.")
  List<String> excludes = new ArrayList<>();

  @Option(
      names = "--exclude-file",
      paramLabel = "FILE",
      description =
          "Read --exclude patterns from FILE, one per line; blank lines and lines starting with"
              + " '#' are skipped. Repeat for several files.")
  List<Path> excludeFiles = new ArrayList<>();

  @Option(
      names = "--exclude-caches",
      description =
          "Leave out the contents of directories holding a CACHEDIR.TAG file (the Cache"
              + " Directory Tagging convention; the tag file itself is kept), as tar and restic"
              + " do.")
  boolean excludeCaches;

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
      names = "--files-from",
      paramLabel = "FILE",
      description =
          "Save only the paths FILE lists ('-' reads the list from standard input), one per"
              + " line, relative to the library (to each, with several) or absolute beneath it;"
              + " blank lines and lines starting with '#' are skipped (list such a name as"
              + " './#name'), a '..' component is refused. A listed"
              + " directory brings everything under it, the directories on the way are saved as"
              + " directories, and --exclude still applies. A listed path the library lacks is"
              + " a warning naming the line, and the exit code is 3.")
  String filesFrom;

  @Option(
      names = "--from0",
      description =
          "The --files-from list is separated by NUL bytes, not lines (as 'find -print0'"
              + " writes it, and rsync's --from0 reads it), so it may name any file; no comments.")
  boolean from0;

  @Option(
      names = "--base",
      paramLabel = "IMAGE|latest",
      description =
          "Save incrementally against IMAGE (a path, s3://..., or DIR/latest): a file whose"
              + " type, size, mode, mtime, ctime and inode are those IMAGE recorded is not read"
              + " again but referenced in IMAGE (or in the image IMAGE references for it); the"
              + " rest is saved as usual. The new image still lists the whole tree, and list,"
              + " verify and restore read it alone, opening its bases as needed. 'latest' is"
              + " the newest readable image of the series --image joins (as {library}-{utc}.bsave"
              + " makes one per run), for each library. Bases must be kept: 'beamsave prune'"
              + " keeps every image a kept image needs, and 'beamsave consolidate' folds a"
              + " chain into one full image.")
  String base;

  @Option(
      names = "--base-optional",
      description =
          "Where --base has no usable image (none yet, another library's, unreadable), save"
              + " that library whole and say so, instead of failing.")
  boolean baseOptional;

  @Option(
      names = "--full-every",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "With --base: every Nth save of a chain is a full one (the base's chain already has"
              + " N-1 incremental saves). Default: 0, never.")
  int fullEvery;

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

  private void warn(String message) {
    json.warning(message);
  }


  /** What an exclude that matched nothing may have meant. */
  static String hint(String pattern) {
    String p = pattern.replaceAll("/+$", "");
    if (p.startsWith("/")) {
      return "a pattern starting with '/' is matched from the library's top only";
    }
    if (p.contains("/")) {
      return "a pattern with a '/' is matched from the library's top ('**/" + p
          + "' matches at any depth)";
    }
    if (p.startsWith("*")) {
      return "no name in the library matches it";
    }
    return "a pattern matches whole names ('*" + p + "' matches names ending so)";
  }

  /** The --exclude patterns, then those of each --exclude-file. */
  private List<String> excludePatterns() {
    List<String> all = new ArrayList<>(excludes);
    for (Path f : excludeFiles) {
      List<String> lines;
      try {
        lines = java.nio.file.Files.readAllLines(f, java.nio.charset.StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw BeamsaveException.io("cannot read --exclude-file", f, e);
      }
      for (int n = 0; n < lines.size(); n++) {
        String p = n == 0 && lines.get(0).startsWith("\uFEFF") ? lines.get(0).substring(1)
            : lines.get(n);
        // As .gitignore: trailing blanks go unless a backslash quotes the last one.
        int end = p.length();
        while (end > 0 && (p.charAt(end - 1) == ' ' || p.charAt(end - 1) == '\t')
            && !(end > 1 && p.charAt(end - 2) == '\\')) {
          end--;
        }
        p = p.substring(0, end);
        if (p.isEmpty() || p.startsWith("#")) {
          continue;
        }
        String where = "--exclude-file " + f + " line " + (n + 1);
        if (p.startsWith("!")) {
          throw new BeamsaveException(where + ": '" + p + "': negation ('!') is not"
              + " supported; write only what to leave out (a leading '!' in a name: '\\!')");
        }
        try {
          io.beamsave.transforms.select.Glob.compile(p, where);
        } catch (IllegalArgumentException e) {
          throw new BeamsaveException(e.getMessage());
        }
        all.add(p);
      }
    }
    return all;
  }

  @Override
  public Integer call() throws IOException {
    Instant began = Instant.now();
    try {
      return save();
    } catch (RuntimeException | IOException e) {
      if (metricsFile != null) {
        // A failure is news for the monitoring too; what it was is on stderr.
        try {
          io.beamsave.pipelines.save.SaveMetrics.write(metricsFile, null, began, Instant.now());
        } catch (RuntimeException unwritable) {
          e.addSuppressed(unwritable);
        }
      }
      throw e;
    }
  }

  private Integer save() throws IOException {
    if (metricsFile != null) {
      Path dir = metricsFile.toAbsolutePath().getParent();
      if (!java.nio.file.Files.isDirectory(dir) || !java.nio.file.Files.isWritable(dir)) {
        // Found out before the save, not after a good one.
        throw new BeamsaveException("--metrics-file " + metricsFile + ": " + dir
            + (java.nio.file.Files.isDirectory(dir) ? " is not writable" : " is no directory"));
      }
    }
    PrintWriter out = spec.commandLine().getOut();
    PipelineOptions options = pipeline.options();
    boolean inThisJvm = SavePipeline.runsInThisJvm(options);
    SaveSpec save;
    try {
      ImageUpload.Options upload =
          new ImageUpload.Options(TransferCodec.NONE, ImageUpload.DEFAULT_PART, 4, linkMbps, false);
      save =
          SavePipeline.spec(libraries, image, staging, s3.settings(), inThisJvm, upload)
              .withCodec(Codecs.forLink(codec, linkMbps))
              .withSizes(shardSize != null ? Sizes.parse(shardSize)
                  : SavePipeline.defaultShardSize(image), Sizes.parse(blockSize))
              .withAllowChanging(allowChanging)
              .withExcludes(Excludes.of(excludePatterns(), excludeCaches))
              .withSkipUnreadable(skipUnreadable);
      save = withFilesFrom(save);
      if (base == null && (baseOptional || fullEvery != 0)) {
        throw new BeamsaveException((baseOptional ? "--base-optional" : "--full-every")
            + " needs --base IMAGE|latest");
      }
      if (fullEvery < 0) {
        throw new BeamsaveException("--full-every " + fullEvery + ": give 0 (never) or more");
      }
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException(e.getMessage());
    }
    // The walk overlaps reading the base images' catalogs and the start-up of Beam and its
    // runner, where the runner's workers run here.
    List<Recipient> recipients = crypt.recipients();
    ListLibrary.WalkedAhead walked = inThisJvm ? ListLibrary.walkAhead(save) : null;
    java.util.Map<String, Catalog> bases = new java.util.HashMap<>();
    save = io.beamsave.pipelines.save.BaseImages.apply(save, base, baseOptional, fullEvery,
        s3.settings(), crypt.keys(), !recipients.isEmpty(), bases, json::note, inThisJvm);
    save = SaveKeys.apply(save, recipients, bases);
    Instant start = Instant.now();
    SavePipeline.Outcome outcome = SavePipeline.run(
        save, options, pipeline.progress(spec.commandLine().getErr(), json), walked);
    Instant end = Instant.now();
    SaveReport report = new SaveReport(outcome);
    if (metricsFile != null) {
      io.beamsave.pipelines.save.SaveMetrics.write(metricsFile, report, start, end);
    }
    List<String> patterns = save.excludes().patterns();
    for (int i = 0; i < patterns.size(); i++) {
      if (outcome.job().counter(StageMetrics.excludedBy(i)) == 0) {
        String p = patterns.get(i);
        warn("--exclude '" + p + "' matched nothing; " + hint(p));
      }
    }
    long changed = report.json().get("filesChanged") instanceof Long l ? l : 0;
    if (changed > 0) {
      warn(changed + " file(s) changed while being saved; marked in the image");
    }
    boolean partial = warnPartial(save, outcome);
    if (json.on()) {
      java.util.Map<String, Object> summary = JsonOutput.object("summary");
      summary.put("start", start.toString());
      summary.put("end", end.toString());
      summary.putAll(report.json());
      json.emit(summary);
    } else {
      out.println(SaveReport.header());
      report.rows().forEach(out::println);
      out.println(report.stagesLine());
      for (ImageSummary s : outcome.images()) {
        out.println("image: " + Printable.text(s.image()));
        if (!s.base().isEmpty()) {
          out.println("incremental: " + Sizes.human(s.referencedBytes()) + " of unchanged files"
              + " referenced in " + Printable.text(s.base()));
        }
      }
    }
    if (report.unreadableLine() != null && !json.on()) {
      out.println(report.unreadableLine());
    }
    if (reportJson != null) {
      report.writeJson(reportJson);
    }
    for (ImageSummary s : outcome.images()) {
      // An image in object storage was uploaded while it was saved.
      String kind = ObjectUri.isObject(s.image()) ? "save-upload" : "save";
      String codec = save.codec().spec();
      Ledger.Record record = new Ledger.Record(
          kind, s.library(), codec, "none", Ledger.strategy(kind, codec, "none"), start, end,
          outcome.job().seconds(), s.rawBytes(), s.imageBytes(), s.image(),
          s.base().isEmpty() ? null : s.base(), s.referencedBytes());
      Ledger.append(Ledger.besideImage(s.image()), save.store(),
          recipients.isEmpty() ? record : record.encrypted());
    }
    return partial ? BeamsaveCommand.EXIT_PARTIAL : 0;
  }

  /** The lines of the --files-from list, kept to name them in warnings. */
  private List<FilesFrom.Line> listed = List.of();

  /** {@code save} restricted to what --files-from lists, if given. */
  private SaveSpec withFilesFrom(SaveSpec save) {
    if (filesFrom == null) {
      if (from0) {
        throw new BeamsaveException("--from0 needs --files-from FILE");
      }
      return save;
    }
    byte[] content;
    try {
      content = filesFrom.equals("-") ? System.in.readAllBytes()
          : java.nio.file.Files.readAllBytes(Path.of(filesFrom));
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read --files-from", filesFrom, e);
    }
    listed = FilesFrom.lines(content, from0);
    // An absolute line may name the library as given or as resolved (the spec holds that).
    java.util.Map<String, List<byte[]>> roots = new java.util.LinkedHashMap<>();
    int i = 0;
    for (SaveSpec.Library lib : save.libraries().values()) {
      roots.put(lib.name(), List.of(Dir.bytesOf(lib.rootPath()),
          Dir.bytesOf(libraries.get(i++).toAbsolutePath().normalize())));
    }
    return save.withFilesFrom(FilesFrom.select("--files-from " + filesFrom, listed, roots));
  }

  /**
   * Warns about each entry the save skipped and each listed path no library held; returns
   * whether there was any, which makes the image partial.
   */
  private boolean warnPartial(SaveSpec save, SavePipeline.Outcome outcome) {
    boolean partial = false;
    java.util.Map<Integer, Integer> missingIn = new java.util.HashMap<>();
    for (ImageSummary s : outcome.images()) {
      String root = Printable.bytes(Dir.bytesOf(save.library(s.library()).rootPath()));
      for (Unreadable u : s.unreadable()) {
        warn("cannot read " + root + (u.path().isEmpty() ? "" : "/") + u.path() + ": "
            + u.reason() + "; skipped");
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
        warn("--files-from " + filesFrom + " line " + line.number()
            + ": '" + Printable.bytes(line.path()) + "' is not in "
            + (lookedIn == 1 && outcome.images().size() == 1 ? "the library" : "any library")
            + "; skipped");
        partial = true;
      }
    }
    return partial;
  }
}
