package io.beamsave.pipelines.locks;

import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
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
    Location where = Location.of(at);
    Store store = where.directory(s3);
    List<Found> out = new ArrayList<>();
    Instant now = null;
    for (Store.FoundLease l : store.leases(RunNames.LEASE_PREFIX)) {
      Properties p = parse(l.says());
      boolean live;
      if (l.held() != null) {
        live = l.held();
      } else if (sameHost(p)) {
        live = processAlive(p);
      } else {
        if (now == null) {
          now = store.now();
        }
        live = Duration.between(l.written(), now).compareTo(RunLease.TTL) < 0;
      }
      out.add(new Found(where.resolve(l.key()).toString(), live, p));
    }
    return out;
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
      p.load(new ByteArrayInputStream(b, 0, Math.min(b.length, Store.LEASE_MOST)));
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
