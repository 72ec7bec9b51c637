package io.beamsave.transforms.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RunStateTest {
  private static String run() {
    return "test-" + UUID.randomUUID();
  }

  @Test
  void aRunStoppedForGoodStaysStoppedAndAnotherRunIsNot() {
    String a = run();
    String b = run();
    RunState.of(a).stop("the save was stopped", true, 0);
    RunState.of(a).stop("the store is unreachable", false, System.nanoTime() + 1_000_000_000L);

    assertThat(RunState.of(a).stopped()).isNotNull();
    assertThat(RunState.of(a).stopped().why()).isEqualTo("the save was stopped");
    assertThat(RunState.of(b).stopped()).isNull();
    RunState.end(a);
    RunState.end(b);
  }

  @Test
  void aStopForAWhileEndsWhenItsTimeHasPassed() {
    String a = run();
    RunState.of(a).stop("the store is unreachable", false, System.nanoTime() - 1);
    assertThat(RunState.of(a).stopped()).isNull();
    RunState.of(a).stop("the store is unreachable", false, System.nanoTime() + 60_000_000_000L);
    assertThat(RunState.of(a).stopped()).isNotNull();
    RunState.end(a);
  }

  @Test
  void whatIsSharedUntilClosedKeepsTheRunsStateHoweverLongUnusedAndGoesWithIt() throws Exception {
    String a = run();
    RunState state = RunState.of(a);
    long later = System.nanoTime() + java.util.concurrent.TimeUnit.HOURS.toNanos(3);
    long idle = java.util.concurrent.TimeUnit.MINUTES.toNanos(RunState.IDLE_MINUTES);
    Object source = new Object();
    AutoCloseable shared = state.share("late files", source);
    assertThat(state.<Object>sharedIfAny("late files")).isSameAs(source);
    assertThat(state.idleSince(later, idle)).isFalse();
    shared.close();
    shared.close();
    assertThat(state.<Object>sharedIfAny("late files")).isNull();
    assertThat(state.idleSince(later, idle)).isTrue();
    state.shared("walked", k -> "listings");
    assertThat(state.<String>take("walked")).isEqualTo("listings");
    assertThat(state.<String>take("walked")).isNull();
    RunState.end(a);
  }

  @Test
  void anEndedRunLeavesNothingBehind() {
    String a = run();
    RunState.of(a).monitor("x");
    assertThat(RunState.find(a)).isNotNull();
    RunState.end(a);
    assertThat(RunState.find(a)).isNull();
    assertThat(LiveProgress.read(a, LiveProgress.FILES_DONE)).isEqualTo(-1);
  }

  @Test
  void oneMonitorPerThingPerRun() {
    String a = run();
    String b = run();
    assertThat(RunState.of(a).monitor("f")).isSameAs(RunState.of(a).monitor("f"));
    assertThat(RunState.of(a).monitor("f")).isNotSameAs(RunState.of(b).monitor("f"));
    assertThat(RunState.of(a).monitor("f")).isNotSameAs(RunState.of(a).monitor("g"));
    RunState.end(a);
    RunState.end(b);
  }

  @Test
  void interruptCleanupsRunNewestFirstAcrossRunsAndAClosedOneIsWithdrawn() throws Exception {
    String a = run();
    String b = run();
    List<String> ran = new ArrayList<>();
    AutoCloseable first = RunState.of(a).onInterrupt(() -> ran.add("a1"));
    AutoCloseable second = RunState.of(b).onInterrupt(() -> ran.add("b1"));
    AutoCloseable third = RunState.of(a).onInterrupt(() -> ran.add("a2"));
    second.close();

    RunState.interruptCleanups().forEach(Runnable::run);

    assertThat(ran).containsSubsequence("a2", "a1").doesNotContain("b1");
    first.close();
    third.close();
    RunState.end(a);
    RunState.end(b);
  }

  @Test
  void liveProgressCountsPerJob() {
    String job = run();
    LiveProgress.counter(job, LiveProgress.FILES_DONE).add(3);
    LiveProgress.counter(job, LiveProgress.FILES_DONE).add(4);
    assertThat(LiveProgress.read(job, LiveProgress.FILES_DONE)).isEqualTo(7);
    assertThat(LiveProgress.read(job, "other")).isEqualTo(-1);
    LiveProgress.forget(job);
    assertThat(LiveProgress.read(job, LiveProgress.FILES_DONE)).isEqualTo(-1);
  }

  @Test
  void sharedObjectsAreMadeOncePerRun() {
    String a = run();
    Object x = RunState.of(a).shared(100.0, rate -> new Object());
    Object y = RunState.of(a).shared(100.0, rate -> new Object());
    assertThat(x).isSameAs(y);
    RunState.end(a);
  }
}
