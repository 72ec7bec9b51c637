package io.beamsave.pipelines.compare;

/** The ways of getting a library into object storage that {@code compare} measures. */
public enum Strategy {
  /** Save with codec none, upload raw: the baseline. */
  BASELINE("raw-save-raw-transfer", "raw save + raw transfer"),
  /** Save with codec none, compress during the upload (IBM ICC's way). */
  COMPRESS_IN_TRANSFER("raw-then-compress-in-transfer", "raw save + compress in transfer"),
  /** Save with the codec, upload the compressed image raw. */
  COMPRESS_AT_SAVE("compress-then-raw-transfer", "compress at save + raw transfer"),
  /** Save with the codec and upload each part of the image while later shards compress. */
  COMPRESS_WHILE_TRANSFERRING("compress-while-transferring", "compress while transferring"),
  /** A local save only ({@code bench}). */
  LOCAL_SAVE("save", "local save");

  private final String id;
  private final String label;

  Strategy(String id, String label) {
    this.id = id;
    this.label = label;
  }

  public String id() {
    return id;
  }

  public String label() {
    return label;
  }

  /** The commands that apply this strategy with {@code codec}, for a report's verdict. */
  public String command(String codec) {
    return switch (this) {
      case BASELINE -> "beamsave save --codec none --image DATA.bsave ...; beamsave upload"
          + " --from DATA.bsave --to s3://BUCKET/KEY";
      case COMPRESS_IN_TRANSFER -> "beamsave save --codec none --image DATA.bsave ...; beamsave"
          + " upload --from DATA.bsave --to s3://BUCKET/KEY --transfer-codec " + codec;
      case COMPRESS_AT_SAVE -> "beamsave save --codec " + codec + " --image DATA.bsave ...;"
          + " beamsave upload --from DATA.bsave --to s3://BUCKET/KEY";
      case COMPRESS_WHILE_TRANSFERRING -> "beamsave save --codec " + codec
          + " --image s3://BUCKET/KEY ...";
      case LOCAL_SAVE -> "beamsave save --codec " + codec + " --image DATA.bsave ...";
    };
  }

  /** What choosing this strategy costs later, if anything; else null. */
  public String caveat() {
    return this == COMPRESS_IN_TRANSFER
        ? "the object is stored transfer-compressed: list, verify, restore and mount download"
            + " it whole before reading it, where an image compressed at save is read in place"
            + " with ranged GETs"
        : null;
  }

  public static Strategy byId(String id) {
    for (Strategy s : values()) {
      if (s.id.equals(id)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown strategy " + id);
  }
}
