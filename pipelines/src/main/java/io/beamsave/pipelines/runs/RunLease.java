package io.beamsave.pipelines.runs;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ImageId;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.Stores;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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
import java.util.stream.Stream;

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
 * again every {@link #REFRESH}: it is live while its process runs, where that can be seen (the
 * same host), and elsewhere while it is younger than {@link #TTL}.
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

  private record Local(Dir dir, byte[] name, OpenFile file) {}

  private record Remote(Store store, String key) {}

  private final List<Local> local = new ArrayList<>();
  private final List<Remote> remote = new ArrayList<>();
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
   * one that leased it before is seen by the read (see {@link #deleting}).
   */
  public static RunLease intent(String run, List<Use> deletes, S3Settings s3) {
    List<String> at = deletes.stream().map(Use::location).toList();
    return take(run, "prune", List.of(), at, List.of(), deletes, s3);
  }

  /**
   * What a live prune beside {@code image} intends to delete that is {@code id}, described, or
   * null: a save that has leased its base asks this before it trusts it.
   */
  public static String deleting(ImageId id, String image, S3Settings s3) {
    for (Found f : under(parentOf(image), s3)) {
      if (f.live() && "prune".equals(f.says().getProperty("kind")) && f.deletes().contains(id)) {
        return f.describe();
      }
    }
    return null;
  }

  private static RunLease take(String run, String kind, List<Use> uses, List<String> writes,
      List<String> staging, List<Use> deletes, S3Settings s3) {
    Properties p = new Properties();
    p.setProperty("run", run);
    p.setProperty("kind", kind);
    p.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
    p.setProperty("host", ImageLock.host());
    p.setProperty("hostId", hostId());
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
        } catch (IOException | RuntimeException e) {
          lease.warnings.add("cannot leave a lease beside " + dir.getValue() + " ("
              + (e instanceof IOException io ? BeamsaveException.describe(io) : e.getMessage())
              + "): a prune there meanwhile cannot see that this " + kind + " uses it");
        }
      }
    } catch (IOException e) {
      lease.close();
      throw BeamsaveException.io("cannot write the run's lease in", dirs.keySet().toString(), e);
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    if (!lease.remote.isEmpty()) {
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

  private void place(String dir, String image, String run, S3Settings s3) throws IOException {
    String name = RunNames.LEASE_PREFIX + run;
    if (ObjectUri.isObject(dir)) {
      ObjectUri at = ObjectUri.parse(dir, true).child(name);
      Store store = Stores.bucketOf(at, s3);
      store.check(ObjectUri.parse(image, true).key());
      store.put(at.key(), content, content.length, "text/plain", null);
      remote.add(new Remote(store, at.key()));
      return;
    }
    Dir d = Dir.open(Path.of(dir));
    try {
      byte[] n = name.getBytes(StandardCharsets.UTF_8);
      for (int attempt = 0; attempt < 5; attempt++) {
        OpenFile f = d.openOrCreate(n, 0644);
        if (!f.tryLock()) {
          f.close();
          throw new BeamsaveException(d.child(n) + ": held by another process");
        }
        f.truncate(0);
        f.write(0, content, 0, content.length);
        // A save clearing dead runs' leases may have taken this one for such between its
        // creation and its lock, and removed it: then it is taken again.
        boolean there;
        try {
          there = d.stat(n).sameFile(f.stat());
        } catch (NoSuchFileException removed) {
          there = false;
        }
        if (there) {
          local.add(new Local(d, n, f));
          return;
        }
        f.close();
      }
      throw new BeamsaveException(d.child(n) + ": it keeps being removed");
    } catch (IOException | RuntimeException e) {
      d.close();
      throw e;
    }
  }

  /** What could not be leased (beside images the run only reads), one line each. */
  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  private void refresh() {
    for (Remote r : remote) {
      try {
        r.store().put(r.key(), content, content.length, "text/plain", null);
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
    for (Remote r : remote) {
      try {
        r.store().delete(r.key());
      } catch (RuntimeException e) {
        // A lease left behind ages out, and cleanup removes it.
      }
    }
    remote.clear();
    for (Local l : local) {
      try {
        l.dir().delete(l.name());
      } catch (IOException e) {
        // Its lock goes with the descriptor: a lease left is a dead run's.
      }
      try {
        l.file().close();
        l.dir().close();
      } catch (IOException ignored) {
        // Nothing was left unwritten.
      }
    }
    local.clear();
  }

  /**
   * A lease found under a location: where it is ({@code location}, a path or {@code s3://}
   * URI), whether its run is live, and what it says.
   */
  public record Found(String location, boolean live, Properties says) {
    /** The ids of the images the run uses. */
    public List<ImageId> uses() {
      return ids("uses.");
    }

    /** The ids of the images a prune in progress is about to delete. */
    public List<ImageId> deletes() {
      return ids("deletes.");
    }

    private List<ImageId> ids(String prefix) {
      List<ImageId> ids = new ArrayList<>();
      for (String k : says.stringPropertyNames()) {
        if (k.startsWith(prefix)) {
          String v = says.getProperty(k);
          int sp = v.indexOf(' ');
          try {
            ids.add(ImageId.parse(sp < 0 ? v : v.substring(0, sp)));
          } catch (RuntimeException bad) {
            // A lease says what it likes: an unreadable id keeps nothing.
          }
        }
      }
      return ids;
    }

    /** The images the run writes. */
    public List<String> writes() {
      List<String> out = new ArrayList<>();
      for (String k : says.stringPropertyNames()) {
        if (k.startsWith("writes.")) {
          out.add(says.getProperty(k));
        }
      }
      return out;
    }

    /** Where the run stages its working files and small shards. */
    public List<String> staging() {
      List<String> out = new ArrayList<>();
      for (String k : says.stringPropertyNames()) {
        if (k.startsWith("staging.")) {
          out.add(says.getProperty(k));
        }
      }
      return out;
    }

    /** "save (pid 123 on host, started ...)". */
    public String describe() {
      return says.getProperty("kind", "run") + " (pid " + says.getProperty("pid", "?") + " on "
          + says.getProperty("host", "?") + ", started " + says.getProperty("started", "?")
          + ")";
    }
  }

  /** Every lease at any depth under {@code at} (a directory or {@code s3://} prefix). */
  public static List<Found> under(String at, S3Settings s3) {
    return ObjectUri.isObject(at) ? inStore(at, s3) : inDirectory(Path.of(at));
  }

  private static List<Found> inStore(String at, S3Settings s3) {
    ObjectUri prefix = ObjectUri.parse(at, true);
    Store store = Stores.bucketOf(prefix, s3);
    return inStore(prefix, store, store.list(prefix.key()));
  }

  /** The leases among {@code items}, the objects under {@code prefix}, listed already. */
  static List<Found> inStore(ObjectUri prefix, Store store, List<Store.Item> items) {
    List<Found> out = new ArrayList<>();
    Instant now = null;
    for (Store.Item item : items) {
      String name = item.key().substring(item.key().lastIndexOf('/') + 1);
      if (!name.startsWith(RunNames.LEASE_PREFIX)) {
        continue;
      }
      Properties p;
      try {
        p = parse(store.get(item.key()));
      } catch (StoreException e) {
        if (e.kind() == StoreException.Kind.NOT_FOUND) {
          continue; // Its run ended meanwhile.
        }
        throw e;
      }
      if (now == null && !sameHost(p)) {
        now = storeNow(prefix, store);
      }
      boolean live = sameHost(p) ? processAlive(p)
          : Duration.between(item.modified(), now).compareTo(TTL) < 0;
      out.add(new Found(new ObjectUri(prefix.bucket(), item.key()).toString(), live, p));
    }
    return out;
  }

  private static List<Found> inDirectory(Path dir) {
    List<Found> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) walk::iterator) {
        if (!f.getFileName().toString().startsWith(RunNames.LEASE_PREFIX)
            || !Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        try (Dir d = Dir.open(f.getParent());
            OpenFile o = d.openRead(f.getFileName().toString().getBytes(StandardCharsets.UTF_8))) {
          boolean free = o.tryLock();
          out.add(new Found(f.toString(), !free, ImageLock.read(o)));
        } catch (NoSuchFileException gone) {
          // Its run ended meanwhile.
        }
      }
    } catch (NoSuchFileException gone) {
      return out;
    } catch (IOException e) {
      throw BeamsaveException.io("cannot look for leases in", dir, e);
    }
    return out;
  }

  /**
   * The store's own clock: the time a probe object written now gets, so that a lease's age does
   * not depend on how far this host's clock is from the writer's. This host's where the probe
   * cannot be written.
   */
  private static Instant storeNow(ObjectUri prefix, Store store) {
    String key = prefix.key() + (prefix.key().isEmpty() || prefix.key().endsWith("/") ? "" : "/")
        + ".beamsave-clock-" + RunNames.newRun();
    try {
      store.put(key, new byte[0], 0, "text/plain", null);
      try {
        for (Store.Item i : store.list(key)) {
          if (i.key().equals(key)) {
            return i.modified();
          }
        }
      } finally {
        store.delete(key);
      }
    } catch (RuntimeException readOnly) {
      // Credentials that may not write: this host's clock it is.
    }
    return Instant.now();
  }

  /**
   * Whether a lease was written by a process this one can see: the same host, booted the same
   * time, in the same process namespace (a container on the host's network shares the host
   * name, not its processes). Only then does whether its pid runs tell whether it lives.
   */
  private static boolean sameHost(Properties p) {
    return hostId().equals(p.getProperty("hostId"));
  }

  private static String hostId;

  static synchronized String hostId() {
    if (hostId == null) {
      String boot = read("/proc/sys/kernel/random/boot_id");
      String pidNs = "";
      try {
        pidNs = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
      } catch (IOException | UnsupportedOperationException e) {
        // No namespaces to tell apart.
      }
      // Without a boot id the host cannot be told apart: leases are then judged by age alone.
      hostId = boot.isEmpty() ? "unknown-" + RunNames.newRun()
          : ImageLock.host() + " " + boot + " " + pidNs;
    }
    return hostId;
  }

  private static String read(String file) {
    try {
      return Files.readString(Path.of(file)).strip();
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * Whether the process a lease names runs: its pid is alive, and was not started after the
   * lease (a pid used again by a later process).
   */
  static boolean processAlive(Properties p) {
    try {
      long pid = Long.parseLong(p.getProperty("pid", ""));
      Instant started = Instant.parse(p.getProperty("started", ""));
      return ProcessHandle.of(pid)
          .filter(ProcessHandle::isAlive)
          .map(h -> h.info().startInstant()
              .map(s -> !s.isAfter(started.plusSeconds(1))).orElse(true))
          .orElse(false);
    } catch (RuntimeException unreadable) {
      return false;
    }
  }

  private static String parentOf(String location) {
    if (ObjectUri.isObject(location)) {
      return ObjectUri.parse(location, true).parent().toString();
    }
    Path parent = Path.of(location).toAbsolutePath().getParent();
    try {
      return parent.toRealPath().toString();
    } catch (IOException e) {
      return parent.toString();
    }
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

  private static Properties parse(byte[] b) {
    Properties p = new Properties();
    try {
      p.load(new ByteArrayInputStream(b, 0, Math.min(b.length, 1 << 16)));
    } catch (IOException | IllegalArgumentException e) {
      // An unreadable lease says nothing.
    }
    return p;
  }
}
