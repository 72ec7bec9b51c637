package io.beamsave.transforms.run;

import java.io.Serializable;
import java.security.SecureRandom;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;

/**
 * One run's id, minted once where the run begins (a save's {@code Save.run}, a consolidation's,
 * a rekey's...) and carried to everything the run names: its staging directory, its locks and
 * lease, its snapshots, its hooks ({@code BEAMSAVE_RUN_ID}) and its Beam job. Its UTC start, its
 * process and a random part (two runs of one process may begin in one second):
 * {@code 20261207T021500-4242-a1b2c3}.
 */
public record RunId(String value) implements Serializable {
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss");
  private static final SecureRandom RANDOM = new SecureRandom();

  public RunId {
    if (value == null || !value.matches("[0-9A-Za-z][0-9A-Za-z-]{0,63}")) {
      throw new IllegalArgumentException("not a run id: '" + value + "'");
    }
  }

  /** A new run's id. */
  public static RunId mint() {
    byte[] b = new byte[3];
    RANDOM.nextBytes(b);
    return new RunId(ZonedDateTime.now(ZoneOffset.UTC).format(STAMP) + "-"
        + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(b));
  }

  /** A Beam job name of this run's, for a run of {@code kind} ({@code save}, ...). */
  public String jobName(String kind) {
    return ("beamsave-" + kind + "-" + value).toLowerCase(java.util.Locale.ROOT);
  }

  @Override
  public String toString() {
    return value;
  }
}
