package io.beamsave.pipelines.compare;

/**
 * One run of one strategy with one codec at one link speed: what the save and the transfer each
 * took and produced, and the total from the start of the save to the stored object. For the
 * sequential strategies the total is save + transfer; for the overlapped one it is measured, and
 * less than their sum by the time they ran together. {@code linkMbps} 0 means unthrottled; a
 * local {@code bench} run has no transfer.
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
    String object) {

  /** A save, then a transfer of its image. */
  static Measurement sequential(
      int linkMbps, String strategy, String codec, int run, double saveSeconds,
      double transferSeconds, long rawBytes, long imageBytes, long storedBytes, String object) {
    return new Measurement(linkMbps, strategy, codec, run, saveSeconds, transferSeconds,
        saveSeconds + transferSeconds, rawBytes, imageBytes, storedBytes, object);
  }

  /** Raw bytes over stored (or, without a transfer, image) bytes. */
  public double ratio() {
    long out = storedBytes > 0 ? storedBytes : imageBytes;
    return (double) rawBytes / Math.max(1, out);
  }

  /** Raw megabytes per second over the whole strategy. */
  public double rateMbPerSecond() {
    return rawBytes / 1e6 / Math.max(totalSeconds(), 1e-9);
  }
}
