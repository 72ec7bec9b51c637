package io.beamsave.pipelines.restore;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a restore could not give back of what was saved, by kind: each kind a count and the first
 * entry it happened to, told once in a warning rather than once per entry, and never silent
 * (extended attributes on a filesystem that keeps none, devices made as another user than root).
 * Not thread-safe: the restore's last pass's.
 */
final class MetadataLoss {
  private record Kind(String what, String why) {}

  private static final class Count {
    long n;
    final String first;
    /** The entry counted last: one entry's attributes of a kind count once. */
    String last;

    Count(String first) {
      this.first = first;
    }
  }

  /** The kind of loss where the entry itself is left out. */
  static final String DEVICES = "devices";

  private final Map<Kind, Count> counts = new LinkedHashMap<>();

  /** Notes that {@code what} (such as "ACLs") of {@code shown} was lost: {@code why}. */
  void note(String what, String why, String shown) {
    Count c = counts.computeIfAbsent(new Kind(what, why), k -> new Count(shown));
    if (!shown.equals(c.last)) {
      c.n++;
      c.last = shown;
    }
  }

  /** One line per kind lost, to add to the restore's warnings. */
  void warnings(List<String> out) {
    for (Map.Entry<Kind, Count> e : counts.entrySet()) {
      Count c = e.getValue();
      String what = e.getKey().what();
      String counted = what.equals(DEVICES) ? c.n + " device" + (c.n == 1 ? "" : "s")
          : what + " of " + c.n + " entr" + (c.n == 1 ? "y" : "ies");
      out.add("could not restore " + counted + " (" + e.getKey().why() + "; first: " + c.first
          + ")");
    }
  }

  List<String> warnings() {
    List<String> out = new ArrayList<>();
    warnings(out);
    return out;
  }
}
