package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.Store;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Properties;

/**
 * What it takes to resume an interrupted upload, kept as a small object beside its key ({@link
 * ImageUpload#stateObject}) from when the upload begins until it completes or is aborted: the
 * upload's id, what the key held when it began, the transfer codec and part size it was sent
 * with, and the image's length and name, as Java properties. A state that cannot be read is
 * taken for none; its numbers are read only when an upload is to be resumed from it.
 */
final class UploadState {
  private final Properties properties;

  private UploadState(Properties properties) {
    this.properties = properties;
  }

  /**
   * The state of an upload of {@code imageSize} bytes of {@code image} just begun as {@code
   * uploadId}, when the key held {@code expect} ({@link Store#ABSENT}, or the ETag of the object
   * it replaces).
   */
  static UploadState begun(String uploadId, String expect, TransferCodec codec, long partSize,
      long imageSize, String image) {
    Properties p = new Properties();
    p.setProperty("uploadId", uploadId);
    p.setProperty("expect", expect);
    p.setProperty("codec", codec.spec());
    p.setProperty("partSize", Long.toString(partSize));
    p.setProperty("imageSize", Long.toString(imageSize));
    p.setProperty("image", image);
    return new UploadState(p);
  }

  /** The state of the upload in progress to {@code to}, or null if there is none. */
  static UploadState read(Store store, ObjectUri to) {
    String key = ImageUpload.stateObject(to).key();
    if (store.stat(key).isEmpty()) {
      return null;
    }
    Properties p = new Properties();
    try {
      p.load(new ByteArrayInputStream(store.get(key)));
    } catch (IOException e) {
      return null;
    }
    return p.getProperty("uploadId") == null ? null : new UploadState(p);
  }

  /** Writes this state beside {@code to}, replacing any. */
  void write(Store store, ObjectUri to) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      properties.store(out, "beamsave upload in progress; removed when it completes");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    byte[] text = out.toByteArray();
    store.put(ImageUpload.stateObject(to).key(), text, text.length, "text/plain");
  }

  String uploadId() {
    return properties.getProperty("uploadId");
  }

  /** What the key held when the upload began; null in a state an earlier version wrote. */
  String expect() {
    return properties.getProperty("expect");
  }

  /**
   * Fails, saying how to go on, unless an upload of an image of {@code imageSize} bytes sent
   * with {@code codec} in parts of {@code partSize} may continue the one this state describes.
   */
  void checkResumable(ObjectUri to, TransferCodec codec, long partSize, long imageSize) {
    String stateCodec = properties.getProperty("codec");
    long statePart = Long.parseLong(properties.getProperty("partSize", "0"));
    long stateSize = Long.parseLong(properties.getProperty("imageSize", "-1"));
    if (!codec.spec().equals(stateCodec) || statePart != partSize) {
      throw new BeamsaveException(
          to + ": the interrupted upload used --transfer-codec " + stateCodec + " and --part-size "
              + statePart + "; resume with the same options, or upload again without --resume");
    }
    if (stateSize < 0) {
      // Left by an earlier version, which uploaded images while they were being written.
      throw new BeamsaveException(
          to + ": the interrupted upload was sent while its image was being written and cannot"
              + " be resumed; upload again without --resume");
    }
    if (stateSize != imageSize) {
      throw new BeamsaveException(
          to + ": the interrupted upload was of another image (" + stateSize + " bytes, this one "
              + "has " + imageSize + "); upload again without --resume");
    }
  }
}
