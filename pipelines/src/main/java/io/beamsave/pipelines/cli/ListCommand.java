package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.transfer.ImageRef;
import io.beamsave.transforms.Printable;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.Entry;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave list}: the catalog as a table. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description =
        "List the entries of an image (type, mode, size, mtime in UTC, path). Reads only the"
            + " trailer and the catalog.")
final class ListCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  @Mixin ImageArgs image;

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

  @Override
  public Integer call() {
    Catalog c;
    try (ImageRef ref = image.open(null)) {
      c = ref.readCatalog();
    }
    PrintWriter out = spec.commandLine().getOut();
    out.printf(
        Locale.ROOT,
        "library %s, codec %s, saved %s UTC, %d entries, %d shards%n",
        Printable.text(c.library()),
        Printable.text(c.codecSpec()),
        time(Math.floorDiv(c.createdMillis(), 1000)),
        c.entries().size(),
        c.shards().size());
    out.printf(Locale.ROOT, "%-4s %-5s %12s  %-19s  %s%n", "type", "mode", "size", "mtime", "path");
    for (Entry e : c.entries()) {
      String type =
          switch (e.type()) {
            case FILE -> e.unreadable() ? "f?" : e.changed() ? "f!" : "f";
            case DIRECTORY -> e.unreadable() ? "d?" : "d";
            case SYMLINK -> "l";
          };
      out.printf(
          Locale.ROOT,
          "%-4s %-5s %12d  %-19s  %s%s%n",
          type,
          String.format("%04o", e.mode()),
          e.size(),
          time(e.mtimeSeconds()),
          e.path(),
          e.linkTarget() == null ? "" : " -> " + e.linkTarget());
    }
    out.printf(
        Locale.ROOT,
        "%d files, %s (f! = changed while being saved, f? = could not be read: not saved,"
            + " d? = could not be wholly listed: holds only what could)%n",
        c.fileCount(),
        Sizes.human(c.rawBytes()));
    return 0;
  }
}
