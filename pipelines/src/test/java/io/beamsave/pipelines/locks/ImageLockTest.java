package io.beamsave.pipelines.locks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.ImageWriter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One run writes an image at a time: a second is refused in one line naming the run that holds
 * it, however the image's path is spelled; a run's lock goes with it however it ends, and what a
 * killed run left beside its image (its partial image, its staging) is removed by the next run
 * there, which says so, and nothing that was not that run's.
 */
class ImageLockTest {
  @TempDir Path dir;
  Path out;
  String image;
  StringWriter notes = new StringWriter();

  @BeforeEach
  void imageDirectory() throws Exception {
    out = Files.createDirectories(dir.resolve("out"));
    image = out.resolve("lib.bsave").toString();
  }

  /** The refusal a run gets while {@code kind} run {@code pid} (on this host) holds {@code of}. */
  static Pattern refusal(String kind, String of, long pid) {
    return Pattern.compile(Pattern.quote("another " + kind + " of " + of + " is running (pid "
        + pid + " on ") + "[^,\n]+, started \\d{4}-\\d\\d-\\d\\dT[^)\n]+\\); wait for it to end");
  }

  @Test
  void aSecondRunOfAnImageIsRefusedInOneLineNamingTheRunThatHoldsIt() {
    try (ImageLock first = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null)) {
      assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null))
          .isInstanceOf(BeamsaveException.class)
          .message().matches(refusal("save", image, ProcessHandle.current().pid()));
    }
    // Once it ended, the image is free again.
    ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null).close();
  }

  @Test
  void anEmptyLockHeldAMomentByAnotherRunsClearingIsTakenNotNamed() throws Exception {
    // Another run clearing stale locks beside its image takes an empty lock file it finds
    // (one this run has just made) for a killed run's: it holds it a moment, removes it, and
    // lets go. That is no run holding the image.
    Path lock = ImageLock.lockFile(image);
    byte[] name = lock.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    try (Dir d = Dir.open(lock.getParent());
        OpenFile clearing = d.openOrCreate(name, 0644)) {
      assertThat(clearing.tryLock()).isTrue();
      Thread clearer = new Thread(() -> {
        try {
          Thread.sleep(100);
          d.delete(name);
          clearing.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      clearer.start();
      try (ImageLock taken = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save",
          List.of(image), null, null)) {
        assertThat(Files.readString(lock)).contains("pid=" + ProcessHandle.current().pid());
      }
      clearer.join();
      assertThat(lock).doesNotExist();
    }
  }

  @Test
  void aConsolidationHoldingTheImageIsNamedAsOne() {
    try (ImageLock held = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "consolidate", List.of(image), null, null)) {
      assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null))
          .message().startsWith("another consolidate of " + image + " is running");
    }
  }

  @Test
  void everySpellingOfTheImagesPathMeetsTheSameLock() throws Exception {
    Path link = Files.createSymbolicLink(dir.resolve("link"), out);
    try (ImageLock held = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null)) {
      for (String spelled : List.of(dir.resolve("out/../out/./lib.bsave").toString(),
          link.resolve("lib.bsave").toString())) {
        assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(spelled), null, null))
            .as(spelled)
            .message().matches(refusal("save", spelled, ProcessHandle.current().pid()));
      }
      // Another image beside it is another matter.
      ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(out.resolve("other.bsave").toString()), null, null)
          .close();
    }
  }

  @Test
  void aRunThatCannotLockEveryImageLocksNone() {
    String free = out.resolve("free.bsave").toString();
    try (ImageLock held = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null)) {
      assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(free, image), null, null))
          .message().startsWith("another save of " + image);
      // The image it did lock first was released with the refusal.
      ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(free), null, null).close();
    }
  }

  @Test
  void aRunThatEndsTakesItsLockFileAndItsStagingWithIt() throws Exception {
    Path staging = dir.resolve(RunNames.STAGING_PREFIX + "ends");
    ImageLock lock = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), staging.toString(), null);
    Path lockFile = ImageLock.lockFile(image);
    assertThat(lockFile).isRegularFile();
    assertThat(Files.readString(lockFile)).contains("run=" + lock.run(), "kind=save",
        "pid=" + ProcessHandle.current().pid());
    assertThat(staging).isDirectory();

    lock.close();
    lock.close();
    assertThat(lockFile).doesNotExist();
    assertThat(staging).doesNotExist();
  }

  @Test
  void anObjectStorageImageIsLockedForEveryRunOnThisHostByItsUri() {
    String object = "s3://bucket-" + System.nanoTime() + "/nightly/lib.bsave";
    try (ImageLock held = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(object), null, null)) {
      assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(object), null, null))
          .message().matches(refusal("save", object, ProcessHandle.current().pid()));
    }
  }

  @Test
  void whatAKilledRunLeftIsRemovedByTheNextRunBesideItWhichSaysSo() throws Exception {
    Path staging = out.resolve(RunNames.STAGING_PREFIX + "killed");
    Process run = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            HoldImageLock.class.getName(), image, staging.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    try {
      String said = new BufferedReader(
          new InputStreamReader(run.getInputStream(), StandardCharsets.UTF_8)).readLine();
      assertThat(said).startsWith("locked ");
      // While it lives, the lock is its, across processes.
      assertThatThrownBy(() -> ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null))
          .message().matches(refusal("save", image, run.pid()));
    } finally {
      run.destroyForcibly();
      assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    Path partial = ImageWriter.partialPath(Path.of(image));
    assertThat(partial).exists();
    assertThat(staging.resolve("listing")).exists();

    String other = out.resolve("other.bsave").toString();
    ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(other), null, new PrintWriter(notes)).close();

    assertThat(partial).doesNotExist();
    assertThat(staging).doesNotExist();
    assertThat(ImageLock.lockFile(image)).doesNotExist();
    assertThat(notes.toString()).matches(Pattern.quote("beamsave: removed what a killed save (pid "
        + run.pid() + ", started ") + "[^)]+" + Pattern.quote(") left: " + partial + ", "
        + staging) + "\\R");
  }

  @Test
  void aStaleLockRemovesItsPartialImageButNoStagingThatIsNotItsRunsOwn() throws Exception {
    // A lock file nobody holds, naming a staging directory that belongs to another run.
    Path staging = Files.createDirectories(out.resolve(RunNames.STAGING_PREFIX + "someone"));
    Files.writeString(staging.resolve("run"), "a live run");
    Properties p = new Properties();
    p.setProperty("kind", "save");
    p.setProperty("pid", "4242");
    p.setProperty("started", "2026-11-30T02:15:00Z");
    p.setProperty("staging", staging.toString());
    p.setProperty("run", "a dead run");
    try (var w = Files.newBufferedWriter(Path.of(image + ImageLock.SUFFIX))) {
      p.store(w, null);
    }
    Path partial = Files.writeString(ImageWriter.partialPath(Path.of(image)), "left");

    ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(out.resolve("other.bsave").toString()), null,
        new PrintWriter(notes)).close();

    assertThat(partial).doesNotExist();
    assertThat(staging.resolve("run")).hasContent("a live run");
    assertThat(Path.of(image + ImageLock.SUFFIX)).doesNotExist();
    assertThat(notes.toString()).isEqualTo("beamsave: removed what a killed save (pid 4242,"
        + " started 2026-11-30T02:15:00Z) left: " + partial + System.lineSeparator());
  }

  @Test
  void aLockFileThatIsAHardLinkToAFileElsewhereLeavesThatFileAsItWas() throws Exception {
    // Whoever may write beside images puts a link to someone's file where the lock goes (a
    // host without protected_hardlinks lets them link any file they can name).
    Path precious = Files.writeString(dir.resolve("precious"), "not a lock");
    Files.createLink(out.resolve("lib.bsave.lock"), precious);
    ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, null).close();
    assertThat(precious).hasContent("not a lock");
    assertThat(Files.getAttribute(precious, "unix:nlink")).isEqualTo(1);
  }

  @Test
  void anotherUsersLockNamingStagingBesideItRemovesNothing() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        io.beamsave.transforms.fs.Dir.effectiveUid() == 0, "making another user's files");
    Path staging = Files.createDirectories(out.resolve(RunNames.STAGING_PREFIX + "planted"));
    Files.writeString(staging.resolve(ImageLock.RUN_FILE), "r1");
    Path kept = Files.writeString(staging.resolve("kept"), "theirs");
    Path lock = Files.writeString(out.resolve("lib.bsave.lock"),
        "kind=save\nrun=r1\nstaging=" + staging + "\n");
    for (Path p : List.of(staging, staging.resolve(ImageLock.RUN_FILE), kept, lock)) {
      Files.setAttribute(p, "unix:uid", 65534);
    }
    ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(image), null, new PrintWriter(notes)).close();
    assertThat(kept).hasContent("theirs");
  }
}
