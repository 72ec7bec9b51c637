package io.beamsave.pipelines.compare;

/**
 * The figures one row of the report shows, for one run ({@link Measurement}) and for the
 * average of several ({@link Report.Average}) alike, so both tables are laid out by one code.
 */
interface Figures {
  int linkMbps();

  String strategy();

  String codec();

  double saveSeconds();

  double transferSeconds();

  double totalSeconds();

  long rawBytes();

  long imageBytes();

  long storedBytes();

  long bytesStoredRaw();

  /** Null where not measured. */
  ProcessUsage saveUsage();

  /** 0 where there was no restore. */
  double restoreSeconds();

  /** Null where there was no restore. */
  ProcessUsage restoreUsage();

  /** What ended up where the strategy puts it: the stored object, or the local image. */
  default long outBytes() {
    return storedBytes() > 0 ? storedBytes() : imageBytes();
  }

  /** Raw bytes over stored (or, without a transfer, image) bytes. */
  default double ratio() {
    return (double) rawBytes() / Math.max(1, outBytes());
  }

  /** Raw megabytes (10^6 bytes) per second over the whole strategy. */
  default double rateMbPerSecond() {
    return rawBytes() / 1e6 / Math.max(totalSeconds(), 1e-9);
  }
}
