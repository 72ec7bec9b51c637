package io.beamsave.pipelines.locks;

import io.beamsave.pipelines.snapshot.Snapshot;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.UploadClaim;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What runs that failed or were killed left under a location, and its removal ({@code
 * beamsave cleanup}): in object storage, multipart uploads that beamsave's own upload state
 * names ({@link UploadClaim}) and no live run writes, the staged shards of runs that have ended,
 * upload state objects, and stale leases (an upload or an object by an upload state's name that
 * beamsave cannot tie to itself is left alone, and reported as {@link NotOurs}); in a
 * directory, partial images and staging directories whose run holds no
 * lock, and lock files and leases nobody holds. A complete image is never a leftover, and
 * neither is anything a run in progress names in its lock or lease ({@link RunLease}).
 */
public final class Leftovers {
  private Leftovers() {}

  /** What a leftover is. */
  public enum Kind {
    UPLOAD("unfinished upload"),
    STAGED("staged shards"),
    UPLOAD_STATE("upload state"),
    PARTIAL("partial image"),
    STAGING("staging"),
    LOCK("stale lock"),
    LEASE("stale lease"),
    SNAPSHOT("snapshot");

    private final String shown;

    Kind(String shown) {
      this.shown = shown;
    }

    @Override
    public String toString() {
      return shown;
    }
  }

  /**
   * One leftover: where it is, its size ({@code bytes}, -1 where unknown), when it was made,
   * for an upload its id, and for a local directory the location it was found under ({@code
   * under}), beneath which it is removed without following a link.
   */
  public record Item(
      Kind kind, String location, long bytes, Instant made, String uploadId, Path under) {
    public Item(Kind kind, String location, long bytes, Instant made, String uploadId) {
      this(kind, location, bytes, made, uploadId, null);
    }
  }

  /**
   * Something that looks like a run's leftover but that beamsave cannot tie to itself, left
   * alone: what it would be, where it is, for an upload its id, and why it is not taken for
   * beamsave's.
   */
  public record NotOurs(Kind kind, String location, String uploadId, String why) {}

  /**
   * What was found: the leftovers, what runs in progress hold, and what is not beamsave's (both
   * left alone).
   */
  public record Found(List<Item> leftovers, List<String> inProgress, List<NotOurs> notOurs) {
    public Found(List<Item> leftovers, List<String> inProgress) {
      this(leftovers, inProgress, List.of());
    }

    public long bytes() {
      return leftovers.stream().mapToLong(i -> Math.max(0, i.bytes())).sum();
    }
  }

  /** Everything runs that have ended left at any depth under {@code at}. */
  public static Found find(String at, S3Settings s3) {
    Location where = Location.of(at);
    return where.match(DirectoryLeftovers::find, object -> inBucket((Location.InStore) where, s3));
  }

