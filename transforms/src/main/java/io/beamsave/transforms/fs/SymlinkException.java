package io.beamsave.transforms.fs;

import java.nio.file.FileSystemException;

/** A symbolic link met where a file or directory was to be opened without following links. */
public final class SymlinkException extends FileSystemException {
  SymlinkException(String file) {
    super(file, null, "is a symbolic link (not followed)");
  }
}
