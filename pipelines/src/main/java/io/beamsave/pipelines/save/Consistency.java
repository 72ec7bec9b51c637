package io.beamsave.pipelines.save;

import io.beamsave.pipelines.postgres.PostgresBackup;
import io.beamsave.pipelines.postgres.PostgresSave;
import io.beamsave.pipelines.runner.Workers;
import io.beamsave.pipelines.snapshot.Snapshot;
import io.beamsave.pipelines.snapshot.Snapshots;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.save.LateFiles;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.store.Location;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * How a save makes what it reads hold together, chosen once per run from the request: as the
 * files are ({@code NONE}), from read-only snapshots ({@code --snapshot}, after a PostgreSQL
 * checkpoint with {@code --postgres}), or from a PostgreSQL data directory held in backup mode
 * whose end hands the WAL and {@code backup_label} to the image ({@code --postgres} alone). It
 * turns the spec the run holds into the one that is read ({@link #applyTo}), once the run holds
 * its images, and undoes what it took when the run ends ({@link #close}).
 */
final class Consistency implements UnaryOperator<SaveSpec>, AutoCloseable {
  private final SaveRequest request;
  private final Save.Output output;
  private final RunId run;
  private final PostgresSave postgres;
  private final Runnable afterSnapshots;
  private Snapshots snapshots;
  private PostgresBackup backup;
  private AutoCloseable lateFiles;

  private Consistency(SaveRequest request, Save.Output output, RunId run, PostgresSave postgres,
      Runnable afterSnapshots) {
    this.request = request;
    this.output = output;
    this.run = run;
    this.postgres = postgres;
    this.afterSnapshots = afterSnapshots;
  }

  /**
   * The strategy {@code request} asks for, over {@code save}'s libraries, refused in one line
   * where it cannot hold ({@code --postgres} in backup mode with the workers on a cluster);
   * {@code afterSnapshots} runs once the snapshots are taken (the hooks' {@code
   * --after-snapshot}).
   */
  static Consistency choose(SaveRequest request, SaveSpec save, Workers workers, RunId run,
      Save.Output output, Runnable afterSnapshots) throws IOException {
    PostgresSave postgres = request.postgres() == null ? null
        : PostgresSave.check(request.postgres(),
            save.libraries().values().iterator().next().rootPath(), output.warning());
    if (postgres != null && request.snapshot() == null && workers == Workers.FLINK_CLUSTER) {
      throw new BeamsaveException("--postgres without --snapshot holds PostgreSQL's backup mode"
          + " in this JVM, and the workers run elsewhere: give --snapshot btrfs (with the"
          + " workers on this host), or run the save with its workers here");
    }
    return new Consistency(request, output, run, postgres, afterSnapshots);
  }

  /**
   * What a dry run of {@code request} learns of its strategy without taking it: refused where
   * the save would refuse, {@code save} without what the save would leave out, and a note of
   * what the dry run does not do.
   */
  static SaveSpec dryRun(SaveRequest request, SaveSpec save, Save.Output output)
      throws IOException {
    if (request.snapshot() != null) {
      // What the save would refuse, a dry run refuses; it walks the library itself.
      for (SaveSpec.Library lib : save.libraries().values()) {
        Snapshot.check(request.snapshot(), lib.rootPath(), request.select().oneFileSystem());
      }
      output.note().accept("--dry-run takes no snapshot: it walks the libraries as they are");
    }
    if (request.postgres() != null) {
      // The server is asked what the save would ask; nothing is started on it.
      SaveSpec.Library lib = save.libraries().values().iterator().next();
      PostgresSave postgres = PostgresSave.check(request.postgres(), lib.rootPath(),
          output.warning());
      PostgresSave.checkExcludes(save.excludes());
      List<String> out = new ArrayList<>(PostgresSave.LEFT_OUT);
      if (request.snapshot() == null) {
        postgres.checkBackupMode();
        out.addAll(PostgresBackup.LEFT_OUT);
      }
      save = save.withExcludes(save.excludes().withOwn(out));
      output.note().accept(lib.name() + ": a PostgreSQL " + postgres.version() + " data"
          + " directory; --dry-run " + (request.snapshot() == null
          ? "starts no backup (pg_backup_start), and the WAL the save would add is not counted"
          : "asks for no checkpoint"));
    }
    return save;
  }

  /** The spec that is read, from {@code held}, the spec once the run holds its images. */
  @Override
  public SaveSpec apply(SaveSpec held) {
    if (request.snapshot() == null) {
      if (postgres == null) {
        return held;
      }
      PostgresSave.checkExcludes(held.excludes());
      backup = PostgresBackup.start(postgres,
          held.libraries().values().iterator().next().rootPath(), "beamsave " + run,
          lateParent(held));
      SaveSpec read = backupMode(held, backup);
      lateFiles = LateFiles.register(read, read.libraries().keySet().iterator().next(), backup);
      return read;
    }
    if (postgres != null) {
      postgres.checkpoint();
    }
    snapshots = Snapshots.take(request.snapshot(), held, request.select().oneFileSystem(), run,
        output.note(), output.warning());
    SaveSpec read = snapshots.applyTo(held);
    afterSnapshots.run();
    return postgres == null ? read : withPostgres(read, postgres);
  }

  /** Whether the files were read while PostgreSQL wrote them (its WAL repairs them). */
  boolean inBackupMode() {
    return backup != null;
  }

  /** Removes the snapshots, forgets the late files and ends the backup mode, in that order. */
  @Override
  public void close() {
    if (snapshots != null) {
      snapshots.close();
    }
    if (lateFiles != null) {
      try {
        lateFiles.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    if (backup != null) {
      backup.close();
    }
  }

  /** {@code save}'s one library as a PostgreSQL data directory read from its snapshot. */
  private SaveSpec withPostgres(SaveSpec save, PostgresSave postgres) {
    PostgresSave.checkExcludes(save.excludes());
    SaveSpec.Library lib = save.libraries().values().iterator().next();
    Map<String, String> notes = new LinkedHashMap<>(lib.notes());
    notes.putAll(postgres.notes());
    output.note().accept(lib.name() + ": a PostgreSQL " + notes.get(PostgresSave.NOTE)
        + " data directory, from a snapshot after a checkpoint at "
        + notes.get(PostgresSave.NOTE_CHECKPOINT) + ": no backup mode is needed");
    return save.withReadFrom(lib.name(), lib.readFrom(), notes)
        .withExcludes(save.excludes().withOwn(PostgresSave.LEFT_OUT));
  }

  /**
   * {@code save}'s one library as a PostgreSQL data directory read in backup mode: changing as
   * it is read, without what a backup leaves out, and with what {@code backup} hands over at
   * its end.
   */
  private SaveSpec backupMode(SaveSpec save, PostgresBackup backup) {
    SaveSpec.Library lib = save.libraries().values().iterator().next();
    Map<String, String> notes = new LinkedHashMap<>(lib.notes());
    notes.putAll(backup.notes());
    output.note().accept(lib.name() + ": a PostgreSQL " + notes.get(PostgresSave.NOTE)
        + " data directory in backup mode from " + backup.startLsn() + ": its files are read"
        + " while the server writes them, and the WAL up to the backup's end goes into the"
        + " image with its backup_label");
    List<String> out = new ArrayList<>(PostgresSave.LEFT_OUT);
    out.addAll(PostgresBackup.LEFT_OUT);
    out.addAll(backup.readLate(save.excludes()));
    return save.withReadFrom(lib.name(), lib.readFrom(), notes)
        .withLateFiles(lib.name(), PostgresBackup.FROM)
        .withAllowChanging(true)
        .withExcludes(save.excludes().withOwn(out));
  }

  /**
   * Where a backup's late files are made: in the run's staging where it is a directory (so
   * that cleanup finds them after a kill), else in the temporary directory.
   */
  private static Path lateParent(SaveSpec spec) {
    Optional<Path> staging = Location.of(spec.staging()).localPath();
    if (staging.isEmpty()) {
      return Path.of(System.getProperty("java.io.tmpdir"));
    }
    try {
      return Files.createDirectories(staging.get());
    } catch (IOException e) {
      throw BeamsaveException.io("cannot make the staging", staging.get(), e);
    }
  }
}
