package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.stored.Lineage;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.locks.Leftovers;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.crypt.KeyException;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.store.Location;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave images}: what a directory or prefix of scheduled saves holds. */
@Command(
    name = "images",
    mixinStandardHelpOptions = true,
    description = {
      "List every image under a directory or s3:// prefix, at any depth, grouped by library"
          + " and newest first: when it was saved, its size, the raw bytes it holds, ratio,"
          + " codec and status.",
      "Status is ok; partial (entries the save could not read, --skip-unreadable); changed"
          + " (files changed while being saved, kept as read); encrypted (no key given that"
          + " opens it: its size, time and chain are shown, what it holds is not); in progress (an"
          + " upload or save to it is running); transfer-compressed (stored compressed in"
          + " transfer: download to read its catalog); missing base (an image it needs is not"
          + " stored under --at); or damaged, with the reason (prune neither counts nor deletes"
          + " a damaged image, and latest passes over it). Only each image's trailer and catalog"
          + " are read.",
      "Chain is full, 'full, from NAME' (consolidated from the image NAME), or 'incremental N"
          + " on NAME': N saves from a full one, NAME the image it was saved against."
    },
    footer = {
      "%nExamples:",
      "  beamsave images --at /backup/nightly",
      "  beamsave images --at s3://backups/nightly --json | jq 'select(.status != \"ok\")'",
      "  beamsave verify s3://backups/nightly/data/latest   # the newest image of 'data'"
    })
