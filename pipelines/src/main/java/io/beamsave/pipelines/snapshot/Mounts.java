package io.beamsave.pipelines.snapshot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What {@code /proc/self/mountinfo} says of the mounts: where each is and what it holds. */
record Mounts(List<Mount> all) {
  /** One mount: its mount point, file-system type and source (a device, or what it names). */
  record Mount(Path point, String type, String source) {}

  static Mounts read() throws IOException {
    // Bytes, not text: a mount point's name need not be UTF-8, and must not stop the read.
    String raw = new String(Files.readAllBytes(Path.of("/proc/self/mountinfo")),
        java.nio.charset.StandardCharsets.UTF_8);
    return parse(raw.lines().toList());
  }

  static Mounts parse(List<String> lines) {
    List<Mount> all = new java.util.ArrayList<>();
    for (String line : lines) {
      String[] f = line.split(" ");
      int dash = java.util.Arrays.asList(f).indexOf("-");
      if (f.length < 5 || dash < 0 || dash + 2 >= f.length) {
        continue;
      }
      all.add(new Mount(Path.of(unescape(f[4])), f[dash + 1], unescape(f[dash + 2])));
    }
    return new Mounts(List.copyOf(all));
  }

  /** The mount {@code path} (a real path) lies on: the last mounted of the deepest points. */
  Mount of(Path path) {
    Mount best = null;
    for (Mount m : all) {
      if (path.startsWith(m.point())
          && (best == null || m.point().getNameCount() >= best.point().getNameCount())) {
        best = m;
      }
    }
    if (best == null) {
      throw new IllegalStateException("no mount holds " + path);
    }
    return best;
  }

  /** Mount points strictly beneath {@code dir}. */
  List<Path> beneath(Path dir) {
    return all.stream().map(Mount::point).filter(p -> p.startsWith(dir) && !p.equals(dir))
        .distinct().toList();
  }

  /** mountinfo writes a space, tab, newline and backslash as {@code \ooo}. */
  private static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
        b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
