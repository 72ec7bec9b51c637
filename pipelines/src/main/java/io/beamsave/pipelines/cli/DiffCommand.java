package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.diff.ImageDiff;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** {@code beamsave diff}: what changed between two images. */
@Command(
    name = "diff",
    mixinStandardHelpOptions = true,
    description = {
      "Show what changed from the tree of IMAGE_A to that of IMAGE_B, one line per path:"
          + " + added, - removed, M content changed (a file's bytes, a link's target, a"
          + " device's number), U metadata only (mode, owner, mtime, extended attributes),"
          + " T another kind of entry; a directory's path ends in /. Then a summary. Exit 0"
          + " whether or not anything changed.",
      "Reads the two catalogs side by side, a page at a time. A file is unchanged when its"
          + " bytes are the same pieces of the same image (as an incremental image's unchanged"
          + " files are) or have the same digests; its bytes are read only where the catalogs"
          + " cannot tell (images saved with other shard sizes)."
    },
    footer = {
      "%nExamples:",
      "  beamsave diff /backup/data-20261201T020000Z.bsave /backup/data-20261202T020000Z.bsave",
      "  beamsave diff s3://backups/nightly/data/latest /backup/data.bsave --json"
    })
final class DiffCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "IMAGE_A", description = "The image before. "
      + ImageArgs.IMAGE_HELP)
  String before;

  @Parameters(index = "1", paramLabel = "IMAGE_B", description = "The image after.")
  String after;

  @Mixin BaseLocationArgs bases;

  @Mixin S3Args s3;

  @Mixin KeyArgs keys;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    try (ImageRef a = open(before); ImageRef b = open(after)) {
      ImageDiff.Summary s = ImageDiff.run(a, b, d -> {
        Entry e = d.entry();
        if (json.on()) {
          Map<String, Object> m = JsonOutput.object("difference");
          m.put("change", d.change().name().toLowerCase(Locale.ROOT));
          EntryJson.putName(m, "path", e.path().bytes());
          m.put("entryType", EntryJson.entryType(e.type()));
          if (d.before() != null && d.after() != null && d.change() == ImageDiff.Change.TYPE) {
            m.put("entryTypeBefore", EntryJson.entryType(d.before().type()));
          }
          m.put("size", e.size());
          if (d.changedBytes() >= 0) {
            m.put("changedBytes", d.changedBytes());
          }
          json.emitBuffered(m);
        } else {
          out.write(d.change().marker() + "    " + e.path()
              + (e.type() == EntryType.DIRECTORY ? "/" : "")
              + (d.changedBytes() < 0 ? "" : "  (" + Sizes.human(d.changedBytes()) + " of "
                  + Sizes.human(e.size()) + " changed)")
              + System.lineSeparator());
        }
      });
      out.flush();
      if (json.on()) {
        Map<String, Object> m = JsonOutput.object("diff");
        m.put("before", a.display());
        m.put("after", b.display());
        for (ImageDiff.Change c : ImageDiff.Change.values()) {
          m.put(name(c), s.count(c));
        }
        m.put("addedBytes", s.addedBytes);
        m.put("removedBytes", s.removedBytes);
        m.put("filesRead", s.filesRead);
        json.emit(m);
        json.out().flush();
      } else {
        out.printf(Locale.ROOT, "%s added (%s of files), %s removed (%s), %s changed in"
            + " content, %s in metadata only, %s of another kind%s%n",
            Sizes.count(s.count(ImageDiff.Change.ADDED), "entry", "entries"),
            Sizes.human(s.addedBytes),
            Sizes.count(s.count(ImageDiff.Change.REMOVED), "entry", "entries"),
            Sizes.human(s.removedBytes),
            Sizes.count(s.count(ImageDiff.Change.CONTENT), "entry", "entries"),
            s.count(ImageDiff.Change.METADATA), s.count(ImageDiff.Change.TYPE),
            s.filesRead == 0 ? ""
                : "; " + Sizes.count(s.filesRead, "file", "files") + " compared by reading");
      }
    }
    return 0;
  }

  private static String name(ImageDiff.Change c) {
    return switch (c) {
      case ADDED -> "added";
      case REMOVED -> "removed";
      case CONTENT -> "contentChanged";
      case METADATA -> "metadataChanged";
      case TYPE -> "typeChanged";
    };
  }

  private ImageRef open(String given) {
    String image = StoredImages.resolveLatest(given, s3.settings());
    return ImageRef.of(image, s3.settings(), keys.keys(), spec.commandLine().getErr())
        .withBaseLocations(bases.locations);
  }
}
