package io.beamsave.pipelines.postgres;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.save.LateFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PostgreSQL's backup mode, for {@code save --postgres CONNINFO} without a snapshot. One {@code
 * psql} session holds it: a temporary replication slot, so that no WAL the backup needs is
 * recycled while the save reads, then {@code pg_backup_start} with a fast checkpoint. The save
 * reads the data directory while the server writes it (full-page writes are on for the backup,
 * so replay repairs any page read torn), leaving out {@link #LEFT_OUT}. Once every file is read,
 * the image's assembly calls {@link #collect}: {@code pg_backup_stop}, whose {@code backup_label}
 * and {@code tablespace_map} go into the image, with the WAL segments from the backup's start to
 * its end ({@link LateFiles}). PostgreSQL started on the restored directory replays them from
 * the label's checkpoint and is consistent at the backup's end, with no other step, as from
 * {@code pg_basebackup -X fetch}. Closing the session before the stop abandons the backup.
 */
public final class PostgresBackup implements LateFiles.Source, AutoCloseable {
  /** What a backup leaves out, beyond {@link PostgresSave#LEFT_OUT}, as pg_basebackup does. */
  public static final List<String> LEFT_OUT = List.of("/pg_wal/*", "/backup_label",
      "/tablespace_map", "/backup_manifest", "/pg_replslot/*", "/pg_dynshmem/*",
      "/pg_notify/*", "/pg_serial/*", "/pg_snapshots/*", "/pg_subtrans/*",
      "/base/pgsql_tmp/*");

  /** What the image notes of the backup: its start and end in the WAL. */
  public static final String NOTE_BACKUP = "postgres.backup";

  /**
   * Files no WAL record repairs, read once the backup has ended rather than as the save goes
   * (where one rewritten meanwhile would be kept as read, cut or padded): the configuration,
   * and pg_control, which pg_basebackup also sends last.
   */
  static final List<String> LATE_READ = List.of("PG_VERSION", "current_logfiles",
      "global/pg_control", "pg_hba.conf", "pg_ident.conf", "postgresql.auto.conf",
      "postgresql.conf");

  /**
   * What the save leaves out of its walk, as it takes it at the end ({@link #LATE_READ}), but
   * for what {@code excludes} leave out anyway.
   */
  public List<String> readLate(io.beamsave.transforms.select.Excludes excludes) {
    lateRead.removeIf(p -> excludes.excludes(p, false));
    return lateRead.stream().map(p -> "/" + p).toList();
  }

  /** Who hands the late files over, for messages. */
  public static final String FROM = "pg_backup_stop";

  private static final Pattern START =
      Pattern.compile("^START WAL LOCATION: ([0-9A-F]+/[0-9A-F]+)", Pattern.MULTILINE);
  private static final Pattern TIMELINE =
      Pattern.compile("^START TIMELINE: ([0-9]+)$", Pattern.MULTILINE);
  private static final Pattern HISTORY = Pattern.compile("[0-9A-F]{8}\\.history");

  private final Path library;
  private final String version;
  private final int versionNum;
  private final PsqlSession session;
  /**
   * Guards {@link #closed}: not this object, whose monitor {@link #collect} holds while psql
   * answers, and an interrupt's close must not wait for that.
   */
  private final Object closing = new Object();
  private final Interrupts.Registration onInterrupt;
  private final PostgresSave postgres;
  private final Path lateParent;
  /** The files read once the backup has ended (see {@link #LATE_READ}) that are here. */
  private final List<PathBytes> lateRead = new ArrayList<>();
  private long segmentSize;
  private volatile String startLsn;
  private Path late;
  private LateFiles.Handed handed;
  private boolean closed;

  private PostgresBackup(PostgresSave postgres, Path library, Path lateParent)
      throws IOException {
    this.postgres = postgres;
    this.library = library;
    this.lateParent = lateParent;
    this.version = postgres.version();
    this.versionNum = postgres.versionNum();
    session = new PsqlSession(postgres.conninfo());
    onInterrupt = Interrupts.onInterrupt("postgres backup", this::close);
    // A session the server ends mid-save (max_slot_wal_keep_size, an operator) ends the backup:
    // said at once, though the save fails only when it comes to stop it.
    session.onEnd(() -> {
      boolean early;
      synchronized (closing) {
        early = !closed && startLsn != null;
      }
      if (early && handedOver() == null) {
        try {
          session.awaitErrors();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        System.err.println("beamsave: warning: --postgres: the backup's session ended ("
            + Printable.text(session.cause()) + "): the save fails when it has read the files");
      }
    });
  }

  private synchronized LateFiles.Handed handedOver() {
    return handed;
  }

  /**
   * Puts the server {@code postgres} checked into backup mode for a save of {@code library}
   * labelled {@code label}; the files it makes at the end go in a directory under {@code
   * lateParent} (the run's staging, which cleanup finds if the save is killed).
   */
  public static PostgresBackup start(PostgresSave postgres, Path library, String label,
      Path lateParent) {
    postgres.checkBackupMode();
    PostgresBackup b;
    try {
      b = new PostgresBackup(postgres, library, lateParent);
    } catch (IOException e) {
      throw new BeamsaveException("--postgres: cannot run psql: " + e.getMessage()
          + " (install PostgreSQL's client, Debian's postgresql-client)");
    }
    try {
      b.begin(label);
      return b;
    } catch (RuntimeException e) {
      b.close();
      throw e;
    }
  }

  private void begin(String label) {
    List<String[]> rows = session.call("SELECT setting FROM pg_settings"
        + " WHERE name = 'wal_segment_size'");
    if (rows.size() != 1 || rows.get(0).length != 1) {
      throw new BeamsaveException("--postgres: the server did not say its WAL segment size");
    }
    segmentSize = Long.parseLong(rows.get(0)[0]);
    if (segmentSize <= 0 || Long.bitCount(segmentSize) != 1) {
      throw new BeamsaveException("--postgres: odd WAL segment size " + segmentSize);
    }
    // The session waits, idle, while the save reads: a server's timeouts must not end it, and
    // the backup with it.
    session.call("SET statement_timeout = 0");
    if (versionNum >= 140000) {
      session.call("SET idle_session_timeout = 0");
    }
    for (String name : LATE_READ) {
      if (Files.isRegularFile(library.resolve(name), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        lateRead.add(PathBytes.of(name));
      }
    }
    // Held by this session: the WAL from the last checkpoint on stays until it ends.
    String slot = ("beamsave_" + label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_"));
    session.call("SELECT 1 FROM pg_create_physical_replication_slot('"
        + slot.substring(0, Math.min(slot.length(), 63)) + "', true, true)");
    String quoted = "'" + label.replace("'", "''") + "'";
    rows = session.call(versionNum >= 150000
        ? "SELECT pg_backup_start(" + quoted + ", true)"
        : "SELECT pg_start_backup(" + quoted + ", true, false)");
    startLsn = rows.isEmpty() ? null : rows.get(0)[0];
  }

  /** Where the backup began in the WAL. */
  public String startLsn() {
    return startLsn;
  }

  /** What the image notes before the backup ends. */
  public Map<String, String> notes() {
    Map<String, String> n = new LinkedHashMap<>();
    n.put(PostgresSave.NOTE, version);
    n.put(PostgresSave.NOTE_RECOVERY, "replay of the WAL in the image from backup_label, when"
        + " PostgreSQL starts");
    if (postgres.configOutside() != null) {
      n.put(PostgresSave.NOTE_CONFIG, postgres.configOutside());
    }
    return n;
  }

  /**
   * Ends the backup and hands over its {@code backup_label}, {@code tablespace_map} and WAL;
   * once: a second call hands over the same.
   */
  @Override
  public synchronized LateFiles.Handed collect() throws IOException {
    if (handed != null) {
      return handed;
    }
    List<String[]> rows = session.call("SELECT lsn, encode(convert_to(labelfile, 'UTF8'), 'hex'),"
        + " encode(convert_to(coalesce(spcmapfile, ''), 'UTF8'), 'hex') FROM "
        + (versionNum >= 150000 ? "pg_backup_stop(false)" : "pg_stop_backup(false, false)"));
    if (rows.size() != 1 || rows.get(0).length != 3) {
      throw new BeamsaveException("--postgres: pg_backup_stop said nothing of the backup");
    }
    String stopLsn = rows.get(0)[0];
    String label = text(rows.get(0)[1]);
    String map = text(rows.get(0)[2]);
    Matcher start = START.matcher(label);
    Matcher timeline = TIMELINE.matcher(label);
    if (!start.find() || !timeline.find()) {
      throw new BeamsaveException("--postgres: pg_backup_stop returned a backup_label without"
          + " its start: " + Printable.text(label.lines().findFirst().orElse("")));
    }
    long tli = Long.parseLong(timeline.group(1));
    long first = lsn(start.group(1)) / segmentSize;
    long last = (lsn(stopLsn) - 1) / segmentSize;
    late = Files.createTempDirectory(lateParent, "postgres-");
    List<PathBytes> made = new ArrayList<>();
    var owner = Files.readAttributes(library, "unix:uid,gid");
    write("backup_label", label, owner);
    made.add(PathBytes.of("backup_label"));
    if (!map.isEmpty()) {
      write("tablespace_map", map, owner);
      made.add(PathBytes.of("tablespace_map"));
    }
    // The WAL is read where it is: the session's slot keeps it there until the save ends.
    List<PathBytes> wal = new ArrayList<>();
    long perId = 0x100000000L / segmentSize;
    for (long seg = first; seg <= last; seg++) {
      String name = String.format("%08X%08X%08X", tli, seg / perId, seg % perId);
      if (!Files.isRegularFile(library.resolve("pg_wal").resolve(name),
          java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        throw new BeamsaveException("--postgres: WAL segment " + name + ", which the backup"
            + " needs, is not in " + library.resolve("pg_wal"));
      }
      wal.add(PathBytes.of("pg_wal/" + name));
    }
    // Copied first, each whole as it is now: pg_control changes at every checkpoint, and the
    // configuration may be rewritten, while the WAL is compressed.
    for (PathBytes p : lateRead) {
      Path from = library.resolve(p.toString());
      if (!Files.isRegularFile(from, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        throw new BeamsaveException("--postgres: " + from + " is no longer a file; nothing was"
            + " made: save again");
      }
      Path to = late.resolve(p.toString());
      Files.createDirectories(to.getParent());
      Files.copy(from, to, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES,
          java.nio.file.LinkOption.NOFOLLOW_LINKS);
      owned(to, Files.readAttributes(from, "unix:uid,gid",
          java.nio.file.LinkOption.NOFOLLOW_LINKS));
      made.add(p);
    }
    try (var history = Files.newDirectoryStream(library.resolve("pg_wal"))) {
      for (Path h : history) {
        String name = h.getFileName().toString();
        if (HISTORY.matcher(name).matches()
            && Files.isRegularFile(h, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          wal.add(PathBytes.of("pg_wal/" + name));
        }
      }
    }
    Map<String, String> notes = new LinkedHashMap<>();
    notes.put(NOTE_BACKUP, start.group(1) + " to " + stopLsn + ", " + (last - first + 1)
        + " WAL segment" + (last == first ? "" : "s"));
    handed = new LateFiles.Handed(List.of(new LateFiles.From(late, made),
        new LateFiles.From(library, wal)), notes);
    return handed;
  }

  private static String text(String hex) {
    return new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8);
  }

  private static long lsn(String s) {
    int slash = s.indexOf('/');
    return (Long.parseLong(s.substring(0, slash), 16) << 32)
        | Long.parseLong(s.substring(slash + 1), 16);
  }

  /** {@code name} in the late directory, owned as the data directory is, readable by it only. */
  private void write(String name, String content, Map<String, Object> owner)
      throws IOException {
    Path p = late.resolve(name);
    Files.writeString(p, content, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString(
        "rw-------"));
    owned(p, owner);
  }

  /** {@code p} owned by {@code owner}'s uid and gid, where this user may give it away. */
  private static void owned(Path p, Map<String, Object> owner) {
    try {
      Files.setAttribute(p, "unix:uid", owner.get("uid"), java.nio.file.LinkOption.NOFOLLOW_LINKS);
      Files.setAttribute(p, "unix:gid", owner.get("gid"), java.nio.file.LinkOption.NOFOLLOW_LINKS);
    } catch (IOException | SecurityException notRoot) {
      // Saved as this user's; a restore as root gives it this user's owner.
    }
  }

  /** Ends the session (a backup not yet stopped is abandoned) and removes the late files. */
  @Override
  public void close() {
    synchronized (closing) {
      if (closed) {
        return;
      }
      closed = true;
    }
    session.close();
    try {
      if (late != null) {
        Removal.tree(late);
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("beamsave: warning: cannot remove " + late + ": " + e.getMessage());
    }
    onInterrupt.close();
  }
}
