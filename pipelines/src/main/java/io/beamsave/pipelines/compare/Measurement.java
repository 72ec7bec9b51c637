package io.beamsave.pipelines.compare;

/**
 * One run of one strategy with one codec at one link speed: what the save and the transfer each
 * took and produced. {@code linkMbps} 0 means unthrottled; a local {@code bench} run has no
 * transfer.
 */
public record Measurement(
    int linkMbps,
    String strategy,
    String codec,
    int run,
    double saveSeconds,
    double transferSeconds,
    long rawBytes,
    long imageBytes,
    long storedBytes,
    String object) {

  /** Save, then transfer: the sequential strategies' total. */
  public double totalSeconds() {
    return saveSeconds + transferSeconds;
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
