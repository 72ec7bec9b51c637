package io.beamsave.pipelines;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.beamsave.pipelines.cli.BeamsaveCommand;
import io.beamsave.transforms.fs.Dir;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An unprivileged local user (uid 65534) at work while root runs beamsave: commands, and acts
 * in the background (swapping a directory for a link, re-pointing a link, planting one), each
 * in a process of that user's made with setpriv, so the kernel judges what it may do. Root
 * only: {@link #assumeRootWithSetpriv} skips a test elsewhere.
 */
final class Nobody {
  private Nobody() {}

  static final int UID = 65534;
  static final List<String> SETPRIV =
      List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups");

  record Ran(int exit, String out, String err) {}

  static void assumeRootWithSetpriv() {
    assumeTrue(Dir.effectiveUid() == 0, "run as root");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv"))
        || Files.isExecutable(Path.of("/bin/setpriv")), "setpriv installed");
  }

  /** {@code script} run by sh as this user. */
  static Ran sh(String script) throws Exception {
    List<String> cmd = new ArrayList<>(SETPRIV);
    cmd.addAll(List.of("sh", "-c", script));
    return run(cmd, null);
  }

  /** {@code script} run by sh as root: the test's own setup. */
  static Ran root(String script) throws Exception {
    Ran r = run(List.of("sh", "-ec", "PATH=$PATH:/usr/sbin:/sbin\n" + script), null);
    if (r.exit() != 0) {
      throw new AssertionError(script + " exited " + r.exit() + ": " + r.out() + r.err());
    }
    return r;
  }

  /** Makes {@code dir} a directory of this user's, mode 0755 (its parents reachable). */
  static Path owns(Path dir) throws Exception {
    Files.createDirectories(dir);
    root("chown 65534:65534 '" + dir + "' && chmod 0755 '" + dir + "'");
    return dir;
  }

  /**
   * Directories {@code d} nested {@code depth} deep in {@code dir} (their path far longer than a
   * path may be), this user's as if they had made them; {@link LeftoversTest#unnest} removes
   * them.
   */
  static void nest(Path dir, int depth) throws Exception {
    LeftoversTest.nest(dir, new byte[] {'d'}, depth);
    root("chown -R 65534:65534 '" + dir.resolve("d") + "'");
  }

  /** The command line in a JVM of this user's, its class path hard-linked where it may read. */
  static Ran beamsave(Path scratch, Object... args) throws Exception {
    Path cp = Files.createDirectories(scratch.resolve("classpath"));
    List<String> entries = new ArrayList<>();
    int n = 0;
    for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path p = Path.of(e);
      if (Files.isRegularFile(p)) {
        // A link where others may read the jar (what it is never changes), else a copy.
        Path link = cp.resolve((n++) + "-" + p.getFileName());
        boolean readable = Files.getPosixFilePermissions(p)
            .contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ);
        try {
          if (!readable) {
            throw new IOException("not for others to read");
          }
          Files.createLink(link, p);
        } catch (IOException otherDeviceOrClosed) {
          Files.copy(p, link);
        }
        entries.add(link.toString());
      } else {
        entries.add(e);
      }
    }
    root("chmod a+rx '" + cp + "' && chmod a+r '" + cp + "'/*");
    List<String> cmd = new ArrayList<>(SETPRIV);
    cmd.addAll(List.of(java(), "-XX:-UsePerfData", "-cp", String.join(":", entries),
        BeamsaveCommand.class.getName()));
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    return run(cmd, scratch);
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static Ran run(List<String> cmd, Path home) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("LC_ALL", "C.UTF-8");
    if (home != null) {
      pb.environment().put("HOME", home.toString());
      pb.directory(home.toFile());
    }
    Process p = pb.start();
    p.getOutputStream().close();
    StringBuilder err = new StringBuilder();
    Thread errs = new Thread(() -> {
      try {
        err.append(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException ignored) {
        // The process is gone: what it said is what there is.
      }
    });
    errs.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new AssertionError(cmd + " did not end in 5 minutes");
    }
    errs.join();
    return new Ran(p.exitValue(), out, err.toString());
  }

  /**
   * An act of this user's running in the background (one of {@link NobodyActs}): started with
   * {@link Nobody#start}, it says {@code ready} once at work, and ends when {@link #stop} asks.
   */
  static final class Act implements AutoCloseable {
    private final Process process;
    private final Path stop;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    private Act(Process process, Path stop) {
      this.process = process;
      this.stop = stop;
      this.reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String l = r.readLine(); l != null; l = r.readLine()) {
            synchronized (lines) {
              lines.add(l);
              lines.notifyAll();
            }
          }
        } catch (IOException ignored) {
          // Ended.
        }
      });
      reader.start();
    }

    /** Waits (up to a minute) for a line starting with {@code prefix}; that line. */
    String await(String prefix) throws InterruptedException {
      long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
      synchronized (lines) {
        while (true) {
          for (String l : lines) {
            if (l.startsWith(prefix)) {
              return l;
            }
          }
          long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
          if (left <= 0 || !process.isAlive() && !reader.isAlive()) {
            throw new AssertionError("the act never said '" + prefix + "': " + lines);
          }
          lines.wait(Math.min(left, 100));
        }
      }
    }

    /** Ends the act and returns all it said. */
    List<String> stop() throws Exception {
      Files.writeString(stop, "stop");
      if (!process.waitFor(1, TimeUnit.MINUTES)) {
        process.destroyForcibly();
      }
      reader.join();
      synchronized (lines) {
        return List.copyOf(lines);
      }
    }

    @Override
    public void close() throws Exception {
      if (process.isAlive()) {
        stop();
      }
    }
  }

  /** Starts act {@code args} ({@link NobodyActs}'s) as this user; it stops once told to. */
  static Act start(Path scratch, Object... args) throws Exception {
    Path stop = scratch.resolve("stop-" + System.nanoTime());
    Path classes = Path.of(Nobody.class.getProtectionDomain().getCodeSource().getLocation()
        .toURI());
    List<String> cmd = new ArrayList<>(SETPRIV);
    cmd.addAll(List.of(java(), "-XX:-UsePerfData", "-Xshare:auto", "-cp", classes.toString(),
        NobodyActs.class.getName(), stop.toString()));
    for (Object a : args) {
      cmd.add(String.valueOf(a));
    }
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    p.getOutputStream().close();
    Act act = new Act(p, stop);
    act.await("ready");
    return act;
  }
}
