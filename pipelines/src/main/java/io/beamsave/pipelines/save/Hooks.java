package io.beamsave.pipelines.save;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code save --before} and {@code --after}: commands run by {@code /bin/sh -c} around a save,
 * told what the save is in the environment ({@code BEAMSAVE_LIBRARY}, {@code
 * BEAMSAVE_LIBRARIES}, {@code BEAMSAVE_IMAGE}, {@code BEAMSAVE_RUN_ID}, and for an after hook
 * {@code BEAMSAVE_RESULT} and {@code BEAMSAVE_EXIT_CODE}). Their output goes to the log, a line
 * at a time; each has a time limit, past which it and its children are killed. A failing
 * before hook stops the save before anything is written; after hooks run on success, failure
 * and interrupt, in order, and their failures are reported, never in place of the save's own
 * result.
 */
public final class Hooks {
  /** How a hook ended: its exit code (-1 killed at the time limit) and how long it took. */
  public record Ran(String phase, int index, String command, int exitCode, double seconds) {
    public boolean ok() {
      return exitCode == 0;
    }

    /** "--after #1 'CMD' exited 3 in 0.20s", or "... was killed after 300 s (time limit)". */
    public String describe() {
      String what = "--" + phase + " #" + index + " '" + Printable.text(command) + "'";
      return exitCode == TIMED_OUT
          ? what + " was killed at its time limit, after " + Math.round(seconds) + " s"
          : String.format(java.util.Locale.ROOT, "%s exited %d in %.2fs", what, exitCode,
              seconds);
    }
  }

  /** The exit code recorded for a hook killed at its time limit. */
  public static final int TIMED_OUT = -1;

  /**
   * The hooks a save is asked to run: commands for each phase, and the time each may take.
   *
   * @param before run before the save; the first that fails stops it
   * @param afterSnapshot run once {@code --snapshot} has taken the snapshots
   * @param after run when the save has ended, told how
   * @param timeoutSeconds how long one may take before it is killed
   */
  public record Plan(List<String> before, List<String> afterSnapshot, List<String> after,
      long timeoutSeconds) {
    public static final Plan NONE = new Plan(List.of(), List.of(), List.of(), 600);

    public Plan {
      before = List.copyOf(before);
      afterSnapshot = List.copyOf(afterSnapshot);
      after = List.copyOf(after);
      if (!isEmpty(before, afterSnapshot, after) && timeoutSeconds <= 0) {
        throw new IllegalArgumentException("--hook-timeout " + timeoutSeconds
            + ": give a number of seconds above 0");
      }
    }

    private static boolean isEmpty(List<String> a, List<String> b, List<String> c) {
      return a.isEmpty() && b.isEmpty() && c.isEmpty();
    }

    /** Whether there is no hook to run. */
    public boolean isEmpty() {
      return isEmpty(before, afterSnapshot, after);
    }
  }

  private final List<String> before;
  private final List<String> afterSnapshot;
  private final List<String> after;
  private final long limitSeconds;
  private final Consumer<String> log;
  private final List<Ran> ran = new ArrayList<>();

  public Hooks(List<String> before, List<String> after, long limitSeconds, Consumer<String> log) {
    this(before, List.of(), after, limitSeconds, log);
  }

  /**
   * With {@code afterSnapshot}: commands run once {@code save --snapshot} has taken its
   * snapshots, before a file is read: the checkpoint, from which an application a before hook
   * paused may go on.
   */
  public Hooks(List<String> before, List<String> afterSnapshot, List<String> after,
      long limitSeconds, Consumer<String> log) {
    this.before = List.copyOf(before);
    this.afterSnapshot = List.copyOf(afterSnapshot);
    this.after = List.copyOf(after);
    this.limitSeconds = limitSeconds;
    this.log = log;
  }

