package io.beamsave.pipelines.retention;

import io.beamsave.pipelines.stored.Lineage;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
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

  PrunePlan(List<Decision> decisions, List<String> warnings) {
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
      DecisionRun d = new DecisionRun(candidates, policy, inUse, rejected);
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

  /** The last component of a path or key: how the explanations name an image. */
  static String nameOf(String uri) {
    int slash = uri.lastIndexOf('/');
    return slash < 0 ? uri : uri.substring(slash + 1);
  }
}
