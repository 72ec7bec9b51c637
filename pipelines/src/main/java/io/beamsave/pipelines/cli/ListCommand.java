package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.image.CatalogWalk;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.select.Glob;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** {@code beamsave list}: the catalog as a table. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave list /backup/data.bsave",
      "  beamsave list /backup/data/latest --sources",
      "  beamsave list /backup/data/latest home/alice/mail",
      "  beamsave list s3://backups/nightly/data/latest --json | jq -r 'select(.type==\"entry\") | .path'"
    },
    description =
        "List the entries of an image (type, mode, size, mtime in UTC, path), in path order,"
            + " or only those at and beneath PATH. Reads only the trailer and the catalog (an"
            + " incremental image's catalog lists the whole tree: no base is read), page by"
            + " page.")
final class ListCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  @Mixin ImageArgs image;

  @Mixin JsonOutput json;

  @Option(
      names = "--sources",
      description =
          "Also show where each file's bytes are: in this image ('.') or, for a file an"
              + " incremental save found unchanged, in which base image (its name); for a"
              + " large file that changed, each image that holds some of its ranges, joined"
              + " by '+'. Reads no base.")
  boolean sources;

  /**
   * Seconds since the epoch in UTC, for any value a catalog may hold: past the years Java's
   * clock reaches, as the raw count.
   */
  static String time(long seconds) {
    try {
      String t = TIME.format(Instant.ofEpochSecond(seconds));
      return t.length() == 19 ? t : "@" + seconds;
    } catch (java.time.DateTimeException outOfRange) {
      return "@" + seconds;
    }
  }

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * The images holding a file's bytes: "." for this one, else its base's file name; several,
   * joined by "+", for a file whose unchanged ranges stay in a base.
   */
  static String source(Catalog c, Entry e) {
    if (!e.isFile()) {
      return "";
    }
    List<String> names = new ArrayList<>();
    for (int i : EntryJson.imagesOf(e)) {
      String at = EntryJson.location(c, i);
      names.add(at.substring(at.lastIndexOf('/') + 1));
    }
    return names.isEmpty() ? "." : String.join("+", names);
  }

  @Parameters(
      index = "1..*",
      arity = "0..*",
      paramLabel = "PATH",
      description =
          "List only PATH (a path in the image, as 'list' prints it: a byte that is not UTF-8"
              + " as \\xNN) and what is beneath it; a PATH with wildcards is a pattern, as"
              + " 'restore --include' takes them ('*.conf' at any depth, 'etc/**/*.conf'"
              + " beneath etc), listing what matches and what is beneath it. Several are"
              + " listed in turn. Of a paged catalog (images saved since format version 5) only"
              + " the pages that can hold them are read.")
  List<String> paths = new ArrayList<>();

  @Override
  public Integer call() {
    String shifted = image.shiftedPositional();
    if (shifted != null) {
      paths.add(0, shifted);
    }
    List<PathBytes> roots = new ArrayList<>();
    List<Glob> patterns = new ArrayList<>();
    for (String p : paths) {
      boolean pattern = p.chars().anyMatch(c -> "*?[]{}".indexOf(c) >= 0);
      Glob glob = null;
      if (pattern) {
        try {
          glob = Glob.compile(p, "PATH");
        } catch (IllegalArgumentException e) {
          throw new BeamsaveException(e.getMessage());
        }
      }
      PathBytes root = pattern ? Glob.literalDirectory(p) : parsePath(p);
      roots.add(root == null ? PathBytes.of("") : root);
      patterns.add(glob);
    }
    if (roots.isEmpty()) {
      roots.add(PathBytes.of(""));
      patterns.add(null);
    }
    PrintWriter out = spec.commandLine().getOut();
    try (ImageRef ref = image.open(null)) {
      // The entries stream page by page: a catalog of any size lists in the memory of a page.
      Lister lister = new Lister(out);
      ref.walkEach(roots, lister::head, i -> lister.under(paths.isEmpty() ? "" : paths.get(i),
          patterns.get(i)));
      lister.end();
    }
    return 0;
  }

  /** What an entry that is no file, directory or link is, in words. */
  static String kind(Entry e) {
    return switch (e.type()) {
      case FIFO -> "FIFO";
      case CHAR_DEVICE -> "character device";
      case BLOCK_DEVICE -> "block device";
      case DIRECTORY -> "directory";
      case SYMLINK -> "symbolic link";
      case FILE, HARDLINK -> "file";
    };
  }

  static PathBytes parsePath(String text) {
    String p = text;
    while (p.endsWith("/") && p.length() > 1) {
      p = p.substring(0, p.length() - 1);
    }
    p = p.startsWith("/") ? p.substring(1) : p;
    try {
      return PathBytes.of(Printable.parse(p));
    } catch (IllegalArgumentException e) {
      throw new BeamsaveException("PATH '" + text + "': " + e.getMessage());
    }
  }

  /** Prints the head once the catalog's head is known, then each entry as it comes. */
  private final class Lister implements CatalogWalk.Visitor {
    private final PrintWriter out;
    private Catalog c;
    private String sourceColumn;
    private int sourceWidth;
    private long files;
    private long bytes;
    private long entries;

    /** The PATH being listed, and the entries listed before it. */
    private String given = "";
    private boolean givenPattern;
    private long before;

    Lister(PrintWriter out) {
      this.out = out;
    }

    /** The visitor of the next PATH: {@code pattern}'s matches, or all it is handed. */
    CatalogWalk.Visitor under(String path, Glob pattern) {
      checkFound();
      given = path;
      givenPattern = pattern != null;
      before = entries;
      if (pattern == null) {
        return this;
      }
      return e -> {
        if (pattern.matchesSelfOrParent(e.path(), e.type() == EntryType.DIRECTORY)) {
          visit(e);
        }
      };
    }

    private void checkFound() {
      if (!given.isEmpty() && entries == before) {
        out.flush();
        json.out().flush();
        throw new BeamsaveException(givenPattern
            ? "no entry of " + image.image() + " matches '" + given + "'"
            : image.image() + " holds no entry '" + given + "'");
      }
    }

    void head(CatalogHead h) {
      c = h.catalog();
      if (json.on()) {
        Map<String, Object> head = JsonOutput.object("image");
        head.put("image", image.image());
        head.put("library", c.library());
        head.put("codec", c.codecSpec());
        head.put("created", Instant.ofEpochMilli(c.createdMillis()).toString());
        head.put("entries", h.totals().entries());
        head.put("files", h.totals().files());
        head.put("rawBytes", h.totals().rawBytes());
        head.put("shards", c.shards().size());
        head.put("blockSize", c.blockSize());
        head.put("shardSize", c.shardSize());
        head.put("imageId", c.id().toString());
        head.put("depth", c.depth());
        head.put("bases", c.bases().stream().map(Catalog.Base::location).toList());
        head.put("notes", c.notes());
        json.emit(head);
        return;
      }
      out.printf(
          Locale.ROOT,
          "library %s, codec %s, saved %s UTC, %s, %s%n",
          Printable.text(c.library()),
          Printable.text(c.codecSpec()),
          time(Math.floorDiv(c.createdMillis(), 1000)),
          Sizes.count(h.totals().entries(), "entry", "entries"),
          Sizes.count(c.shards().size(), "shard", "shards"));
      String snapshot = c.notes().get(io.beamsave.transforms.image.catalog.Notes.SNAPSHOT);
      if (snapshot != null) {
        out.printf(Locale.ROOT, "read from a %s snapshot taken at %s%n", Printable.text(snapshot),
            Printable.text(c.notes().getOrDefault(
                io.beamsave.transforms.image.catalog.Notes.SNAPSHOT_TAKEN, "?")));
      }
      for (Map.Entry<String, String> n : c.notes().entrySet()) {
        if (!n.getKey().startsWith(io.beamsave.transforms.image.catalog.Notes.SNAPSHOT)) {
          out.printf(Locale.ROOT, "note %s: %s%n", n.getKey(), Printable.text(n.getValue()));
        }
      }
      if (c.incremental()) {
        out.printf(Locale.ROOT, "incremental (save %d of its chain): %s of its files' bytes are"
            + " in %d base image%s, e.g. %s%n", c.depth(),
            Sizes.human(h.totals().rawBytes() - h.totals().ownBytes()),
            c.bases().size(), c.bases().size() == 1 ? "" : "s",
            Printable.text(c.bases().get(0).location()));
      }
      int width = 0;
      if (sources) {
        for (Catalog.Base b : c.bases()) {
          width = Math.max(width, b.location().length() - b.location().lastIndexOf('/') - 1);
        }
      }
      sourceWidth = Math.max(6, width);
      sourceColumn = sources ? "%-" + sourceWidth + "s  " : "%s";
      out.printf(Locale.ROOT, "%-4s %-5s %12s  %-19s  " + sourceColumn + "%s%n", "type", "mode",
          "size", "mtime", sources ? "source" : "", "path");
    }

    @Override
    public void visit(Entry e) {
      entries++;
      if (e.isFile()) {
        files++;
        bytes += e.size();
      }
      if (json.on()) {
        json.emitBuffered(EntryJson.entry(e, sources ? c : null));
        return;
      }
      // Built by hand and written without a flush per line: a million entries took 10 s
      // through printf, whose format parsing and autoflush cost more than the reading.
      line.setLength(0);
      String type =
          switch (e.type()) {
            case FILE -> e.unreadable() ? "f?" : e.changed() ? "f!" : "f";
            case DIRECTORY -> e.unreadable() ? "d?" : "d";
            case SYMLINK -> "l";
            case HARDLINK -> "h";
            case FIFO -> "p";
            case CHAR_DEVICE -> "c";
            case BLOCK_DEVICE -> "b";
          };
      pad(line.append(type), 5);
      String mode = Integer.toOctalString(e.mode());
      line.append("0000", 0, Math.max(0, 4 - mode.length())).append(mode);
      pad(line, 11);
      String size = Long.toString(e.size());
      line.append("            ", 0, Math.max(0, 12 - size.length())).append(size).append("  ");
      if (e.mtimeSeconds() != lastSeconds) {
        lastSeconds = e.mtimeSeconds();
        lastTime = time(lastSeconds);
      }
      int at = line.length();
      line.append(lastTime);
      pad(line, at + 19).append("  ");
      if (sources) {
        at = line.length();
        line.append(Printable.text(source(c, e)));
        pad(line, at + sourceWidth).append("  ");
      }
      line.append(e.path());
      if (e.isHardLink()) {
        line.append(" link to ").append(e.linkTarget());
      } else if (e.linkTarget() != null) {
        line.append(" -> ").append(e.linkTarget());
      }
      line.append(System.lineSeparator());
      out.write(line.toString());
    }

    private final StringBuilder line = new StringBuilder(128);
    private long lastSeconds = Long.MIN_VALUE;
    private String lastTime;

    private StringBuilder pad(StringBuilder b, int width) {
      while (b.length() < width) {
        b.append(' ');
      }
      return b;
    }

    void end() {
      out.flush();
      json.out().flush();
      checkFound();
      if (json.on()) {
        return;
      }
      out.printf(
          Locale.ROOT,
          "%s, %s (f! = changed while being saved, f? = could not be read: not saved,"
              + " d? = could not be wholly listed: holds only what could)%n",
          Sizes.count(files, "file", "files"),
          Sizes.human(bytes));
    }
  }
}
