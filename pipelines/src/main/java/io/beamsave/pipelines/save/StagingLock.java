package io.beamsave.pipelines.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.io.AssembleImage;
import io.beamsave.transforms.io.SaveSpec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The lock of one save run: a file {@value #NAME} in the run's staging directory, locked with
 * {@code fcntl} for as long as the run lives, naming its process, its start and the images it
 * writes. The kernel drops the lock however the process ends, so a staging directory whose
 * lock is free belongs to a run that was killed: the next save in the same place removes it
 * and the partial images it names. A lock that is held names a running save, and a second save
 * of any of its images refuses to start rather than append to the same partial image.
 */
final class StagingLock implements AutoCloseable {
  static final String NAME = "lock";

  private final FileChannel channel;
  private final FileLock lock;

  private StagingLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Clears what killed runs left beside this run's staging directory, refuses if a live run
   * writes one of the same images, then creates the staging directory and locks it.
   */
  static StagingLock acquire(SaveSpec spec, PrintWriter notes) {
    Path staging = Path.of(spec.staging());
    List<String> destinations = new ArrayList<>();
    spec.libraries().values().forEach(l -> destinations.add(l.destination()));
    clearLeftovers(staging.getParent(), destinations, notes);
    try {
      Files.createDirectories(staging);
      FileChannel ch = FileChannel.open(staging.resolve(NAME), StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE, StandardOpenOption.READ);
      FileLock lock = ch.lock();
      Properties p = new Properties();
      p.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
      p.setProperty("host", host());
      p.setProperty("started", Instant.now().toString());
      int i = 0;
      for (SaveSpec.Library lib : spec.libraries().values()) {
        p.setProperty("image." + i, lib.image());
        p.setProperty("destination." + i, lib.destination());
        i++;
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      p.store(out, "beamsave save run; removed when the run ends");
      ch.write(ByteBuffer.wrap(out.toByteArray()), 0);
      ch.force(false);
      return new StagingLock(ch, lock);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot create staging directory", staging, e);
    }
  }

  /**
   * Looks at the other runs' staging directories in {@code parent}: removes those whose run
   * was killed, with the partial images they name; refuses if a live one writes one of {@code
   * destinations}.
   */
  static void clearLeftovers(Path parent, List<String> destinations, PrintWriter notes) {
    if (parent == null || !Files.isDirectory(parent)) {
      return;
    }
    try (DirectoryStream<Path> runs = Files.newDirectoryStream(parent,
        p -> p.getFileName().toString().startsWith(SavePipeline.STAGING_PREFIX)
            || p.getFileName().toString().startsWith(SavePipeline.RUN_PREFIX))) {
      for (Path run : runs) {
        Path lockFile = run.resolve(NAME);
        if (!Files.isRegularFile(lockFile)) {
          continue;
        }
        inspect(run, lockFile, destinations, notes);
      }
    } catch (IOException e) {
      throw BeamsaveException.io("cannot look for earlier runs' staging in", parent, e);
    }
  }

  private static void inspect(
      Path run, Path lockFile, List<String> destinations, PrintWriter notes) throws IOException {
    Properties held;
    try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      held = read(ch);
      FileLock free;
      try {
        free = ch.tryLock();
      } catch (OverlappingFileLockException thisJvm) {
        free = null;
      }
      if (free == null) {
        for (String image : destinations) {
          if (holds(held, "destination.", image)) {
            throw new BeamsaveException("another save of " + image + " is running (pid "
                + held.getProperty("pid", "?") + " on " + held.getProperty("host", "?")
                + ", started " + held.getProperty("started", "?") + "); wait for it to end");
          }
        }
        return;
      }
      // Its run is gone: remove what it left, while holding its lock so no one else does.
      try {
        List<String> removed = new ArrayList<>();
        for (String key : held.stringPropertyNames()) {
          if (key.startsWith("image.")) {
            Path partial = ImageWriter.partialPath(Path.of(held.getProperty(key)));
            if (Files.deleteIfExists(partial)) {
              removed.add(partial.toString());
            }
          }
        }
        AssembleImage.deleteTree(run);
        removed.add(0, run.toString());
        if (notes != null) {
          notes.println("beamsave: removed what a killed save (pid " + held.getProperty("pid", "?")
              + ", started " + held.getProperty("started", "?") + ") left: "
              + String.join(", ", removed));
          notes.flush();
        }
      } finally {
        free.release();
      }
    } catch (java.nio.file.NoSuchFileException raced) {
      // Another save cleared it meanwhile, or its run just ended.
    }
  }

  private static boolean holds(Properties p, String prefix, String value) {
    return p.stringPropertyNames().stream()
        .anyMatch(k -> k.startsWith(prefix) && p.getProperty(k).equals(value));
  }

  private static Properties read(FileChannel ch) throws IOException {
    ByteBuffer b = ByteBuffer.allocate((int) Math.min(ch.size(), 1 << 20));
    ch.read(b, 0);
    Properties p = new Properties();
    p.load(new ByteArrayInputStream(b.array(), 0, b.position()));
    return p;
  }

  private static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "this host";
    }
  }

  /** Releases the lock; the staging directory, lock file included, is removed by the run. */
  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException ignored) {
      // Closing the channel below releases it too.
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // Nothing was left unwritten.
    }
  }
}
