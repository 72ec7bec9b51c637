package io.beamsave.transforms;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * A failure the operator can act on (a missing library, an unreadable file, a file that changed
 * during the save). Its message is one line naming the path and the cause; the command line
 * prints it without a stack trace.
 */
public class BeamsaveException extends RuntimeException {
  public BeamsaveException(String message) {
    super(message);
  }

  public BeamsaveException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Wraps an I/O failure on {@code path} as "{@code action path: cause}". */
  public static BeamsaveException io(String action, Object path, IOException e) {
    // A failure on a directory on the way (a symlink swapped in, say) names that directory.
    String on = e instanceof FileSystemException f && f.getFile() != null
        && !f.getFile().equals(String.valueOf(path)) ? f.getFile() + ": " : "";
    return new BeamsaveException(action + " " + path + ": " + on + describe(e), e);
  }

  /** The cause of an I/O failure in words, without repeating the path NIO puts in messages. */
  public static String describe(IOException e) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NoSuchFileException) {
      return "no such file or directory";
    }
    if (e instanceof NotDirectoryException) {
      return "not a directory";
    }
    if (e instanceof FileSystemException && ((FileSystemException) e).getReason() != null) {
      return ((FileSystemException) e).getReason();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
