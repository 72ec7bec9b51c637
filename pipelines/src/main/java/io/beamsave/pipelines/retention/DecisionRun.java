package io.beamsave.pipelines.retention;

import io.beamsave.pipelines.retention.PrunePlan.Candidate;
import io.beamsave.pipelines.retention.PrunePlan.Decision;
import io.beamsave.pipelines.stored.Lineage;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The state of one decision run of {@link PrunePlan#decide}, given the claims to have been
 * consolidated it no longer believes: the keep rules over points in time, then what is in use,
 * damaged or not counted, then the bases of every image kept. Candidates are told apart by
 * identity, not by value.
 */
final class DecisionRun {
  final List<Candidate> all;
  final Retention policy;
  final Map<ImageId, String> inUse;
  final Set<Candidate> rejected;
  final Map<ImageId, List<Candidate>> byId = new HashMap<>();
  final Map<Candidate, List<String>> keep = new IdentityHashMap<>();
  final Map<Candidate, String> goesBecause = new IdentityHashMap<>();
  /** Each original that goes for its consolidation, with the consolidated image kept. */
  final Map<Candidate, Candidate> goesFor = new IdentityHashMap<>();
  final Map<Candidate, List<Candidate>> neededBy = new IdentityHashMap<>();
  final List<String> warnings = new ArrayList<>();

  DecisionRun(List<Candidate> all, Retention policy, Map<ImageId, String> inUse,
      Set<Candidate> rejected) {
    this.all = all;
    this.policy = policy;
    this.inUse = inUse;
    this.rejected = rejected;
    for (Candidate c : all) {
      if (c.problem() == null && c.lineage() != null) {
        byId.computeIfAbsent(c.lineage().id(), k -> new ArrayList<>()).add(c);
      }
    }
  }

  PrunePlan run() {
    applyRules();
    for (Candidate c : all) {
      if (c.problem() != null) {
        keep.put(c, List.of("damaged, not counted: " + c.problem()));
      } else if (c.notCounted() != null) {
        keep.put(c, List.of(c.notCounted()));
      } else if (c.image().busy() && !keep.containsKey(c)) {
        keep.put(c, List.of("upload in progress"));
      }
      String using = c.lineage() == null ? null : inUse.get(c.lineage().id());
      if (using != null) {
        List<String> why = new ArrayList<>(keep.getOrDefault(c, List.of()));
        why.add("in use by a " + using);
        keep.put(c, why);
        goesBecause.remove(c);
        goesFor.remove(c);
      }
    }
    keepBases();
    return new PrunePlan(ordered(), List.copyOf(warnings));
  }

  /** The keep rules, per series, over points in time (an original and its consolidations). */
  void applyRules() {
    Map<String, List<StoredImages.Image>> bySeries = new LinkedHashMap<>();
    Map<StoredImages.Image, List<Candidate>> slotOf = new HashMap<>();
    for (List<Candidate> slot : slots()) {
      StoredImages.Image stand = standIn(slot);
      bySeries.computeIfAbsent(stand.series(), k -> new ArrayList<>()).add(stand);
      slotOf.put(stand, slot);
    }
    for (List<StoredImages.Image> series : bySeries.values()) {
      for (Retention.Decision d : policy.decide(series)) {
        if (!d.keep()) {
          continue;
        }
        List<Candidate> slot = slotOf.get(d.image());
        Candidate kept = preferred(slot);
        keep.put(kept, new ArrayList<>(d.reasons()));
        for (Candidate other : slot) {
          if (other != kept) {
            goesBecause.put(other, "consolidated into " + PrunePlan.nameOf(kept.image().uri()));
            goesFor.put(other, kept);
          }
        }
      }
    }
  }

  /**
   * The counted images grouped into points in time: a consolidated image with the stored
   * images whose id is its origin (and theirs in turn), every other image alone.
   */
  List<List<Candidate>> slots() {
    List<Candidate> counted = all.stream()
        .filter(c -> c.problem() == null && c.notCounted() == null).toList();
    Map<Candidate, Integer> index = new IdentityHashMap<>();
    int[] parent = new int[counted.size()];
    for (int i = 0; i < parent.length; i++) {
      parent[i] = i;
      index.put(counted.get(i), i);
    }
    for (int i = 0; i < parent.length; i++) {
      Lineage l = counted.get(i).lineage();
      // An encrypted image's header, unauthenticated without its key, could claim to stand
      // for any image: that claim never gets one deleted.
      if (l != null && l.consolidated() && !l.fromHeader()
          && !rejected.contains(counted.get(i))) {
        for (Candidate o : byId.getOrDefault(l.origin(), List.of())) {
          Integer j = index.get(o);
          if (j != null) {
            parent[root(parent, i)] = root(parent, j);
          }
        }
      }
    }
    Map<Integer, List<Candidate>> slots = new LinkedHashMap<>();
    for (int i = 0; i < parent.length; i++) {
      slots.computeIfAbsent(root(parent, i), k -> new ArrayList<>()).add(counted.get(i));
    }
    return new ArrayList<>(slots.values());
  }

  private static int root(int[] parent, int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  }

  /**
   * The image the rules judge for a point in time: in the original's series and at its time
   * while it is stored; a consolidated image alone stands at the time of the save it was
   * folded from (its catalog's), however late it was written and named.
   */
  static StoredImages.Image standIn(List<Candidate> slot) {
    Candidate kept = preferred(slot);
    Candidate original = slot.stream()
        .filter(c -> c.lineage() == null || !c.lineage().consolidated())
        .min(Comparator.comparing((Candidate c) -> c.image().time())
            .thenComparing(c -> c.image().uri()))
        .orElse(null);
    String series = original != null ? original.image().series() : kept.image().series();
    Instant time;
    if (original != null) {
      time = original.image().time();
    } else {
      time = kept.image().time();
      for (Candidate c : slot) {
        time = c.lineage().created().isBefore(time) ? c.lineage().created() : time;
      }
    }
    StoredImages.Image k = kept.image();
    return new StoredImages.Image(k.uri(), series, time, k.bytes(), k.busy());
  }

  /** Of one point in time, the image to keep: self-contained and consolidated first. */
  static Candidate preferred(List<Candidate> slot) {
    return slot.stream().min(Comparator
        .comparing((Candidate c) -> c.lineage() == null || !c.lineage().selfContained())
        .thenComparing(c -> c.lineage() == null || !c.lineage().consolidated())
        .thenComparing((Candidate c) -> c.image().time(), Comparator.reverseOrder())
        .thenComparing(c -> c.image().uri())).orElseThrow();
  }

  /** Keeps every stored base of a kept image, and theirs, and notes those not stored here. */
  void keepBases() {
    Deque<Candidate> work = new ArrayDeque<>(keep.keySet());
    Set<String> warned = new LinkedHashSet<>();
    long damaged = all.stream().filter(c -> c.problem() != null).count();
    while (!work.isEmpty()) {
      Candidate c = work.pop();
      if (c.lineage() == null) {
        continue;
      }
      for (Catalog.Base b : c.lineage().bases()) {
        List<Candidate> stored = byId.getOrDefault(b.id(), List.of());
        if (stored.isEmpty()) {
          String w = c.image().uri() + " depends on base " + b.id() + " (saved as "
              + b.location() + "), which is not stored here"
              + (damaged > 0 ? " or is one of the " + damaged + " damaged image(s)" : "")
              + ": it cannot be restored without it";
          if (warned.add(w)) {
            warnings.add(w);
          }
          continue;
        }
        for (Candidate base : stored) {
          neededBy.computeIfAbsent(base, k -> new ArrayList<>()).add(c);
          if (!keep.containsKey(base)) {
            keep.put(base, new ArrayList<>());
            work.add(base);
          }
        }
      }
    }
    neededBy.forEach((base, dependents) -> {
      List<String> reasons = keep.get(base);
      if (reasons.isEmpty()) {
        reasons.add(baseOf(base, dependents));
      }
    });
  }

  /** "base of NAME", naming the newest image that needs it, and how many more do. */
  private static String baseOf(Candidate base, List<Candidate> dependents) {
    List<Candidate> newestFirst = new ArrayList<>(dependents);
    newestFirst.sort(Comparator.comparing((Candidate c) -> c.image().time()).reversed()
        .thenComparing(c -> c.image().uri()));
    int more = (int) newestFirst.stream().map(c -> c.image().uri()).distinct().count() - 1;
    return "base of " + PrunePlan.nameOf(newestFirst.get(0).image().uri())
        + (more > 0 ? " and " + more + " more" : "");
  }

  List<Decision> ordered() {
    Map<String, List<Candidate>> bySeries = new LinkedHashMap<>();
    for (Candidate c : all) {
      bySeries.computeIfAbsent(c.image().series(), k -> new ArrayList<>()).add(c);
    }
    List<Decision> out = new ArrayList<>();
    for (List<Candidate> series : bySeries.values()) {
      // Newest first, so that deleting in this order never leaves an image without its base.
      series.sort(Comparator.comparing((Candidate c) -> c.image().time()).reversed()
          .thenComparing(c -> c.image().uri()));
      for (Candidate c : series) {
        List<String> why = keep.get(c);
        out.add(why != null ? new Decision(c.image(), true, List.copyOf(why))
            : new Decision(c.image(), false,
                goesBecause.containsKey(c) ? List.of(goesBecause.get(c)) : List.of()));
      }
    }
    return out;
  }
}
