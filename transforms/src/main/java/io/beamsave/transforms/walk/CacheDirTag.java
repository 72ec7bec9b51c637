package io.beamsave.transforms.walk;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.select.Excludes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code CACHEDIR.TAG} that marks a directory as a cache (bford.info/cachedir): with {@code
 * --exclude-caches} the walk keeps such a directory and its tag but nothing else in it, as GNU
 * tar and restic do. Static methods only.
 */
final class CacheDirTag {
  /** The tag's file name; the walk lists it alone in a tagged directory. */
  static final byte[] NAME = Excludes.CACHE_TAG.getBytes(StandardCharsets.US_ASCII);

  private CacheDirTag() {}

  /** Whether {@code dir} holds a CACHEDIR.TAG file that begins with the tag's signature. */
  static boolean tags(Dir dir, List<byte[]> children) {
    if (children.stream().noneMatch(c -> Arrays.equals(c, NAME))) {
      return false;
    }
    byte[] want = Excludes.CACHE_SIGNATURE.getBytes(StandardCharsets.US_ASCII);
    try {
      if (!dir.stat(NAME).isRegularFile()) {
        return false;
      }
      byte[] got = new byte[want.length];
      int n = 0;
      try (OpenFile f = dir.openRead(NAME)) {
        while (n < got.length) {
          int r = f.read(n, got, n, got.length - n);
          if (r <= 0) {
            break;
          }
          n += r;
        }
      }
      return n == want.length && Arrays.equals(got, want);
    } catch (IOException e) {
      // As tar and restic: a tag that cannot be read tags nothing.
      LibraryWalker.warn("cannot read " + Printable.text(dir.child(NAME))
          + ", so its directory is saved: " + BeamsaveException.describe(e));
      return false;
    }
  }
}
