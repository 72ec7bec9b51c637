package io.beamsave.pipelines.restore;

import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Beneath;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.image.catalog.CatalogPaths;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.util.ArrayDeque;

/**
 * The files a restore leaves under temporary names ({@link RestoreTarget#temporaryName}) until
 * they are whole and placed: removed, throughout the target, when that restore failed, and when
 * a rerun with {@code --overwrite} completes one that did not finish. Static methods only.
 */
final class TemporaryFiles {
  private TemporaryFiles() {}

  /**
   * Removes the temporary files of the restore whose token is {@code token} everywhere in the
   * target, walking it through bounded handles and no deeper than a catalog may nest: a tree
   * planted in the target nesting 30,000 deep overflowed a recursive walk.
   */
  static void removeAll(Dir root, String token) throws IOException {
    ArrayDeque<PathBytes> todo = new ArrayDeque<>();
    todo.push(PathBytes.of(new byte[0]));
    try (Beneath walk = new Beneath(root)) {
      while (!todo.isEmpty()) {
        PathBytes rel = todo.pop();
        Dir dir = walk.dir(rel.bytes(), rel.length());
        for (byte[] name : dir.list()) {
          FileStat s = dir.stat(name);
          if (s.isDirectory()) {
            if (CatalogPaths.depth(rel) < ImageFormat.MAX_DEPTH) {
              todo.push(rel.child(name));
            }
          } else if (RestoreTarget.isTemporaryOf(name, token)) {
            dir.delete(name);
          }
        }
      }
    }
  }
}
