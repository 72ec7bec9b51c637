package io.beamsave.pipelines.postgres;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The PostgreSQL side of {@code save --postgres CONNINFO}, and all of it with {@code --snapshot}
 * ({@link PostgresBackup} is the backup mode without one): before the snapshot,
 * checks the library is the cluster's whole data directory (its tablespaces and WAL inside it,
 * or the snapshot would not hold them) and asks for a checkpoint, so that recovery from the
 * snapshot replays little; the image then notes the server and the checkpoint. A snapshot holds
 * the data files and the WAL at one instant, as a crash would leave them, and PostgreSQL
 * recovers from that on start: no backup mode is needed. It talks to the server with {@code
 * psql}, so CONNINFO is anything libpq takes (a Unix socket, {@code .pgpass}, a URI); a password
 * in it reaches psql in its environment, never on its command line ({@link #psql}).
 */
public final class PostgresSave {
  /** What the image notes of the server. */
  public static final String NOTE = "postgres";
  public static final String NOTE_CHECKPOINT = "postgres.checkpoint";
  public static final String NOTE_RECOVERY = "postgres.recovery";
  /** The server's configuration file, where it was outside the data directory. */
  public static final String NOTE_CONFIG = "postgres.config";

  /** Files of a running cluster that a copy of it must not carry (as pg_basebackup leaves). */
  public static final List<String> LEFT_OUT =
      List.of("/postmaster.pid", "/postmaster.opts", "/pg_stat_tmp/*");

  private static final long PSQL_SECONDS = 600;

  private final Conninfo conninfo;
  private final String version;
  private final int versionNum;
  private String checkpoint;
  private String configOutside;

  private PostgresSave(Conninfo conninfo, String version, int versionNum) {
    this.conninfo = conninfo;
    this.version = version;
    this.versionNum = versionNum;
  }

  Conninfo conninfo() {
    return conninfo;
  }

  /** The server's version, as it says it. */
  public String version() {
    return version;
  }

  int versionNum() {
    return versionNum;
  }

  /**
   * Checks that {@code library} (a real path) is the data directory of the server CONNINFO
   * reaches, with no tablespace of its own and pg_wal a directory in it: what a copy restored
   * anywhere holds whole. Warns, on {@code warning}, where CONNINFO's password is on this
   * process's own command line.
   */
  public static PostgresSave check(Conninfo conninfo, Path library, Consumer<String> warning) {
    if (conninfo.passwordIn(ownCommandLine())) {
      warning.accept("--postgres: CONNINFO's password is on beamsave's command line, which"
          + " every local user can read while the save runs; give it in ~/.pgpass, $PGPASSFILE"
          + " or $PGPASSWORD instead (psql reads them)");
    }
    List<String[]> rows = query(conninfo, "SELECT current_setting('data_directory'),"
        + " current_setting('server_version'), current_setting('server_version_num')");
    if (rows.isEmpty() || rows.get(0).length != 3) {
      throw new BeamsaveException("--postgres: the server did not say where its data is");
    }
    String[] row = rows.get(0);
    Path dataDir;
    try {
      dataDir = Path.of(row[0]).toRealPath();
    } catch (IOException e) {
      throw new BeamsaveException("--postgres: the server's data directory " + row[0]
          + " is not on this host (" + e.getMessage() + "); run the save where it is");
    }
    if (!dataDir.equals(library)) {
      throw new BeamsaveException("--postgres: the server's data directory is " + dataDir
          + ", not the library " + library + "; give --library " + dataDir);
    }
    int versionNum = Integer.parseInt(row[2]);
    if (versionNum < 100000) {
      throw new BeamsaveException("--postgres: PostgreSQL " + row[1] + " is older than 10");
    }
    // A tablespace or a pg_wal elsewhere is a symbolic link to an absolute path: a restored
    // copy would follow it to the running cluster's files, and write into them.
    for (String[] t : query(conninfo, "SELECT spcname, pg_tablespace_location(oid) FROM"
        + " pg_tablespace WHERE spcname NOT IN ('pg_default', 'pg_global')")) {
      throw new BeamsaveException("--postgres: tablespace " + Printable.text(t[0])
          + (t[1].startsWith("/") ? " is at " + Printable.text(t[1]) + ", where pg_tblspc"
              + " links to: a restored copy would use the running cluster's files there"
              : " is in place (" + Printable.text(t[1]) + "), which is for testing")
          + "; beamsave saves no tablespace but the default ones: move what it holds to"
          + " pg_default (ALTER TABLE ... SET TABLESPACE pg_default) or save with pg_basebackup"
          + " -T");
    }
    Path wal = library.resolve("pg_wal");
    if (Files.isSymbolicLink(wal)) {
      String to;
      try {
        to = Files.readSymbolicLink(wal).toString();
      } catch (IOException e) {
        throw BeamsaveException.io("--postgres: cannot read the link", wal, e);
      }
      throw new BeamsaveException("--postgres: " + wal + " is a symbolic link to "
          + Printable.text(to) + ": a restored copy would write its WAL there, into the"
          + " running cluster's; beamsave saves a cluster whose pg_wal is a directory in it");
    }
    PostgresSave p = new PostgresSave(conninfo, row[1], versionNum);
    List<String[]> config = query(conninfo, "SELECT current_setting('config_file')");
    if (!config.isEmpty() && !config.get(0)[0].isEmpty()
        && !Path.of(config.get(0)[0]).toAbsolutePath().normalize().startsWith(dataDir)) {
      p.configOutside = config.get(0)[0];
    }
    return p;
  }

  /**
   * The server's configuration file, where it is outside the data directory (as Debian puts
   * it), and so not in the image; null where it is inside.
   */
  public String configOutside() {
    return configOutside;
  }

  /**
   * Fails unless the server can hold a backup for this session's role: a WAL level that keeps
   * what recovery needs, a free replication slot, a primary, and the right to use them.
   */
  public void checkBackupMode() {
    List<String[]> rows = query(conninfo, "SELECT current_setting('wal_level'),"
        + " current_setting('max_replication_slots')::int - (SELECT count(*) FROM"
        + " pg_replication_slots), pg_is_in_recovery(), (SELECT rolsuper OR rolreplication FROM"
        + " pg_roles WHERE rolname = current_user)");
    if (rows.size() != 1 || rows.get(0).length != 4) {
      throw new BeamsaveException("--postgres: the server did not say how it is set up");
    }
    String[] r = rows.get(0);
    if (r[0].equals("minimal")) {
      throw new BeamsaveException("--postgres: wal_level is minimal, which keeps no WAL for a"
          + " backup; set wal_level = replica and restart the server, or use --snapshot");
    }
    if (r[2].equals("t")) {
      throw new BeamsaveException("--postgres: the server is a standby; back it up from a"
          + " snapshot (--snapshot btrfs) or back up its primary");
    }
    if (!r[3].equals("t")) {
      throw new BeamsaveException("--postgres: the role " + "connected is neither superuser"
          + " nor REPLICATION, which a backup's replication slot needs (ALTER ROLE ..."
          + " REPLICATION)");
    }
    if (Long.parseLong(r[1]) <= 0) {
      throw new BeamsaveException("--postgres: no replication slot is free (max_replication"
          + "_slots); the backup holds one while it runs: raise it, or use --snapshot");
    }
  }

  /** A checkpoint now: recovery from a snapshot taken next starts here. */
  public void checkpoint() {
    query(conninfo, "CHECKPOINT");
    List<String[]> lsn = query(conninfo, "SELECT pg_current_wal_lsn()");
    checkpoint = lsn.isEmpty() ? null : lsn.get(0)[0];
  }

  /** What the image notes. */
  public Map<String, String> notes() {
    Map<String, String> n = new LinkedHashMap<>();
    n.put(NOTE, version);
    if (checkpoint != null) {
      n.put(NOTE_CHECKPOINT, checkpoint);
    }
    n.put(NOTE_RECOVERY, "crash recovery from the WAL in the image, when PostgreSQL starts");
    if (configOutside != null) {
      n.put(NOTE_CONFIG, configOutside);
    }
    return n;
  }

  /**
   * Whether an image with {@code notes} holds a data directory read in backup mode, while the
   * server wrote it: files changed as they were read, and the WAL in the image mends them.
   */
  public static boolean savedInBackupMode(Map<String, String> notes) {
    return notes.containsKey(NOTE) && notes.containsKey(PostgresBackup.NOTE_BACKUP);
  }

  /** What a restore of an image with {@code notes} says to do next, or null. */
  public static String nextStep(Map<String, String> notes, Path target) {
    if (!notes.containsKey(NOTE)) {
      return null;
    }
    String config = notes.get(NOTE_CONFIG);
    String start = "pg_ctl -D " + Printable.text(target.toString())
        + (config == null ? "" : " -o '-c config_file=" + Printable.text(config)
            + " -c data_directory=" + Printable.text(target.toString()) + "'")
        + " start, as its owner"
        + (config == null ? "" : "; its configuration was " + Printable.text(config)
            + ", outside the data directory and not in the image");
    String backup = notes.get(PostgresBackup.NOTE_BACKUP);
    if (backup != null) {
      return "a PostgreSQL " + Printable.text(notes.get(NOTE)) + " data directory, saved in"
          + " backup mode (" + Printable.text(backup) + "): start PostgreSQL on it (" + start
          + ") and it replays the WAL saved with it from its backup_label to the backup's end";
    }
    return "a PostgreSQL " + Printable.text(notes.get(NOTE)) + " data directory, saved from a"
        + " snapshot: start PostgreSQL on it (" + start + ") and it recovers to the snapshot's"
        + " instant from the WAL saved with it";
  }

  /** What a cluster's image cannot be without, which no exclude may leave out. */
  private static final List<String> NEEDED = List.of("PG_VERSION", "base", "global",
      "global/pg_control", "pg_multixact", "pg_wal", "pg_xact");

  /** Fails if {@code excludes} leave out something the cluster cannot start without. */
  public static void checkExcludes(io.beamsave.transforms.select.Excludes excludes) {
    for (String n : NEEDED) {
      boolean dir = !n.equals("PG_VERSION") && !n.equals("global/pg_control");
      if (excludes.excludes(io.beamsave.transforms.image.catalog.PathBytes.of(n), dir)) {
        throw new BeamsaveException("--postgres: the excludes leave out " + n + ", without"
            + " which the restored cluster does not start; exclude less");
      }
    }
  }

  /**
   * psql for CONNINFO, unaligned, rows without headers, fields split at the unit separator,
   * stopping at the first error, and never asking for a password on the terminal.
   */
  static ProcessBuilder psql(Conninfo conninfo) {
    ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(List.of("psql", "-X", "-q", "-w",
        "-A", "-t", "-F", "\u001f", "-v", "ON_ERROR_STOP=1")));
    if (conninfo.withoutPassword() != null) {
      pb.command().addAll(List.of("-d", conninfo.withoutPassword()));
    }
    if (conninfo.password() != null) {
      // Any local user reads a process's arguments (/proc/PID/cmdline), for as long as it runs;
      // its environment only its own user and root can read, who can read this JVM's memory,
      // password included, already. A password file (PGPASSFILE) would be no safer, and would
      // outlive a save killed with SIGKILL on disk. libpq takes PGPASSWORD exactly as it takes
      // password= (which wins over it, and over any passfile), so the user's own ~/.pgpass,
      // PGPASSFILE or passfile= apply as before wherever CONNINFO has no password.
      pb.environment().put("PGPASSWORD", conninfo.password());
    }
    pb.environment().put("PGCONNECT_TIMEOUT", "10");
    pb.environment().putIfAbsent("PGAPPNAME", "beamsave");
    return pb;
  }

  /** This process's arguments, as any local user reads them; empty where they cannot be. */
  private static byte[] ownCommandLine() {
    try {
      return Files.readAllBytes(Path.of("/proc/self/cmdline"));
    } catch (IOException | RuntimeException noProc) {
      return new byte[0];
    }
  }

  /** Rows of {@code sql}, fields split at the unit separator. */
  static List<String[]> query(Conninfo conninfo, String sql) {
    ProcessBuilder pb = psql(conninfo);
    pb.command().addAll(List.of("-c", sql));
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] err;
      byte[] out;
      try (var e = p.getErrorStream(); var o = p.getInputStream()) {
        out = o.readAllBytes();
        err = e.readAllBytes();
      }
      if (!p.waitFor(PSQL_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new BeamsaveException("--postgres: psql took over " + PSQL_SECONDS + " s");
      }
      if (p.exitValue() != 0) {
        String said = new String(err, StandardCharsets.UTF_8).lines()
            .filter(l -> !l.isBlank()).findFirst().orElse("exit " + p.exitValue());
        throw new BeamsaveException("--postgres: " + Printable.text(said.strip()));
      }
      List<String[]> rows = new ArrayList<>();
      for (String line : new String(out, StandardCharsets.UTF_8).lines().toList()) {
        if (!line.isEmpty()) {
          rows.add(line.split("\u001f", -1));
        }
      }
      return rows;
    } catch (IOException e) {
      throw new BeamsaveException("--postgres: cannot run psql: " + e.getMessage()
          + " (install PostgreSQL's client, Debian's postgresql-client)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("--postgres: interrupted");
    }
  }
}
