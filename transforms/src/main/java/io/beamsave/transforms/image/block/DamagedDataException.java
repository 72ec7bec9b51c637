package io.beamsave.transforms.image.block;

import io.beamsave.transforms.format.ImageException;

/**
 * A block of a shard, or a file's extent, does not read back as saved: its checksum or seal
 * fails, it does not decode, it lies past the end of a truncated image, or the bytes decoded do
 * not match the extent's digest. The files with bytes there cannot be restored as saved; files
 * elsewhere in the image can. A catalog that contradicts itself is not this: that is the image
 * refused whole ({@link ImageException}).
 */
public class DamagedDataException extends ImageException {
  public DamagedDataException(String message, Throwable cause) {
    super(message, cause);
  }

  public DamagedDataException(String message) {
    super(message);
  }
}
