package io.beamsave.transforms.fs;

import java.nio.file.FileSystemException;

/**
 * The filesystem does not support what was asked ({@code EOPNOTSUPP}): extended attributes where
 * it keeps none, an ACL where it has them off.
 */
public final class NotSupportedException extends FileSystemException {
  private static final long serialVersionUID = 1L;

  NotSupportedException(String file) {
    super(file, null, "not supported by its filesystem");
  }
}