final class ImagesCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  @Option(names = "--at", paramLabel = "DIR|s3://BUCKET/PREFIX", required = true,
      description = "Where the images are.")
  String at;

  @Option(names = "--tag", paramLabel = "TAG",
      description = "Only images tagged TAG (save --tag; repeatable: any of them). An encrypted"
          + " image's tags are in its catalog: without its key it is not shown.")
  List<String> tags = new ArrayList<>();

  @Mixin S3Args s3;

  @Mixin KeyArgs keys;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * One image and what its catalog says; {@code lineage} null where the catalog did not read,
   * {@code missingBases} the bases of it that are not stored under --at.
   */
  record Row(StoredImages.Image image, String library, String codec, long rawBytes,
      long ownRawBytes, long files, String status, Lineage lineage,
      List<Catalog.Base> missingBases) {
    Row withMissingBases(List<Catalog.Base> missing) {
      boolean intact = status.equals("ok") || status.startsWith("changed")
          || status.startsWith("partial");
      return new Row(image, library, codec, rawBytes, ownRawBytes, files,
          intact && !missing.isEmpty() ? "missing base" : status, lineage, missing);
    }
  }

  @Override
  public Integer call() {
    at = Location.of(at).normalized().toString();
    Map<String, List<StoredImages.Image>> series = StoredImages.list(at, s3.settings());
    List<Row> all = new ArrayList<>();
    for (List<StoredImages.Image> images : series.values()) {
      for (StoredImages.Image i : images) {
        all.add(read(i));
      }
    }
    // Bases are matched by id, as prune and restore's search beside the image find them.
    Map<ImageId, String> stored = new HashMap<>();
    for (Row r : all) {
      if (r.lineage() != null) {
        stored.putIfAbsent(r.lineage().id(), r.image().uri());
      }
    }
    if (!tags.isEmpty()) {
      // After the bases are known: a tagged image's untagged base is stored, not missing.
      all.removeIf(r -> r.lineage() == null || !r.lineage().taggedAny(tags));
    }
    Map<String, List<Row>> byLibrary = new TreeMap<>();
    for (Row r : all) {
      List<Catalog.Base> missing = new ArrayList<>();
      if (r.lineage() != null) {
        r.lineage().bases().stream().filter(b -> !stored.containsKey(b.id())).forEach(missing::add);
      }
      byLibrary.computeIfAbsent(r.library(), k -> new ArrayList<>())
          .add(r.withMissingBases(missing));
    }
    byLibrary.values().forEach(l -> l.sort(
        Comparator.comparing((Row r) -> r.image().time()).reversed()
            .thenComparing(r -> r.image().uri())));
    PrintWriter out = spec.commandLine().getOut();
    Leftovers.Found left = Leftovers.find(at, s3.settings());
    if (json.on()) {
      byLibrary.values().forEach(rows -> rows.forEach(r -> json.emit(toJson(r, stored))));
      if (!left.leftovers().isEmpty()) {
        Map<String, Object> m = JsonOutput.object("leftovers");
        m.put("count", left.leftovers().size());
        m.put("bytes", left.bytes());
        m.put("command", cleanup());
        json.emit(m);
      }
      return 0;
    }
    if (byLibrary.isEmpty()) {
      out.println("no images under " + at);
      printLeftovers(out, left);
      return 0;
    }
    int count = 0;
    for (Map.Entry<String, List<Row>> lib : byLibrary.entrySet()) {
      List<Row> rows = lib.getValue();
      long total = rows.stream().mapToLong(r -> r.image().bytes()).sum();
      out.printf(Locale.ROOT, "library %s: %d image%s, %s%n", Printable.text(lib.getKey()),
          rows.size(), rows.size() == 1 ? "" : "s", Sizes.human(total));
      List<String> chains = rows.stream().map(r -> chain(r, stored)).toList();
      // As wide as this library's longest chain, so that the image column stays aligned.
      int chainWidth = Math.max("chain".length(),
          chains.stream().mapToInt(String::length).max().orElse(0));
      String row = "  %-19s  %10s  %10s  %10s  %6s  %-8s  %-12s  %-" + chainWidth
          + "s  %s%n";
      out.printf(Locale.ROOT, row, "saved (UTC)", "size", "tree", "new", "ratio", "codec",
          "status", "chain", "image");
      for (int n = 0; n < rows.size(); n++) {
        Row r = rows.get(n);
        out.printf(Locale.ROOT, row,
            TIME.format(r.image().time()), Sizes.human(r.image().bytes()),
            r.rawBytes() < 0 ? "-" : Sizes.human(r.rawBytes()),
            r.rawBytes() < 0 ? "-" : Sizes.human(r.ownRawBytes()),
            // Of an incremental image the catalog of the whole tree weighs against the few
            // bytes it holds: a ratio there says nothing about compression.
            r.rawBytes() < 0 || r.ownRawBytes() != r.rawBytes() ? "-"
                : String.format(Locale.ROOT, "%.2f", ratio(r)),
            r.codec() == null ? "-" : Printable.text(r.codec()), Printable.text(r.status()),
            Printable.text(chains.get(n)), Printable.text(r.image().uri()));
        count++;
      }
    }
    out.printf(Locale.ROOT, "%d image%s under %s%n", count, count == 1 ? "" : "s", at);
    printLeftovers(out, left);
    return 0;
  }

  private String cleanup() {
    return "beamsave cleanup --at " + at + " --yes";
  }

  /** One line, if failed or killed runs left anything here. */
  private void printLeftovers(PrintWriter out, Leftovers.Found left) {
    int n = left.leftovers().size();
    if (n > 0) {
      out.printf(Locale.ROOT, "%d leftover%s of failed or killed runs (%s): '%s' removes %s%n",
          n, n == 1 ? "" : "s", Sizes.human(left.bytes()), cleanup(), n == 1 ? "it" : "them");
    }
  }

  /** What the image's own shards hold against its size: an incremental's unchanged files are not in it. */
  private static double ratio(Row r) {
    return r.image().bytes() == 0 ? 0 : (double) r.ownRawBytes() / r.image().bytes();
  }

  /**
   * Where an image stands in its chain: {@code full}, {@code full, from NAME} (consolidated),
   * or {@code incremental N on NAME}, NAME the direct base as stored here (else as it was
   * saved, and marked missing); {@code -} where the catalog did not read.
   */
  private static String chain(Row r, Map<ImageId, String> stored) {
    Lineage l = r.lineage();
    if (l == null) {
      return "-";
    }
    if (l.directBase() == null) {
      return l.consolidated() ? "full, from " + nameOr(stored.get(l.origin()), l.origin()) : "full";
    }
    Catalog.Base b = l.directBase();
    String where = stored.get(b.id());
    return "incremental " + l.depth() + " on "
        + (where != null ? name(where) : name(b.location()) + " (missing)");
  }

  private static String nameOr(String uri, ImageId id) {
    return uri != null ? name(uri) : id.toString().substring(0, 12);
  }

  private static String name(String uri) {
    return uri.substring(uri.lastIndexOf('/') + 1);
  }

  private Map<String, Object> toJson(Row r, Map<ImageId, String> stored) {
    Map<String, Object> m = JsonOutput.object("image");
    m.put("library", r.library());
    m.put("image", r.image().uri());
    m.put("series", r.image().series());
    m.put("time", r.image().time().toString());
    m.put("bytes", r.image().bytes());
    m.put("rawBytes", r.rawBytes() < 0 ? null : r.rawBytes());
    m.put("ownRawBytes", r.rawBytes() < 0 ? null : r.ownRawBytes());
    m.put("files", r.files() < 0 ? null : r.files());
    m.put("ratio", r.rawBytes() < 0 ? null : Math.round(ratio(r) * 1000) / 1000.0);
    m.put("codec", r.codec());
    m.put("status", r.status());
    m.put("tags", r.lineage() == null ? null : r.lineage().tags());
    Lineage l = r.lineage();
    m.put("imageId", l == null ? null : l.id().toString());
    m.put("depth", l == null ? null : l.depth());
    m.put("origin", l == null || l.origin() == null ? null : l.origin().toString());
    Catalog.Base b = l == null ? null : l.directBase();
    m.put("base", b == null ? null : stored.getOrDefault(b.id(), b.location()));
    m.put("baseId", b == null ? null : b.id().toString());
    List<Map<String, Object>> missing = new ArrayList<>();
    for (Catalog.Base x : r.missingBases()) {
      Map<String, Object> one = new java.util.LinkedHashMap<>();
      one.put("imageId", x.id().toString());
      one.put("location", x.location());
      missing.add(one);
    }
    m.put("missingBases", missing);
    return m;
  }

  /** The image's catalog figures, or its status where they cannot be read. */
  private Row read(StoredImages.Image i) {
    String fallback = libraryOf(i);
    try {
      CatalogHead h = StoredImages.head(i, s3.settings(), keys.keys());
      if (h == null) {
        return new Row(i, fallback, null, -1, -1, -1, "transfer-compressed", null, List.of());
      }
      Catalog c = h.catalog();
      long changed = h.totals().changed();
      long unreadable = h.totals().unreadable();
      // One being replaced is whole until the new one takes its name.
      return new Row(i, c.library(), c.codecSpec(), h.totals().rawBytes(),
          h.totals().ownBytes(), h.totals().files(),
          i.busy() ? "in progress" : unreadable > 0 ? "partial (" + unreadable + " unreadable)"
              : changed > 0 ? "changed (" + changed + ")" : "ok", Lineage.of(c), List.of());
    } catch (KeyException e) {
      // Its header tells its place in a chain; what it holds is for its keys only.
      return new Row(i, fallback, null, -1, -1, -1, i.busy() ? "in progress"
          : e.noKeyGiven() ? "encrypted" : "encrypted, not for the keys given",
          Lineage.of(e.envelope()), List.of());
    } catch (IOException | RuntimeException e) {
      return new Row(i, fallback, null, -1, -1, -1,
          i.busy() ? "in progress" : "damaged: " + StoredImages.firstLine(e), null, List.of());
    }
  }

  /** The library an unreadable image belongs to, as far as its name tells: its series' name. */
  private static String libraryOf(StoredImages.Image i) {
    String s = i.series();
    int slash = s.lastIndexOf('/');
    return slash < 0 ? s : s.substring(slash + 1);
  }
}
