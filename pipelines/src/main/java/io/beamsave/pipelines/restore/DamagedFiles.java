package io.beamsave.pipelines.restore;

import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.fs.FileStat;
import io.beamsave.transforms.fs.OpenFile;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.PathOrder;
import io.beamsave.transforms.read.RestoreTarget;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * The files {@code restore --skip-damaged} leaves out because their bytes do not read back as
 * saved, by path, with why: gathered from the records the workers leave at the target's top
 * ({@link RestoreTarget#damageLogName}), which are then removed. A record is believed only if
 * it is one this restore's user made (a regular file of one link, under this restore's token);
 * it can only make a restore leave a file out, never write one. Not thread-safe: the driver's.
 */
final class DamagedFiles {
  /** A record larger than this is not one a worker wrote for files of one restore. */
  private static final long MAX_RECORD = 256L << 20;

  private final Map<PathBytes, String> files = new TreeMap<>(PathOrder.PATHS);

  /** Takes the records the workers have left at {@code root} so far, and removes them. */
  void collect(Dir root, RestoreTarget target) throws IOException {
    for (byte[] name : root.list()) {
      if (!target.isDamageLog(name)) {
        continue;
      }
      try (OpenFile f = root.openRead(name)) {
        FileStat s = f.stat();
        if (s.isRegularFile() && s.links() == 1 && s.uid() == Dir.effectiveUid()
            && s.size() <= MAX_RECORD) {
          byte[] b = new byte[(int) s.size()];
          int n = Math.max(0, f.read(0, b, 0, b.length));
          parse(new String(b, 0, n, StandardCharsets.UTF_8));
        }
      }
      root.delete(name);
    }
  }

  private void parse(String record) {
    for (String line : record.split("\n")) {
      int tab = line.indexOf('\t');
      if (tab <= 0) {
        continue;
      }
      try {
        files.putIfAbsent(PathBytes.of(HexFormat.of().parseHex(line.substring(0, tab))),
            line.substring(tab + 1));
      } catch (IllegalArgumentException notHex) {
        // A line cut short when its worker was killed: the file's other pieces say it again.
      }
    }
  }

  boolean contains(PathBytes path) {
    return files.containsKey(path);
  }

  /** Hard links left out with the damaged files they are links to. */
  private long links;

  /** Notes hard link {@code path} as left out with its file, for {@code why}. */
  void addLink(PathBytes path, String why) {
    if (files.putIfAbsent(path, why) == null) {
      links++;
    }
  }

  /** The files left out, hard links not counted. */
  long fileCount() {
    return files.size() - links;
  }

  boolean isEmpty() {
    return files.isEmpty();
  }

  /** Path → why, in path order. */
  Map<PathBytes, String> all() {
    return java.util.Collections.unmodifiableMap(files);
  }
}
