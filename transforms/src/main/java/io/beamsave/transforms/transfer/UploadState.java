package io.beamsave.transforms.transfer;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.UploadClaim;

/**
 * What it takes to resume an interrupted upload, kept as a small object beside its key ({@link
 * ImageUpload#stateObject}) from when the upload begins until it completes or is aborted: the
 * upload's {@link UploadClaim} (its id and the object it is to become, which is also what lets
 * {@code cleanup} abort it), what the key held when it began, the transfer codec and part size
 * it was sent with, and the image's length and name. A state that cannot be read is taken for
 * none; its numbers are read only when an upload is to be resumed from it.
 */
final class UploadState {
  private final UploadClaim claim;

  private UploadState(UploadClaim claim) {
    this.claim = claim;
  }

  /**
   * The state of an upload of {@code imageSize} bytes of {@code image} just begun as {@code
   * uploadId}, when the key held {@code expect} ({@link Store#ABSENT}, or the ETag of the object
   * it replaces).
   */
  static UploadState begun(ObjectUri to, String uploadId, String expect, TransferCodec codec,
      long partSize, long imageSize, String image) {
    return new UploadState(UploadClaim.of(uploadId, to.toString(), "upload", null)
        .with("expect", expect)
        .with("codec", codec.spec())
        .with("partSize", Long.toString(partSize))
        .with("imageSize", Long.toString(imageSize))
        .with("image", image));
  }

  /** The state of the upload in progress to {@code to}, or null if there is none. */
  static UploadState read(Store store, ObjectUri to) {
    return UploadClaim.read(store, ImageUpload.stateObject(to).key())
        .map(UploadState::new).orElse(null);
  }

  /** Writes this state beside {@code to}, replacing any. */
  void write(Store store, ObjectUri to) {
    claim.write(store, ImageUpload.stateObject(to).key());
  }

  String uploadId() {
    return claim.uploadId();
  }

  /** What the key held when the upload began; null in a state an earlier version wrote. */
  String expect() {
    return claim.get("expect");
  }

  /**
   * Fails, saying how to go on, unless an upload of an image of {@code imageSize} bytes sent
   * with {@code codec} in parts of {@code partSize} may continue the one this state describes.
   */
  void checkResumable(ObjectUri to, TransferCodec codec, long partSize, long imageSize) {
    String stateCodec = claim.get("codec");
    long statePart = number("partSize", 0);
    long stateSize = number("imageSize", -1);
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

  private long number(String name, long otherwise) {
    String v = claim.get(name);
    return v == null ? otherwise : Long.parseLong(v);
  }
}
