package io.beamsave.pipelines.compare;

/**
 * One run of one strategy with one codec at one link speed: what the save and the transfer each
 * took and produced, and the total from the start of the save to the stored object. For the
 * sequential strategies the total is save + transfer; for compress while transferring it is measured, and
 * less than their sum by the time they ran together. {@code linkMbps} 0 means unthrottled; a
 * local {@code bench} run has no transfer, but a restore of its image into a scratch directory.
 *
 * <p>{@code bytesStoredRaw}: raw bytes of blocks the codec could not shrink. {@code saveUsage}
 * and {@code restoreUsage}: the CPU and I/O calls of the save and of the restore (null where
 * not measured: compare restores nothing); {@code restoreSeconds} 0 when there was no restore.
 */
public record Measurement(
    int linkMbps,
    String strategy,
    String codec,
    int run,
    double saveSeconds,
    double transferSeconds,
    double totalSeconds,
    long rawBytes,
    long imageBytes,
    long storedBytes,
    String object,
    long bytesStoredRaw,
    ProcessUsage saveUsage,
    double restoreSeconds,
    ProcessUsage restoreUsage)
    implements Figures {

  /** A save, then a transfer of its image. */
  static Measurement sequential(
      int linkMbps, String strategy, String codec, int run, double saveSeconds,
      double transferSeconds, long rawBytes, long imageBytes, long storedBytes, String object,
      long bytesStoredRaw, ProcessUsage saveUsage) {
    return new Measurement(linkMbps, strategy, codec, run, saveSeconds, transferSeconds,
        saveSeconds + transferSeconds, rawBytes, imageBytes, storedBytes, object, bytesStoredRaw,
        saveUsage, 0, null);
  }

  /** A local save and the restore of its image ({@code bench}). */
  static Measurement local(
      String codec, int run, double saveSeconds, long rawBytes, long imageBytes,
      long bytesStoredRaw, ProcessUsage saveUsage, double restoreSeconds,
      ProcessUsage restoreUsage) {
    return new Measurement(0, Strategy.LOCAL_SAVE.id(), codec, run, saveSeconds, 0, saveSeconds,
        rawBytes, imageBytes, 0, null, bytesStoredRaw, saveUsage, restoreSeconds, restoreUsage);
  }
}
