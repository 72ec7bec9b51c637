package io.beamsave.transforms.select;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.ByteArrayOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a save takes from one library when {@code --files-from} lists paths: each listed entry,
 * a listed directory with everything under it, and the directories on the way to them (stored
 * as directories, so that a restore recreates them with their metadata). Excludes still apply
 * on top. Paths are bytes, as the list gave them.
 */
public final class FilesFrom implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One path of the list: where it came from (the line, or the entry of a NUL list). */
  public record Line(int number, byte[] path) {}

  /** Each listed path, relative to the library, with the first line that listed it. */
  private final LinkedHashMap<PathBytes, Integer> listed;
  private transient Set<PathBytes> onTheWay;

  private FilesFrom(LinkedHashMap<PathBytes, Integer> listed) {
    this.listed = listed;
  }

  /**
   * The paths of a list's {@code content}: one per line, blank lines and lines beginning with
   * {@code #} skipped; or, when {@code nul}, separated by NUL bytes (which no name holds, so a
   * list from {@code find -print0} may hold any name), only empty ones skipped.
   */
  public static List<Line> lines(byte[] content, boolean nul) {
    List<Line> lines = new ArrayList<>();
    byte sep = nul ? (byte) 0 : (byte) '\n';
    int start = 0;
    int number = 1;
    for (int i = 0; i <= content.length; i++) {
      if (i == content.length || content[i] == sep) {
        byte[] path = Arrays.copyOfRange(content, start, i);
        if (path.length > 0 && (nul || path[0] != '#')) {
          lines.add(new Line(number, path));
        }
        number++;
        start = i + 1;
      }
    }
    return lines;
  }

  /**
   * The selection {@code lines} make in each of {@code roots} (library name to the absolute
   * paths, as bytes, that name its directory): a relative path applies to every library, an
   * absolute one to the library it lies in. A path in no library, or with a {@code ..} component, is a
   * {@link BeamsaveException} naming {@code source} and the line. A library no line selects
   * from is absent from the result; one with a line naming its top has everything saved.
   */
  public static Map<String, FilesFrom> select(
      String source, List<Line> lines, Map<String, List<byte[]>> roots) {
    Map<String, LinkedHashMap<PathBytes, Integer>> byLibrary = new LinkedHashMap<>();
    roots.keySet().forEach(name -> byLibrary.put(name, new LinkedHashMap<>()));
    for (Line line : lines) {
      String where = source + " line " + line.number();
      byte[] p = line.path();
      List<String> in = new ArrayList<>(roots.keySet());
      if (p[0] == '/') {
        in.clear();
        search:
        for (Map.Entry<String, List<byte[]>> root : roots.entrySet()) {
          for (byte[] given : root.getValue()) {
            byte[] r = stripSlashes(given);
            if (startsWithDir(p, r)) {
              p = Arrays.copyOfRange(p, r.length, p.length);
              in.add(root.getKey());
              break search;
            }
          }
        }
        if (in.isEmpty()) {
          throw new BeamsaveException(where + ": '" + Printable.bytes(line.path())
              + "' is not in " + (roots.size() == 1 ? "the library "
                  + Printable.bytes(roots.values().iterator().next().get(0)) : "any --library"));
        }
      }
      PathBytes rel = normalize(p, where, line.path());
      for (String name : in) {
        byLibrary.get(name).putIfAbsent(rel, line.number());
      }
    }
    Map<String, FilesFrom> out = new LinkedHashMap<>();
    byLibrary.forEach((name, listed) -> out.put(name, new FilesFrom(listed)));
    return out;
  }

  private static byte[] stripSlashes(byte[] root) {
    int end = root.length;
    while (end > 1 && root[end - 1] == '/') {
      end--;
    }
    return end == root.length ? root : Arrays.copyOf(root, end);
  }

  /** Whether {@code p} is {@code dir} or lies under it. */
  private static boolean startsWithDir(byte[] p, byte[] dir) {
    if (p.length < dir.length || !Arrays.equals(p, 0, dir.length, dir, 0, dir.length)) {
      return false;
    }
    return p.length == dir.length || p[dir.length] == '/' || dir[dir.length - 1] == '/';
  }

  /** {@code p} without empty and {@code .} components; the library's top is the empty path. */
  private static PathBytes normalize(byte[] p, String where, byte[] given) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(p.length);
    int start = 0;
    for (int i = 0; i <= p.length; i++) {
      if (i == p.length || p[i] == '/') {
        int len = i - start;
        boolean dot = len == 1 && p[start] == '.';
        boolean dotDot = len == 2 && p[start] == '.' && p[start + 1] == '.';
        if (dotDot) {
          // Which entry '..' names depends on symlinks on the way: the list must say.
          throw new BeamsaveException(where + ": '" + Printable.bytes(given)
              + "' has a '..' component; list the path without it");
        }
        if (len > 0 && !dot) {
          if (out.size() > 0) {
            out.write('/');
          }
          out.write(p, start, len);
        }
        start = i + 1;
      }
    }
    return PathBytes.of(out.toByteArray());
  }

  /** Whether the list names the library's top, so that everything is saved. */
  public boolean all() {
    return listed.containsKey(PathBytes.of(new byte[0]));
  }

  /** Whether {@code rel} was listed itself (a directory listed brings all under it). */
  public boolean listed(PathBytes rel) {
    return listed.containsKey(rel);
  }

  /** Whether {@code rel} is a directory on the way to a listed path, not listed itself. */
  public boolean onTheWay(PathBytes rel) {
    if (onTheWay == null) {
      Set<PathBytes> dirs = new HashSet<>();
      for (PathBytes p : listed.keySet()) {
        for (PathBytes d = p.parent(); d != null && dirs.add(d); d = d.parent()) {
          // Each parent once: the loop stops at one an earlier path already brought.
        }
      }
      onTheWay = dirs;
    }
    return onTheWay.contains(rel);
  }

  /** The listed paths. */
  public Set<PathBytes> paths() {
    return listed.keySet();
  }

  /** The line that first listed {@code rel}. */
  public int line(PathBytes rel) {
    return listed.getOrDefault(rel, 0);
  }
}