  /** What every hook is told: the libraries, the image as given, the run. */
  public static Map<String, String> environment(List<Path> libraries, String image, String run) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("BEAMSAVE_LIBRARY", libraries.isEmpty() ? ""
        : libraries.get(0).toAbsolutePath().normalize().toString());
    env.put("BEAMSAVE_LIBRARIES", String.join("\n", libraries.stream()
        .map(p -> p.toAbsolutePath().normalize().toString()).toList()));
    env.put("BEAMSAVE_IMAGE", image == null ? "" : image);
    env.put("BEAMSAVE_RUN_ID", run);
    return env;
  }

  /** Runs the before hooks in order; the first that fails stops the save. */
  public void before(Map<String, String> env) {
    for (int i = 0; i < before.size(); i++) {
      Ran r = run("before", i + 1, before.get(i), env);
      if (!r.ok()) {
        throw new BeamsaveException(r.describe() + "; nothing was saved");
      }
    }
  }

  /**
   * Runs the after-snapshot hooks in order, all of them; returns those that failed, which do
   * not stop the save: the snapshot is taken, and what it holds is what is saved.
   */
  public List<Ran> afterSnapshot(Map<String, String> env) {
    return runAll("after-snapshot", afterSnapshot, env);
  }

  /**
   * Runs the after hooks in order, each told the save's {@code result} ({@code success},
   * {@code failure}, {@code interrupted}) and exit code; returns those that failed.
   */
  public List<Ran> after(Map<String, String> env, String result, int exitCode) {
    Map<String, String> all = new LinkedHashMap<>(env);
    all.put("BEAMSAVE_RESULT", result);
    all.put("BEAMSAVE_EXIT_CODE", Integer.toString(exitCode));
    return runAll("after", after, all);
  }

  /** Runs every one of {@code commands}, in order; returns those that failed. */
  private List<Ran> runAll(String phase, List<String> commands, Map<String, String> env) {
    List<Ran> failed = new ArrayList<>();
    for (int i = 0; i < commands.size(); i++) {
      Ran r = run(phase, i + 1, commands.get(i), env);
      if (!r.ok()) {
        failed.add(r);
      }
    }
    return failed;
  }

  public boolean hasAfter() {
    return !after.isEmpty();
  }

  /** A save, returning its exit code. */
  @FunctionalInterface
  public interface Save {
    int run() throws IOException;
  }

  /**
   * Runs the before hooks, then {@code save}, then the after hooks, told how it ended; returns
   * the save's exit code. A failing before hook stops it. At an interrupt the after hooks run
   * from its handler, told {@code interrupted}. A failing after hook is a {@code warning}.
   */
  public int around(Map<String, String> env, Consumer<String> warning, Save save)
      throws IOException {
    int code = 1;
    String result = "failure";
    // An interrupt exits from its handler: the after hooks are among what it runs first.
    try (Interrupts.Registration onInterrupt = hasAfter()
        ? Interrupts.onInterrupt("after hooks", () -> after(env, "interrupted", 130)
            .forEach(failed -> warning.accept(failed.describe())))
        : null) {
      try {
        before(env);
        code = save.run();
        result = "success";
      } finally {
        if (onInterrupt != null && !Interrupts.interrupted()) {
          onInterrupt.close();
          after(env, result, code).forEach(failed -> warning.accept(failed.describe()));
        }
      }
    }
    return code;
  }

  /** Every hook run so far, in order. */
  public synchronized List<Ran> ran() {
    return List.copyOf(ran);
  }

  private Ran run(String phase, int index, String command, Map<String, String> env) {
    long start = System.nanoTime();
    ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command).redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().putAll(env);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new BeamsaveException("--" + phase + " #" + index + ": cannot run /bin/sh: "
          + e.getMessage());
    }
    String prefix = "hook --" + phase + " #" + index + ": ";
    Thread copier = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          log.accept(prefix + line);
        }
      } catch (IOException closed) {
        // The hook was killed: what it said so far was logged.
      }
    }, "hook-output");
    copier.setDaemon(true);
    copier.start();
    int code;
    try (Interrupts.Registration stop = Interrupts.onInterrupt("hook " + phase + index,
        () -> kill(p))) {
      if (p.waitFor(limitSeconds, TimeUnit.SECONDS)) {
        code = p.exitValue();
      } else {
        kill(p);
        code = TIMED_OUT;
      }
      copier.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      kill(p);
      Thread.currentThread().interrupt();
      code = TIMED_OUT;
    }
    Ran r = new Ran(phase, index, command, code, (System.nanoTime() - start) / 1e9);
    synchronized (this) {
      ran.add(r);
    }
    if (r.ok()) {
      // A failure is the caller's to report, once: as the error or as a warning.
      log.accept(r.describe());
    }
    return r;
  }

  /** The hook and everything it started. */
  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
  }
}
