package io.beamsave.pipelines.locks;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The names of what a run keeps beside the images it writes and reads while it lives, which
 * {@link Leftovers} looks for once it has gone.
 */
public final class RunNames {
  private RunNames() {}

  /** A run's staging directory beside its images (or under the temporary directory). */
  public static final String STAGING_PREFIX = ".beamsave-staging-";

  /** A run's staging directory under an operator's {@code --staging}. */
  public static final String RUN_PREFIX = "run-";

  /** A run's lease beside images it reads or writes ({@link RunLease}). */
  public static final String LEASE_PREFIX = ".beamsave-lease-";

  /** A new run's own id: its lock, staging and leases name it. */
  public static String newRun() {
    byte[] b = new byte[8];
    new java.security.SecureRandom().nextBytes(b);
    return java.util.HexFormat.of().formatHex(b);
  }

  /**
   * A run's id as its staging names it: its UTC start, its process, and a random part (two runs
   * of one process may begin in one second).
   */
  public static String runId() {
    return ZonedDateTime.now(ZoneOffset.UTC)
        .format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss"))
        + "-" + ProcessHandle.current().pid() + "-" + newRun().substring(0, 6);
  }
}
