package io.beamsave.pipelines.retention;

import io.beamsave.pipelines.stored.Lineage;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
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
 * What {@code prune} does with every image stored under one location: the keep rules of
 * {@link Retention} per series, then every image a kept image needs to be restored.
 *
 * <p>A consolidated image and the image it was folded from ({@link Lineage#origin()}) are one
 * point in time: the rules count them once, and where they keep it the consolidated image is
 * the one kept, so that the original and the bases only it needed may go. Then every base of a
 * kept image is kept, matched by image id (images move: a base's recorded location may be
 * stale), and their bases in turn, so that every image left stays restorable. An image whose
 * catalog does not read is neither counted nor deleted (an intact older image must not go to
 * keep it), and one being uploaded or replaced is never deleted; nor is one that a run in
 * progress uses (a save's base: {@code inUse}).
 *
 * <p>A claim to have been consolidated from another image is a line in a catalog that anyone
 * who may write there can write: an original goes for it only once the {@link
 * ConsolidationProof} has read the consolidated image and found all of the original in it.
 * Where it has not, the claim is dropped and both images are judged by themselves. With keys
 * given, an image they do not open (a plain one, or one for other keys) is neither counted nor
 * deleted: it cannot be told from one made to push real ones out of the count.
 */
public final class PrunePlan {
  /**
   * An image and what its catalog says: {@code lineage} null where the catalog is out of reach
   * (stored transfer-compressed) or damaged; {@code problem} why it is damaged, else null.
   */
  public record Candidate(StoredImages.Image image, Lineage lineage, String problem,
      String notCounted) {
    public Candidate(StoredImages.Image image, Lineage lineage, String problem) {
      this(image, lineage, problem, null);
    }
  }

  /**
   * What becomes of one image: kept, and why (the rules it meets, or the images that need it),
   * or deleted, and why where it is not simply old ({@code consolidated into ...}).
   */
  public record Decision(StoredImages.Image image, boolean keep, List<String> reasons) {}

  private final List<Decision> decisions;
  private final List<String> warnings;

  private PrunePlan(List<Decision> decisions, List<String> warnings) {
    this.decisions = decisions;
    this.warnings = warnings;
  }

  /** Every image's decision, series by series as listed, newest first within each. */
  public List<Decision> decisions() {
    return decisions;
  }

  /** Kept images that cannot be restored from what is stored here, one line each. */
  public List<String> warnings() {
    return warnings;
  }

  /**
   * Reads the lineage of every image in {@code series} (as {@link StoredImages#list} gives): from
   * its catalog, or an encrypted image's from its header, so that pruning needs no key.
   */
  public static List<Candidate> read(Map<String, List<StoredImages.Image>> series,
      S3Settings s3, Keys keys) {
    return read(series, s3, keys, List.of());
  }

  /**
   * Like {@link #read(Map, S3Settings, Keys)}; with {@code tags}, an image that bears none of
   * them (or whose tags cannot be read) is neither counted nor deleted.
   */
  public static List<Candidate> read(Map<String, List<StoredImages.Image>> series,
      S3Settings s3, Keys keys, List<String> tags) {
    List<Candidate> out = new ArrayList<>();
    for (List<StoredImages.Image> images : series.values()) {
      for (StoredImages.Image i : images) {
        try {
          Lineage l = StoredImages.lineage(i, s3, keys);
          String notCounted = null;
          if (!keys.isEmpty() && l == null) {
            notCounted = "not counted: stored with transfer compression, so no key given can"
                + " be seen to open it";
          } else if (!keys.isEmpty() && (l.fromHeader() || !l.encrypted())) {
            notCounted = l.fromHeader() ? "not counted: no key given opens it"
                : "not counted: not encrypted, and keys were given";
          }
          if (notCounted == null && !tags.isEmpty() && (l == null || !l.taggedAny(tags))) {
            notCounted = "not counted: " + (l == null
                ? "stored with transfer compression, its tags cannot be read"
                : l.tags() == null ? "its tags are in its encrypted catalog: give its key"
                : "not tagged " + String.join(" or ", tags));
          }
          out.add(new Candidate(i, l, null, notCounted));
        } catch (IOException | RuntimeException e) {
          // One being replaced is whole until the new one takes its name: counted as before.
          out.add(new Candidate(i, null, i.busy() ? null : StoredImages.firstLine(e)));
        }
      }
    }
    return out;
  }

  /** Whether a consolidated image holds all of an original: null if so, else why not. */
  public interface Proof {
    String disproof(Candidate consolidated, Candidate original);
  }

  /** Believes no claim to have been consolidated from another image. */
  static final Proof BELIEVE_NONE = (c, o) -> "not checked";

  /** A {@link Proof} that reads both images, with {@code keys} where they are encrypted. */
  public static Proof proof(S3Settings s3, Keys keys) {
    return new ConsolidationProof(s3, keys)::disproof;
  }

  /** Decides for every image of {@code candidates} under {@code policy}. */
  public static PrunePlan decide(List<Candidate> candidates, Retention policy) {
    return decide(candidates, policy, Map.of(), BELIEVE_NONE);
  }

  /**
   * Decides for every image of {@code candidates} under {@code policy}, keeping every image
   * whose id {@code inUse} names (with what uses it), and letting an original go for its
   * consolidation only where {@code proof} confirms it.
   */
  public static PrunePlan decide(List<Candidate> candidates, Retention policy,
      Map<ImageId, String> inUse, Proof proof) {
    Set<Candidate> rejected = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    List<String> notes = new ArrayList<>();
    while (true) {
      Deciding d = new Deciding(candidates, policy, inUse, rejected);
      PrunePlan plan = d.run();
      boolean again = false;
      // Every claim that joins a point in time of which images would go is checked against
      // the images it claims, each by itself: one forged claim drops out alone.
      Set<Candidate> involved = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
      d.goesFor.forEach((other, kept) -> {
        involved.add(other);
        involved.add(kept);
      });
      for (Candidate claimant : involved) {
        Lineage l = claimant.lineage();
        if (l == null || !l.consolidated() || l.fromHeader() || rejected.contains(claimant)) {
          continue;
        }
        for (Candidate original : d.byId.getOrDefault(l.origin(), List.of())) {
          String why = proof.disproof(claimant, original);
          if (why != null) {
            rejected.add(claimant);
            notes.add(claimant.image().uri() + " says it was consolidated from "
                + nameOf(original.image().uri()) + ", which is not confirmed (" + why
                + "): it is judged by itself");
            again = true;
            break;
          }
        }
      }
      if (!again) {
        List<String> warnings = new ArrayList<>(notes);
        warnings.addAll(plan.warnings);
        return new PrunePlan(plan.decisions, List.copyOf(warnings));
      }
    }
  }

  /** The state of one decision run; candidates are told apart by identity, not by value. */
  private static final class Deciding {
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

    Deciding(List<Candidate> all, Retention policy, Map<ImageId, String> inUse,
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
              goesBecause.put(other, "consolidated into " + nameOf(kept.image().uri()));
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
      return "base of " + nameOf(newestFirst.get(0).image().uri())
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

  /** The last component of a path or key: how the explanations name an image. */
  static String nameOf(String uri) {
    int slash = uri.lastIndexOf('/');
    return slash < 0 ? uri : uri.substring(slash + 1);
  }
}