  private static Found inBucket(Location.InStore at, S3Settings s3) {
    ObjectUri prefix = at.uri();
    Store store = at.placed(s3).store();
    Set<String> writing = new HashSet<>();
    Set<String> staging = new HashSet<>();
    List<Item> out = new ArrayList<>();
    List<String> live = new ArrayList<>();
    // What is there first, then the leases: a run that begins in between leases before it
    // writes, so its writing is seen with its lease, never without.
    // The prefix taken as a directory, as the leases beneath it are found: a sibling's
    // objects (s3://b/tidy-old/ beside s3://b/tidy) are not this location's, nor its leases.
    String under = prefix.key().isEmpty() || prefix.key().endsWith("/") ? prefix.key()
        : prefix.key() + "/";
    List<Store.Item> objects = store.list(under);
    List<Store.Upload> uploads = store.uploads(under);
    for (Leases.Found lease : Leases.under(at.toString(), s3)) {
      if (lease.live()) {
        writing.addAll(lease.writes());
        lease.staging().forEach(s -> staging.add(s.endsWith("/") ? s : s + "/"));
        live.add(lease.describe() + ", writing " + String.join(", ", lease.writes()));
      } else {
        out.add(new Item(Kind.LEASE, lease.location(), -1, null, null));
      }
    }
    // An upload is beamsave's only where a claim beside its key names its id (UploadClaim
    // says why that, and nothing S3 shows of the upload itself, is what can be relied on).
    Map<String, UploadClaim> claims = new HashMap<>();
    for (Store.Item o : objects) {
      if (UploadClaim.claimedKey(o.key()) != null) {
        UploadClaim.read(store, o.key()).ifPresent(c -> claims.put(o.key(), c));
      }
    }
    List<NotOurs> notOurs = new ArrayList<>();
    for (Store.Upload u : uploads) {
      String uri = at.keyed(u.key()).toString();
      if (!claimed(claims, u)) {
        notOurs.add(new NotOurs(Kind.UPLOAD, uri, u.uploadId(),
            "no upload state beamsave wrote names it"));
      } else if (!writing.contains(uri)) {
        out.add(new Item(Kind.UPLOAD, uri, -1, u.initiated(), u.uploadId()));
      }
    }
    Map<String, long[]> staged = new LinkedHashMap<>();
    for (Store.Item o : objects) {
      String uri = at.keyed(o.key()).toString();
      int at0 = o.key().indexOf(RunNames.STAGING_PREFIX);
      if (at0 >= 0 && (at0 == 0 || o.key().charAt(at0 - 1) == '/')) {
        int end = o.key().indexOf('/', at0);
        String dir = end < 0 ? null : at.keyed(o.key().substring(0, end + 1)).toString();
        if (dir != null && staging.stream().noneMatch(dir::startsWith)
            && staging.stream().noneMatch(s -> s.startsWith(dir))) {
          long[] sum = staged.computeIfAbsent(dir, k -> new long[2]);
          sum[0] += o.size();
          sum[1]++;
        }
      } else if (UploadClaim.claimedKey(o.key()) != null) {
        String image = UploadClaim.claimedKey(o.key());
        if (!claims.containsKey(o.key())) {
          notOurs.add(new NotOurs(Kind.UPLOAD_STATE, uri, null,
              "not an upload state beamsave wrote"));
        } else if (!writing.contains(at.keyed(image).toString())) {
          out.add(new Item(Kind.UPLOAD_STATE, uri, o.size(), o.modified(), null));
        }
      }
    }
    staged.forEach((dir, sum) -> out.add(new Item(Kind.STAGED, dir, sum[0], null, null)));
    return new Found(out, live, notOurs);
  }

  /** Whether one of {@code claims} (by where each lies) names {@code upload}. */
  private static boolean claimed(Map<String, UploadClaim> claims, Store.Upload upload) {
    for (String name : List.of(upload.key() + UploadClaim.SUFFIX,
        UploadClaim.nameFor(upload.key(), upload.uploadId()))) {
      UploadClaim c = claims.get(name);
      if (c != null && c.claims(name, upload)) {
        return true;
      }
    }
    return false;
  }

  /** Removes {@code item}, checking again that no run has taken it up since it was found. */
  public static void remove(Item item, S3Settings s3) {
    switch (item.kind()) {
      case UPLOAD -> {
        Location.Placed upload = Location.object(item.location(), "an upload").placed(s3);
        try {
          upload.store().abort(upload.key(), item.uploadId());
        } catch (StoreException e) {
          if (e.kind() != StoreException.Kind.NOT_FOUND) {
            throw e;
          }
        }
      }
      case STAGED -> {
        Location.Placed dir = Location.prefix(item.location(), "staged shards").placed(s3);
        for (Store.Item o : dir.store().list(dir.key())) {
          dir.store().delete(o.key());
        }
      }
      case UPLOAD_STATE -> Location.of(item.location()).delete(s3);
      case LEASE -> Location.of(item.location()).match(file -> {
        // A lease file is removed while its lock is held, so that no run takes it meanwhile.
        DirectoryLeftovers.deleteIfFree(item.under(), file, file);
        return null;
      }, object -> {
        Location.of(item.location()).delete(s3);
        return null;
      });
      case LOCK -> DirectoryLeftovers.deleteIfFree(item.under(), Path.of(item.location()),
          Path.of(item.location()));
      case PARTIAL -> {
        Path partial = Path.of(item.location());
        String n = partial.getFileName().toString();
        DirectoryLeftovers.deleteIfFree(item.under(), partial.resolveSibling(
            n.substring(0, n.length() - ImageFormat.PARTIAL_SUFFIX.length()) + ImageLock.SUFFIX),
            partial);
      }
      case STAGING -> DirectoryLeftovers.removeStaging(Path.of(item.location()), item.under());
      case SNAPSHOT -> Snapshot.remove(new Snapshot.Leftover(Path.of(item.location()), null));
      default -> throw new IllegalStateException(item.kind().name());
    }
  }
}
