package io.beamsave.pipelines;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Every process's command line as any local user reads it ({@code /proc/PID/cmdline}), read
 * over and over until closed: what a watcher on the host saw while something ran. Arguments
 * are joined with spaces.
 */
final class CommandLineWatch implements AutoCloseable {
  private final Set<String> seen = new LinkedHashSet<>();
  private final Thread reader;
  private volatile boolean stop;
  private long passes;

  private CommandLineWatch() {
    reader = new Thread(this::watch, "command-line-watch");
    reader.setDaemon(true);
  }

  static CommandLineWatch start() {
    CommandLineWatch w = new CommandLineWatch();
    w.reader.start();
    return w;
  }

  private void watch() {
    while (!stop) {
      try (var procs = Files.list(Path.of("/proc"))) {
        for (Path p : (Iterable<Path>) procs::iterator) {
          if (!p.getFileName().toString().chars().allMatch(Character::isDigit)) {
            continue;
          }
          byte[] line;
          try {
            line = Files.readAllBytes(p.resolve("cmdline"));
          } catch (IOException gone) {
            continue;
          }
          if (line.length > 0) {
            String text = new String(line, StandardCharsets.UTF_8).replace('\0', ' ').strip();
            synchronized (this) {
              seen.add(text);
            }
          }
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot list /proc", e);
      }
      synchronized (this) {
        passes++;
      }
      try {
        // A pause that leaves the processors to what is watched; a process that lives longer
        // than this is seen.
        Thread.sleep(2);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** The distinct command lines seen so far. */
  synchronized List<String> seen() {
    return List.copyOf(seen);
  }

  /** How many times every process was read. */
  synchronized long passes() {
    return passes;
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    reader.join();
  }
}
