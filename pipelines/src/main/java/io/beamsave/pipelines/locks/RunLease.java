package io.beamsave.pipelines.locks;

import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What a run in progress tells other runs about the images it reads and writes: a lease, {@code
 * .beamsave-lease-<run>}, in each directory or prefix that holds one of them, naming the images
 * it uses (a save's base images, a consolidation's chain) by id, the images it writes, and its
 * staging. {@code prune} keeps every image a live lease uses, and {@code cleanup} leaves alone
 * what a live lease writes.
 *
 * <p>Beside a local image the lease is a file the run holds locked ({@code flock}) for its
 * life: the kernel drops the lock however the process ends, so a lease whose lock is free is a
 * dead run's. In object storage, where nothing can be locked, it is an object the run writes
 * again every {@link #REFRESH}. {@link Leases} finds them and says which are live.
 */
public final class RunLease implements AutoCloseable {
  /** How often a lease in object storage is written again. */
  static final Duration REFRESH = Duration.ofMinutes(1);
  /**
   * How long a lease in object storage written from another host counts as live after it was
   * last written: ten refreshes, so that a slow store or a paused JVM does not end it early.
   */
  public static final Duration TTL = Duration.ofMinutes(10);

  /** An image a run uses: its id and where it is. */
  public record Use(ImageId id, String location) {}

  private final List<Store.Lease> leases = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();
  private final byte[] content;
  private ScheduledExecutorService refresher;

  private RunLease(byte[] content) {
    this.content = content;
  }

  /**
   * Takes the leases of run {@code run} (a {@code kind}: save, consolidate) that uses {@code
   * uses}, writes {@code writes} and stages in {@code staging}, in every directory or prefix
   * that holds an image it uses or writes.
   */
  public static RunLease take(String run, String kind, List<Use> uses, List<String> writes,
      List<String> staging, S3Settings s3) {
    return take(run, kind, uses, writes, staging, List.of(), s3);
  }

  /**
   * The intent of a prune about to delete {@code deletes}, left beside each of them before it
   * reads the leases there: a save that leases its base after that read sees the intent, and
   * one that leased it before is seen by the read (see {@link Leases#deleting}).
   */
  public static RunLease intent(String run, List<Use> deletes, S3Settings s3) {
    List<String> at = deletes.stream().map(Use::location).toList();
    return take(run, "prune", List.of(), at, List.of(), deletes, s3);
  }

  private static RunLease take(String run, String kind, List<Use> uses, List<String> writes,
      List<String> staging, List<Use> deletes, S3Settings s3) {
    Properties p = new Properties();
    p.setProperty("run", run);
    p.setProperty("kind", kind);
    p.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
    p.setProperty("host", ImageLock.host());
    p.setProperty("hostId", Leases.hostId());
    p.setProperty("started", Instant.now().toString());
    for (int i = 0; i < uses.size(); i++) {
      p.setProperty("uses." + i, uses.get(i).id() + " " + uses.get(i).location());
    }
    for (int i = 0; i < writes.size(); i++) {
      p.setProperty("writes." + i, writes.get(i));
    }
    for (int i = 0; i < staging.size(); i++) {
      p.setProperty("staging." + i, staging.get(i));
    }
    for (int i = 0; i < deletes.size(); i++) {
      p.setProperty("deletes." + i, deletes.get(i).id() + " " + deletes.get(i).location());
    }
    RunLease lease = new RunLease(bytes(p));
    // Each directory or prefix, with the first image there: a store that cannot be written is
    // reported naming that image, not the lease.
    Map<String, String> dirs = new LinkedHashMap<>();
    writes.forEach(w -> dirs.putIfAbsent(parentOf(w), w));
    java.util.Set<String> written = new java.util.HashSet<>(dirs.keySet());
    uses.forEach(u -> dirs.putIfAbsent(parentOf(u.location()), u.location()));
    try {
      for (Map.Entry<String, String> dir : dirs.entrySet()) {
        if (written.contains(dir.getKey())) {
          lease.place(dir.getKey(), dir.getValue(), run, s3);
          continue;
        }
        // Where the run only reads (a base in a read-only directory, a bucket the saving
        // credentials may only read), it runs all the same; prune there cannot see it.
        try {
          lease.place(dir.getKey(), dir.getValue(), run, s3);
        } catch (RuntimeException e) {
          lease.warnings.add("cannot leave a lease beside " + dir.getValue() + " ("
              + e.getMessage() + "): a prune there meanwhile cannot see that this " + kind
              + " uses it");
        }
      }
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    if (lease.leases.stream().anyMatch(Store.Lease::refreshed)) {
      lease.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "beamsave-lease");
        t.setDaemon(true);
        return t;
      });
      lease.refresher.scheduleWithFixedDelay(lease::refresh, REFRESH.toSeconds(),
          REFRESH.toSeconds(), TimeUnit.SECONDS);
    }
    return lease;
  }

  private void place(String dir, String image, String run, S3Settings s3) {
    Store store = Location.of(dir).directory(s3);
    // A store that cannot be written is named by the image there, not by the lease.
    store.check(Location.of(image).name());
    leases.add(store.lease(RunNames.LEASE_PREFIX + run, content));
  }

  /** What could not be leased (beside images the run only reads), one line each. */
  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  private void refresh() {
    for (Store.Lease l : leases) {
      try {
        l.refresh();
      } catch (RuntimeException e) {
        // The next refresh tries again; a lease ten refreshes old is taken for a dead run's.
      }
    }
  }

  /** Removes the leases. Idempotent. */
  @Override
  public synchronized void close() {
    if (refresher != null) {
      refresher.shutdownNow();
      refresher = null;
    }
    for (Store.Lease l : leases) {
      try {
        l.close();
      } catch (RuntimeException e) {
        // A lease left behind ages out, or its lock went with this process; cleanup removes it.
      }
    }
    leases.clear();
  }

  static String parentOf(String location) {
    return Location.of(location).realParent().toString();
  }

  private static byte[] bytes(Properties p) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      p.store(out, "beamsave run in progress; removed when it ends");
      return out.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

}
