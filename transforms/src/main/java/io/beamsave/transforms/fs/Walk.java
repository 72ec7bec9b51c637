package io.beamsave.transforms.fs;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A walk of a tree through directory handles: each directory opened from its parent's handle
 * without following a link, so a directory swapped for a link while the walk is under way is
 * seen as the link, never entered, and the walk never leaves the tree it began in; nor does it go
 * deeper than {@link Removal#MAX_DEPTH} levels. What vanishes while it is walked is passed over. Names are bytes; {@link #text} gives a name as a string
 * where it is UTF-8. Not thread-safe.
 */
public final class Walk {
  private Walk() {}

  /** What a walk does with what it meets. */
  public interface Visitor {
    /**
     * Whether to walk into directory {@code rel} (relative to the top, {@code /}-separated);
     * asked after {@link #visit} of it.
     */
    default boolean enter(byte[] rel, FileStat s) {
      return true;
    }

    /** {@code rel}, relative to the top, whose status is {@code s} (not followed). */
    void visit(byte[] rel, FileStat s) throws IOException;

    /**
     * Like {@link #visit(byte[], FileStat)}, with the handle of the directory that holds it and
     * its name there, for a visitor that opens what it meets beneath the walk's handles.
     */
    default void visit(Dir dir, byte[] name, byte[] rel, FileStat s) throws IOException {
      visit(rel, s);
    }
  }

  /**
   * Walks what is beneath {@code top} (not {@code top} itself), which is taken as {@code cd}
   * would take it. A missing {@code top} is an empty tree.
   */
  public static void tree(Path top, Visitor v) throws IOException {
    try (Dir d = Dir.open(top)) {
      tree(d, v);
    } catch (NoSuchFileException nothing) {
      // Nothing to walk.
    }
  }

  /** Walks what is beneath {@code top}. */
  public static void tree(Dir top, Visitor v) throws IOException {
    Deep.run(() -> {
      walk(top, new byte[0], v, 0);
      return null;
    });
  }

  private static void walk(Dir dir, byte[] rel, Visitor v, int depth) throws IOException {
    if (depth > Removal.MAX_DEPTH) {
      // Deeper than anything beamsave makes or looks for: passed over, as a walk of its own
      // things must not fail because someone nested a tree of theirs beyond it.
      return;
    }
    byte[][] names = dir.list().toArray(byte[][]::new);
    Arrays.sort(names, Arrays::compareUnsigned);
    for (byte[] name : names) {
      byte[] path = rel.length == 0 ? name : join(rel, name);
      FileStat s;
      try {
        s = dir.stat(name);
      } catch (NoSuchFileException gone) {
        continue;
      }
      v.visit(dir, name, path, s);
      if (s.isDirectory() && v.enter(path, s)) {
        try (Dir sub = dir.openDir(name)) {
          walk(sub, path, v, depth + 1);
        } catch (NoSuchFileException | SymlinkException | java.nio.file.NotDirectoryException
            changed) {
          // Gone or swapped for something else since it was looked at: passed over.
        }
      }
    }
  }

  private static byte[] join(byte[] rel, byte[] name) {
    byte[] out = Arrays.copyOf(rel, rel.length + 1 + name.length);
    out[rel.length] = '/';
    System.arraycopy(name, 0, out, rel.length + 1, name.length);
    return out;
  }

  /** {@code bytes} as a string if they are UTF-8, else null. */
  public static String text(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** The last component of {@code rel}. */
  public static byte[] fileName(byte[] rel) {
    int slash = rel.length - 1;
    while (slash >= 0 && rel[slash] != '/') {
      slash--;
    }
    return Arrays.copyOfRange(rel, slash + 1, rel.length);
  }
}
