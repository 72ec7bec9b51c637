package io.beamsave.transforms.select;

import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The patterns of an {@code --exclude-file}, read as .gitignore reads its lines: one pattern a
 * line, blank lines and {@code #} comments skipped, trailing blanks dropped unless a backslash
 * quotes the last. Each is compiled here, so a bad one is named by its file and line before
 * anything runs.
 */
public final class ExcludeFile {
  private ExcludeFile() {}

  /** The patterns {@code file} holds, in order. */
  public static List<String> read(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read --exclude-file", file, e);
    }
    List<String> patterns = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      String p = n == 0 && lines.get(0).startsWith("\uFEFF") ? lines.get(0).substring(1)
          : lines.get(n);
      int end = p.length();
      while (end > 0 && (p.charAt(end - 1) == ' ' || p.charAt(end - 1) == '\t')
          && !(end > 1 && p.charAt(end - 2) == '\\')) {
        end--;
      }
      p = p.substring(0, end);
      if (p.isEmpty() || p.startsWith("#")) {
        continue;
      }
      String where = "--exclude-file " + file + " line " + (n + 1);
      if (p.startsWith("!")) {
        throw new BeamsaveException(where + ": '" + p + "': negation ('!') is not"
            + " supported; write only what to leave out (a leading '!' in a name: '\\!')");
      }
      try {
        Glob.compile(p, where);
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
      patterns.add(p);
    }
    return patterns;
  }
}
