package io.beamsave.pipelines.locks;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.fs.Walk;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The {@link RunLease}s found under a location, and which are live: beside a local image, one
 * whose lock someone holds; in object storage, one whose process runs where that can be seen
 * (the same host, booted the same time, in the same process namespace), else one written
 * within {@link RunLease#TTL} by the store's clock.
 */
public final class Leases {
  private Leases() {}

  /**
   * What a live prune beside {@code image} intends to delete that is {@code id}, described, or
   * null: a save that has leased its base asks this before it trusts it.
   */
  public static String deleting(ImageId id, String image, S3Settings s3) {
    for (Found f : under(RunLease.parentOf(image), s3)) {
      if (f.live() && "prune".equals(f.says().getProperty("kind")) && f.deletes().contains(id)) {
        return f.describe();
      }
    }
    return null;
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
      for (String v : listed(prefix)) {
        int sp = v.indexOf(' ');
        try {
          ids.add(ImageId.parse(sp < 0 ? v : v.substring(0, sp)));
        } catch (RuntimeException bad) {
          // A lease says what it likes: an unreadable id keeps nothing.
        }
      }
      return ids;
    }

    /** The images the run writes. */
    public List<String> writes() {
      return listed("writes.");
    }

    /** Where the run stages its working files and small shards. */
    public List<String> staging() {
      return listed("staging.");
    }

    /** The values of the lease's numbered keys {@code prefix0}, {@code prefix1}, ... */
    private List<String> listed(String prefix) {
      List<String> out = new ArrayList<>();
      for (String k : says.stringPropertyNames()) {
        if (k.startsWith(prefix)) {
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
    return Location.of(at).match(Leases::inDirectory, object -> {
      Location.InStore prefix = Location.prefix(at, "--at");
      Store store = prefix.placed(s3).store();
      return inBucket(prefix, store, store.list(prefix.uri().key()));
    });
  }

  /** The leases among {@code items}, the objects under {@code prefix}, listed already. */
  static List<Found> inBucket(Location.InStore at, Store store, List<Store.Item> items) {
    ObjectUri prefix = at.uri();
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
          : Duration.between(item.modified(), now).compareTo(RunLease.TTL) < 0;
      out.add(new Found(at.keyed(item.key()).toString(), live, p));
    }
    return out;
  }

  private static List<Found> inDirectory(Path dir) {
    List<Found> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try {
      // Through handles: a directory renamed or swapped for a link while the walk is under way
      // is passed over, never followed, and no path is resolved again.
      Walk.tree(dir, new Walk.Visitor() {
        @Override
        public void visit(byte[] rel, FileStat s) {
          // Only visit(Dir, ...) is used.
        }

        @Override
        public void visit(Dir d, byte[] name, byte[] rel, FileStat s) throws IOException {
          String text = Walk.text(rel);
          if (text == null || !s.isRegularFile() || !Walk.text(name).startsWith(
              RunNames.LEASE_PREFIX)) {
            return;
          }
          try (OpenFile o = d.openRead(name)) {
            boolean free = o.tryLock();
            out.add(new Found(dir.resolve(text).toString(), !free, ImageLock.read(o)));
          } catch (NoSuchFileException | io.beamsave.transforms.fs.SymlinkException gone) {
            // Its run ended meanwhile, or it is not a lease.
          }
        }
      });
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
        + ".beamsave-clock-" + random();
    try {
      store.put(key, new byte[0], 0, "text/plain");
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
      hostId = boot.isEmpty() ? "unknown-" + random()
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

  private static Properties parse(byte[] b) {
    Properties p = new Properties();
    try {
      p.load(new ByteArrayInputStream(b, 0, Math.min(b.length, 1 << 16)));
    } catch (IOException | IllegalArgumentException e) {
      // An unreadable lease says nothing.
    }
    return p;
  }

  /** 16 random hex digits: names that must not meet another's. */
  private static String random() {
    byte[] b = new byte[8];
    new java.security.SecureRandom().nextBytes(b);
    return java.util.HexFormat.of().formatHex(b);
  }
}
