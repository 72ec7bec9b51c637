package io.beamsave.transforms.run;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * What one run keeps in one JVM, shared by its launcher and its workers there: whether it was
 * stopped (so that workers still running write nothing more), the monitors that keep its
 * writers of one file apart, counts of requests in flight, live progress counters, and shared
 * objects such as its link throttle. Workers of a run on a cluster have one of these per
 * TaskManager JVM; they share nothing through it with the launcher.
 *
 * <p>{@link #of} finds a run's state by the name the run is known by where the state is needed
 * (its run id, job name or upload id: each unique to the run). This registry is the one place
 * per-run state lives outside the pipeline (docs/architecture.md, "Where state lives"). It is
 * bounded: a run's state goes when the run {@link #end}s in this JVM, and, since a cluster's
 * TaskManagers never hear that, when it has not been used for {@link #IDLE_MINUTES} minutes.
 */
public final class RunState {
  /** How long a run's state outlives its last use in a JVM that never saw it end. */
  static final long IDLE_MINUTES = 60;

  private static final Map<String, RunState> RUNS = new ConcurrentHashMap<>();
  private static final AtomicLong LAST_SWEEP = new AtomicLong(System.nanoTime());
  private static final AtomicLong CLEANUP_SEQUENCE = new AtomicLong();

  /** Why and until when (in {@link System#nanoTime} terms) a run was stopped. */
  public record Stop(String why, boolean forever, long until) {
    /** Whether it still holds at {@code now}. */
    public boolean holds(long now) {
      return forever || now - until < 0;
    }
  }

  private final Map<String, Object> monitors = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<Object, Object> shared = new ConcurrentHashMap<>();
  private final AtomicReference<Stop> stop = new AtomicReference<>();
  private final Map<Long, Runnable> cleanups = new ConcurrentHashMap<>();
  private final AtomicInteger pinned = new AtomicInteger();
  private volatile long lastUsed = System.nanoTime();

  private RunState() {}

  /** The state of the run known as {@code run} in this JVM, made on first use. */
  public static RunState of(String run) {
    sweepIdle();
    RunState s = RUNS.computeIfAbsent(run, k -> new RunState());
    s.lastUsed = System.nanoTime();
    return s;
  }

  /** The state of {@code run} if this JVM has any, without making it. */
  public static RunState find(String run) {
    RunState s = RUNS.get(run);
    if (s != null) {
      s.lastUsed = System.nanoTime();
    }
    return s;
  }

  /** Drops the state of {@code run}, which has ended: nothing of it runs here any more. */
  public static void end(String run) {
    RUNS.remove(run);
  }

  /** How many runs this JVM keeps state for (for tests of the bound). */
  static int size() {
    return RUNS.size();
  }

  private static void sweepIdle() {
    long now = System.nanoTime();
    long last = LAST_SWEEP.get();
    if (now - last < TimeUnit.MINUTES.toNanos(1) || !LAST_SWEEP.compareAndSet(last, now)) {
      return;
    }
    long idle = TimeUnit.MINUTES.toNanos(IDLE_MINUTES);
    for (String run : RUNS.keySet()) {
      RUNS.computeIfPresent(run, (k, s) -> s.idleSince(now, idle) ? null : s);
    }
  }

  /**
   * Whether nothing of the run has been used for {@code idle} nanoseconds and nothing of it can
   * still matter: no undo registered (the launcher's running command), nothing {@link #share}d
   * until its run says so, no write in flight, no stop for good that a late worker must still
   * see.
   */
  boolean idleSince(long now, long idle) {
    Stop s = stop.get();
    return now - lastUsed > idle && cleanups.isEmpty() && pinned.get() == 0
        && (s == null || !s.forever())
        && inFlight.values().stream().allMatch(n -> n.get() == 0);
  }

  /** The run's monitor for {@code what} (a file it writes): the same object for every caller. */
  public Object monitor(String what) {
    return monitors.computeIfAbsent(what, k -> new Object());
  }

  /** Marks the run stopped: for good, or until {@code until} if not {@code forever}. */
  public void stop(String why, boolean forever, long until) {
    stop.accumulateAndGet(new Stop(why, forever, until),
        (was, next) -> was != null && was.forever() ? was : next);
  }

  /** Why the run is stopped now, or null if it is not. */
  public Stop stopped() {
    Stop s = stop.get();
    return s != null && s.holds(System.nanoTime()) ? s : null;
  }

  /**
   * Registers {@code cleanup} to run should the process be interrupted while the run runs;
   * closing the registration withdraws it.
   */
  public AutoCloseable onInterrupt(Runnable cleanup) {
    long seq = CLEANUP_SEQUENCE.incrementAndGet();
    cleanups.put(seq, cleanup);
    return () -> cleanups.remove(seq);
  }

  /** What every run of this JVM registered to undo on an interrupt, newest first. */
  public static List<Runnable> interruptCleanups() {
    java.util.TreeMap<Long, Runnable> all = new java.util.TreeMap<>(Comparator.reverseOrder());
    for (RunState s : RUNS.values()) {
      all.putAll(s.cleanups);
    }
    return List.copyOf(all.values());
  }

  /** The count of the run's requests in flight to {@code what}. */
  public AtomicInteger inFlight(String what) {
    return inFlight.computeIfAbsent(what, k -> new AtomicInteger());
  }

  /** The run's live progress counter {@code name} (see {@link LiveProgress}). */
  LongAdder counter(String name) {
    return counters.computeIfAbsent(name, k -> new LongAdder());
  }

  /** The counter's value, or -1 if none was made. */
  long read(String name) {
    LongAdder a = counters.get(name);
    return a == null ? -1 : a.sum();
  }

  /**
   * The object the run's workers in this JVM share under {@code key} (such as its link
   * throttle), made by {@code make} on first use.
   */
  @SuppressWarnings("unchecked")
  public <K, V> V shared(K key, Function<K, V> make) {
    return (V) shared.computeIfAbsent(key, k -> make.apply((K) k));
  }

  /** The object shared under {@code key}, or null if none was made. */
  @SuppressWarnings("unchecked")
  public <V> V sharedIfAny(Object key) {
    return (V) shared.get(key);
  }

  /**
   * Shares {@code value} under {@code key} with the run's workers in this JVM until the handle
   * returned is closed; the run's state is kept meanwhile, however long it goes unused.
   */
  public AutoCloseable share(Object key, Object value) {
    shared.put(key, value);
    pinned.incrementAndGet();
    java.util.concurrent.atomic.AtomicBoolean closed =
        new java.util.concurrent.atomic.AtomicBoolean();
    return () -> {
      if (closed.compareAndSet(false, true)) {
        shared.remove(key, value);
        pinned.decrementAndGet();
      }
    };
  }

  /** Removes what is shared under {@code key} and returns it, or null if there was none. */
  @SuppressWarnings("unchecked")
  public <V> V take(Object key) {
    return (V) shared.remove(key);
  }
}
