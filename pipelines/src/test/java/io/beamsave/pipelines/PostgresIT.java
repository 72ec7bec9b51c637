package io.beamsave.pipelines;

import static io.beamsave.pipelines.SnapshotIT.asPostgres;
import static io.beamsave.pipelines.SnapshotIT.freePort;
import static io.beamsave.pipelines.SnapshotIT.ok;
import static io.beamsave.pipelines.SnapshotIT.run;
import static io.beamsave.pipelines.SnapshotIT.sql;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.transforms.fs.Dir;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code save --postgres} without a snapshot, in PostgreSQL's backup mode, against a real
 * PostgreSQL under a steady pgbench load with checkpoints forced every 100 ms: each image,
 * full, incremental, encrypted or saved on Flink's embedded cluster, restores into an empty directory on which PostgreSQL starts,
 * completes the backup's recovery from the image's backup_label and WAL, and holds tables that
 * agree, that pg_amcheck finds sound, and every row committed before the save began. No save,
 * finished or interrupted, leaves the server a session, a replication slot or a file of it.
 */
class PostgresIT {
  @TempDir static Path dir;
  static Path bin;
  static Path data;
  static Path sockets;
  static String conninfo;
  static final List<Process> load = new ArrayList<>();

  @BeforeAll
  static void postgres() throws Exception {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    bin = SnapshotIT.postgresBin();
    assumeThat(bin).as("PostgreSQL's server binaries").isNotNull();
    assumeThat(run("id", "postgres").exit()).as("a postgres user").isZero();
    Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions
        .fromString("rwxr-xr-x"));
    Path pg = Files.createDirectories(dir.resolve("pg"));
    ok("chown", "postgres:postgres", pg.toString());
    data = pg.resolve("data");
    sockets = Files.createDirectories(dir.resolve("sockets"));
    ok("chown", "postgres", sockets.toString());
    conninfo = SnapshotIT.startCluster(bin, data, sockets);
    load.addAll(SnapshotIT.load(bin, conninfo, dir));
  }

  @AfterAll
  static void stop() throws Exception {
    for (Process p : load) {
      p.destroy();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    if (data != null) {
      run("runuser", "-u", "postgres", "--", bin.resolve("pg_ctl").toString(), "-D",
          data.toString(), "-m", "immediate", "-w", "stop");
    }
  }

  @Test
  void fullIncrementalEncryptedAndFlinkImagesInBackupModeRestoreAndRecoverConsistent()
      throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "correct horse battery");
    Path previous = null;
    // The backup's session waits idle while the save reads: a server's timeout must not end it.
    sql(conninfo, "ALTER SYSTEM SET idle_session_timeout = '1s'");
    sql(conninfo, "SELECT pg_reload_conf()");
    for (int round = 0; round < 4; round++) {
      long committed = Long.parseLong(sql(conninfo, "SELECT count(*) FROM pgbench_history"));
      Path image = dir.resolve("images/run-" + round + ".bsave");
      List<Object> args = new ArrayList<>(List.of("save", "--library", data, "--image", image,
          "--postgres", conninfo, "--codec", "lz4"));
      if (round == 1) {
        args.addAll(List.of("--base", previous));
      } else if (round == 2) {
        args.addAll(List.of("--password-file", password));
      } else if (round == 3) {
        // Flink's embedded cluster: its workers are in this JVM, where the backup is held.
        args.addAll(List.of((Object[]) FlinkLocalIT.FLINK));
      }
      Cli save = Cli.ok(args.toArray());
      if (round == 0) {
        sql(conninfo, "ALTER SYSTEM RESET idle_session_timeout");
        sql(conninfo, "SELECT pg_reload_conf()");
      }
      assertThat(save.err()).as("round " + round).contains("in backup mode from");
      assertThat(sessionsAndSlots()).as("round " + round + ": the backup's session ended")
          .isEqualTo("0|0");
      List<Object> list = new ArrayList<>(List.of("list", image, "backup_label", "pg_wal/*"));
      if (round == 2) {
        list.addAll(List.of("--password-file", password));
      }
      assertThat(Cli.ok(list.toArray()).out()).contains("backup_label").contains("pg_wal/0000");
      Path target = dir.resolve("restored-" + round);
      List<Object> restore = new ArrayList<>(List.of("restore", image, "--target", target,
          "--quiet"));
      if (round == 2) {
        restore.addAll(List.of("--password-file", password));
      }
      Cli restored = Cli.ok(restore.toArray());
      assertThat(restored.out())
          .contains("next: a PostgreSQL 15").contains("saved in backup mode")
          .contains("pg_ctl -D " + target + " start");
      assertThat(restored.err()).doesNotContain("may not be a whole version");
      assertThat(target.resolve("postmaster.pid")).doesNotExist();
      assertThat(Files.readString(target.resolve("backup_label"))).contains("START WAL");
      recoversConsistent(target, "round " + round, committed);
      previous = image;
    }
    assertThat(lateDirectories(ProcessHandle.current().pid())).isEmpty();
  }

  /** A save stopped in backup mode ends the backup: no session, slot or file of it stays. */
  @Test
  void anInterruptedBackupModeSaveLeavesNothingBehind() throws Exception {
    Path image = dir.resolve("interrupted/pg.bsave");
    Files.createDirectories(image.getParent());
    Path err = dir.resolve("interrupted/err.txt");
    Process save = LauncherIT.start(Map.of(), List.of(), dir.resolve("interrupted/out.txt"),
        err, "save", "--library", data, "--image", image, "--postgres", conninfo,
        "--codec", "xz:9", "--shard-size", "2MiB", "--", "--targetParallelism=1");
    InterruptsIT.await("the backup's start", () -> {
      try {
        return !save.isAlive() || sessionsAndSlots().equals("1|1");
      } catch (Exception e) {
        return false;
      }
    });
    assertThat(save.isAlive()).as(Files.readString(err)).isTrue();
    InterruptsIT.signal(save, "TERM");
    assertThat(save.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(save.exitValue()).as(Files.readString(err)).isEqualTo(143);
    InterruptsIT.await("the session's end", () -> {
      try {
        return sessionsAndSlots().equals("0|0");
      } catch (Exception e) {
        return false;
      }
    });
    assertThat(image).doesNotExist();
    assertThat(image.resolveSibling("pg.bsave.partial")).doesNotExist();
    assertThat(lateDirectories(save.pid())).isEmpty();
  }

  /**
   * What a restored copy could not use whole is refused in one line before anything is
   * written: a tablespace (pg_tblspc links to the running cluster's files), an exclude of what
   * the cluster needs, a role that may not hold a backup (also by --dry-run).
   */
  @Test
  void whatARestoredCopyCouldNotUseWholeIsRefused() throws Exception {
    Cli save = Cli.run("save", "--library", data.resolve("base"), "--image",
        dir.resolve("wrong.bsave"), "--postgres", conninfo);
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err().strip()).startsWith("beamsave: error: --postgres: the server's data"
        + " directory is " + data.toRealPath()).doesNotContain("\n");
    assertThat(dir.resolve("wrong.bsave")).doesNotExist();
    Cli noWal = Cli.run("save", "--library", data, "--image", dir.resolve("wrong.bsave"),
        "--postgres", conninfo, "--exclude", "/pg_wal");
    assertThat(noWal.exit()).isEqualTo(1);
    assertThat(noWal.err().strip()).startsWith("beamsave: error: --postgres: the excludes leave"
        + " out pg_wal").doesNotContain("\n");
    assertThat(dir.resolve("wrong.bsave")).doesNotExist();
    Cli noGlobal = Cli.run("save", "--library", data, "--image", dir.resolve("wrong.bsave"),
        "--postgres", conninfo, "--exclude", "/global");
    assertThat(noGlobal.exit()).isEqualTo(1);
    assertThat(noGlobal.err()).contains("the excludes leave out global");
    Path inside = data.resolve("ts");
    asPostgres("mkdir", inside);
    sql(conninfo, "CREATE TABLESPACE ts LOCATION '" + inside + "'");
    try {
      Cli tablespace = Cli.run("save", "--library", data, "--image",
          dir.resolve("wrong.bsave"), "--postgres", conninfo);
      assertThat(tablespace.exit()).isEqualTo(1);
      assertThat(tablespace.err().strip()).doesNotContain("\n")
          .contains("--postgres: tablespace ts is at " + inside);
    } finally {
      sql(conninfo, "DROP TABLESPACE ts");
      ok("rmdir", inside.toString());
    }
    sql(conninfo, "CREATE ROLE reader LOGIN IN ROLE pg_read_all_settings");
    Cli role = Cli.run("save", "--library", data, "--image", dir.resolve("wrong.bsave"),
        "--postgres", conninfo.replace("user=postgres", "user=reader"), "--dry-run");
    assertThat(role.exit()).isEqualTo(1);
    assertThat(role.err()).contains("is neither superuser nor REPLICATION");
    assertThat(dir.resolve("wrong.bsave")).doesNotExist();
    assertThat(sessionsAndSlots()).isEqualTo("0|0");
  }

  /**
   * A password in CONNINFO, as key=value or in a URI, reaches psql in its environment only:
   * while the saves run no process's command line holds it, and nothing beamsave prints, notes
   * or records does; the server really asks for it (a save without it fails); the image
   * restores and recovers. Given on beamsave's own command line, it is warned of.
   */
  @Test
  void aPasswordInConninfoIsOnNoCommandLineButTheOneItWasGivenOn() throws Exception {
    String token = "Pw7-Zebra-Quokka";
    String password = "it's a " + token + " \\p@ss/w%rd=&?";
    String port = conninfo.replaceAll(".*port=([0-9]+).*", "$1");
    sql(conninfo, "CREATE ROLE saver LOGIN SUPERUSER PASSWORD '" + password.replace("'", "''")
        + "'");
    Path hba = data.resolve("pg_hba.conf");
    String hbaWas = Files.readString(hba);
    Files.writeString(hba, "host all saver 127.0.0.1/32 scram-sha-256\n" + hbaWas);
    sql(conninfo, "SELECT pg_reload_conf()");
    try {
      String saver = conninfo.replace("user=postgres", "user=saver");
      Cli without = Cli.run("save", "--library", data, "--image", dir.resolve("nopw.bsave"),
          "--postgres", saver);
      assertThat(without.exit()).isEqualTo(1);
      assertThat(without.err().strip()).startsWith("beamsave: error: --postgres: ")
          .contains("no password supplied").doesNotContain("\n");
      String pairs = saver + " password='" + password.replace("\\", "\\\\")
          .replace("'", "\\'") + "'";
      // A wrong password in the user info, the right one in the query, which libpq takes.
      String uri = "postgresql://saver:" + percent("wrong " + token) + "@127.0.0.1:" + port
          + "/postgres?sslmode=disable&password=" + percent(password);
      Path images = Files.createDirectories(dir.resolve("with-password"));
      long committed = Long.parseLong(sql(conninfo, "SELECT count(*) FROM pgbench_history"));
      List<String> printed = new ArrayList<>();
      CommandLineWatch watch = CommandLineWatch.start();
      try (watch) {
        for (String given : List.of(pairs, uri)) {
          Cli save = Cli.ok("save", "--library", data, "--image", images.resolve(
              (given.equals(uri) ? "uri" : "pairs") + ".bsave"), "--postgres", given, "--codec",
              "lz4", "--verbose");
          printed.addAll(List.of(save.out(), save.err()));
        }
      }
      assertThat(watch.passes()).isPositive();
      assertThat(watch.seen()).as("the backup's session, seen while it ran")
          .anyMatch(l -> l.contains("psql -X -q -w ") && l.contains(saver))
          .anyMatch(l -> l.contains("psql -X -q -w ") && l.contains("postgresql://saver@127.0.0.1:"
              + port + "/postgres?sslmode=disable "))
          .noneMatch(l -> l.contains(token));
      Path target = dir.resolve("restored-password");
      Cli restored = Cli.ok("restore", images.resolve("pairs.bsave"), "--target", target);
      Cli list = Cli.ok("list", images.resolve("uri.bsave"), "--json");
      printed.addAll(List.of(restored.out(), restored.err(), list.out(), list.err()));
      assertThat(restored.out()).contains("next: a PostgreSQL 15");
      recoversConsistent(target, "saved with a password", committed);
      try (var files = Files.walk(images)) {
        for (Path f : files.filter(f -> f.toString().contains("ledger")
            && Files.isRegularFile(f)).toList()) {
          printed.add(Files.readString(f));
        }
      }
      assertThat(printed).hasSizeGreaterThan(8).noneMatch(t -> t.contains(token));
      Path err = images.resolve("err.txt");
      Process own = LauncherIT.start(Map.of(), List.of(), images.resolve("out.txt"), err,
          "save", "--library", data, "--image", images.resolve("dry.bsave"), "--postgres",
          pairs, "--dry-run");
      assertThat(own.waitFor(5, TimeUnit.MINUTES)).isTrue();
      assertThat(own.exitValue()).as(Files.readString(err)).isZero();
      assertThat(Files.readString(err)).contains("warning: --postgres: CONNINFO's password is"
          + " on beamsave's command line").doesNotContain(token);
    } finally {
      Files.writeString(hba, hbaWas);
      sql(conninfo, "SELECT pg_reload_conf()");
      sql(conninfo, "DROP ROLE saver");
    }
  }

  /** {@code s} percent-encoded as a URI's part: every byte but letters, digits and -._~. */
  private static String percent(String s) {
    StringBuilder b = new StringBuilder();
    for (byte c : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      if (Character.isLetterOrDigit(c) || "-._~".indexOf(c) >= 0) {
        b.append((char) c);
      } else {
        b.append(String.format("%%%02X", c & 0xff));
      }
    }
    return b.toString();
  }

  /** PostgreSQL started on {@code target} completes the backup's recovery, and is sound. */
  static void recoversConsistent(Path target, String as, long committed) throws Exception {
    int port = freePort();
    String restored = "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres";
    Path log = sockets.resolve(target.getFileName() + ".log");
    asPostgres(bin.resolve("pg_ctl"), "-D", target, "-o", "-p " + port + " -k " + sockets
        + " -c listen_addresses=127.0.0.1 -c idle_session_timeout=0", "-l", log, "-w", "-t",
        "120", "start");
    try {
      assertThat(Files.readString(log)).as(as)
          .contains("starting backup recovery").contains("completed backup recovery")
          .contains("consistent recovery state reached").contains("ready to accept connections");
      String[] sums = sql(restored, "SELECT (SELECT sum(abalance) FROM pgbench_accounts),"
          + " (SELECT sum(bbalance) FROM pgbench_branches),"
          + " (SELECT sum(tbalance) FROM pgbench_tellers)").split("\\|");
      assertThat(sums).as(as + ": balances agree").containsOnly(sums[0]);
      assertThat(Long.parseLong(sql(restored, "SELECT count(*) FROM pgbench_history")))
          .as(as + ": rows committed before the save").isGreaterThanOrEqualTo(committed);
      SnapshotIT.Ran check = run(bin.resolve("pg_amcheck").toString(), "-h", "127.0.0.1", "-p",
          Integer.toString(port), "-U", "postgres", "-d", "postgres", "--install-missing",
          "--heapallindexed");
      assertThat(check.exit()).as(as + ": pg_amcheck: " + check.out()).isZero();
    } finally {
      asPostgres(bin.resolve("pg_ctl"), "-D", target, "-m", "immediate", "-w", "stop");
    }
  }

  /** beamsave's sessions on the server and its replication slots, as "sessions|slots". */
  static String sessionsAndSlots() throws Exception {
    return sql(conninfo, "SELECT (SELECT count(*) FROM pg_stat_activity WHERE application_name"
        + " = 'beamsave'), (SELECT count(*) FROM pg_replication_slots)");
  }

  /** The directories of late files the process {@code pid} made and left. */
  static List<Path> lateDirectories(long pid) throws Exception {
    try (var s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      return s.filter(p -> p.getFileName().toString().startsWith("beamsave-postgres-" + pid
          + "-")).toList();
    }
  }
}
