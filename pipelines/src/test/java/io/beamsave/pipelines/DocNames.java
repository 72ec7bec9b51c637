package io.beamsave.pipelines;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The check of a page of the docs against what the code has ({@link CodeNames}). In code spans: a
 * class name (two or more capitalised words, or any name with a package before it) is a class or
 * nested type under {@code *\/src/main/java} or {@code *\/src/test/java}, in that package if one is
 * given, with the member named after it; a path whose first part is an entry of the repository
 * exists (build output under {@code target/} aside); any other relative path begins with a name the
 * product uses (a file or directory of the repository, a string in the main code, a word of the
 * scripts and build files); a long option is one of the command line, one of Beam's pipeline
 * options, or one of a program or repository script named beside it. Fenced blocks are commands and
 * their output: only their options and repository paths are checked. A relative link's file exists.
 *
 * <p>Names of other software are listed here by hand, each with whose it is: S3's operations
 * and error codes; classes of the JDK, Beam and Flink by full name (loaded, so that a rename
 * there fails here too); other programs' options by program.
 */
final class DocNames {
  /** One stale name: where it is, which, and why it is stale. */
  record Finding(String file, int line, String name, String why) {
    @Override
    public String toString() {
      return file + ":" + line + ": `" + name + "`: " + why;
    }
  }

  /** S3's operations and error codes, which the docs name as a store answers them. */
  static final Set<String> S3_NAMES = Set.of("AbortIncompleteMultipartUpload", "AccessDenied",
      "InvalidAccessKeyId", "ListParts", "RequestTimeTooSkewed", "RequestTimeout",
      "SignatureDoesNotMatch", "SlowDown", "UploadPartCopy");

  /** Classes of the JDK, Beam and Flink the docs name, by full name. */
  static final List<String> LIBRARY_CLASSES = List.of(
      "java.nio.channels.FileChannel",
      "java.nio.file.attribute.FileTime",
      "org.apache.beam.runners.flink.FlinkRunner",
      "org.apache.beam.sdk.transforms.GroupByKey",
      "org.apache.flink.runtime.executiongraph.failover.NoRestartBackoffTimeStrategy");

  /** Options of other programs the docs show, by the program, named beside them. */
  static final Map<String, Set<String>> TOOL_OPTIONS = Map.of(
      "podman", Set.of("--rm", "--read-only", "--tmpfs", "--env-file"),
      "docker", Set.of("--rm", "--read-only", "--tmpfs", "--env-file"),
      "systemctl", Set.of("--now"),
      "diff", Set.of("--no-dereference"));

  /** Names the docs give an operator's own files in examples (`./img/x`, `./#name`). */
  static final Set<String> EXAMPLE_NAMES = Set.of("img", "#name");

  /** A Java-looking name: package, class, members (nested types, methods, fields). */
  private static final Pattern NAME = Pattern.compile(
      "(?<![\\w$./-])((?:[a-z][a-z0-9_]*\\.)*)([A-Z][A-Za-z0-9_]*)((?:\\.[A-Za-z_]\\w*)*)"
          + "(#\\w+)?(?![\\w$/-])");
  /** Two or more capitalised words, an acronym may end it: {@code ImageSink}, {@code FooIT}. */
  private static final Pattern CAMEL = Pattern.compile("[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+[A-Z]*");
  private static final Pattern OPTION = Pattern.compile("(?<![\\w-])--[A-Za-z][A-Za-z0-9-]*");
  private static final Pattern SPAN = Pattern.compile("(`+)(.+?)(?<!`)\\1(?!`)", Pattern.DOTALL);
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s#]+)(?:#[^)]*)?\\)");
  private static final Pattern SCRIPT = Pattern.compile("[\\w./-]*[\\w-]\\.sh\\b");
  /** Parts of a path that stand for any name: {@code <version>}, {@code {utc}}, {@code LINE}. */
  private static final Pattern PLACEHOLDER = Pattern.compile(
      "<[^>]*>|\\{[^}]*}|(?<![A-Za-z])[A-Z][A-Z0-9_]+(?![A-Za-z])|\\*+");

  private final CodeNames has;

  private DocNames(CodeNames has) {
    this.has = has;
  }

  /** Reads what the code has, from the repository at {@code root}. */
  static DocNames of(Path root) throws IOException {
    for (String name : LIBRARY_CLASSES) {
      if (!loads(name)) {
        throw new IllegalStateException("LIBRARY_CLASSES names " + name + ", which is not there");
      }
    }
    return new DocNames(CodeNames.read(root));
  }

  /** The stale names of the page at {@code file} (relative to the repository). */
  List<Finding> check(String file) throws IOException {
    return check(file, Files.readString(has.root.resolve(file), StandardCharsets.UTF_8));
  }

  /** The stale names of {@code text}, a page at {@code file} (relative to the repository). */
  List<Finding> check(String file, String text) {
    List<Finding> out = new ArrayList<>();
    String[] lines = text.split("\n", -1);
    // Paragraphs (a code span may run over lines), fenced blocks, and the section each is in.
    List<String> paragraph = new ArrayList<>();
    int paragraphStart = 0;
    boolean fenced = false;
    int fenceStart = 0;
    List<String> fence = new ArrayList<>();
    String[] sectionOf = sections(lines);
    for (int i = 0; i <= lines.length; i++) {
      String line = i < lines.length ? lines[i] : "";
      boolean marker = line.stripLeading().startsWith("```");
      if (fenced) {
        if (marker) {
          checkFence(file, fenceStart, fence, sectionOf[fenceStart - 1], out);
          fenced = false;
        } else {
          fence.add(line);
        }
        continue;
      }
      if (marker || line.isBlank() || i == lines.length) {
        if (!paragraph.isEmpty()) {
          checkParagraph(file, paragraphStart, String.join("\n", paragraph),
              sectionOf[paragraphStart - 1], out);
          paragraph.clear();
        }
        if (marker) {
          fenced = true;
          fenceStart = i + 1;
          fence.clear();
        }
        continue;
      }
      if (paragraph.isEmpty()) {
        paragraphStart = i + 1;
      }
      paragraph.add(line);
    }
    return out;
  }

  /** For each line, the text of the section (heading to heading) it is in. */
  private static String[] sections(String[] lines) {
    String[] of = new String[lines.length];
    int start = 0;
    boolean fenced = false;
    for (int i = 0; i <= lines.length; i++) {
      boolean heading = i < lines.length && !fenced && lines[i].startsWith("#");
      if (i < lines.length && lines[i].stripLeading().startsWith("```")) {
        fenced = !fenced;
      }
      if (heading || i == lines.length) {
        String text = String.join("\n", java.util.Arrays.asList(lines).subList(start, i));
        for (int k = start; k < i; k++) {
          of[k] = text;
        }
        start = i;
      }
    }
    return of;
  }

  private void checkParagraph(String file, int firstLine, String text, String section,
      List<Finding> out) {
    for (Matcher span = SPAN.matcher(text); span.find(); ) {
      String code = span.group(2);
      int at = span.start(2);
      IntLine lineOf = offset -> firstLine + count(text, at + offset);
      checkNames(file, code, lineOf, out);
      for (Matcher t = Pattern.compile("\\S+").matcher(code); t.find(); ) {
        String path = strip(t.group());
        String why = pathProblem(path, false);
        if (why != null) {
          out.add(new Finding(file, lineOf.at(t.start()), path, why));
        }
      }
      checkOptions(file, code, code + "\n" + section, lineOf, out);
    }
    for (Matcher link = LINK.matcher(text); link.find(); ) {
      String target = link.group(1);
      if (!target.contains(":")
          && !Files.exists(has.root.resolve(file).resolveSibling(target))) {
        out.add(new Finding(file, firstLine + count(text, link.start()), target,
            "the link's file is not there"));
      }
    }
  }

  private void checkFence(String file, int fenceLine, List<String> lines, String section,
      List<Finding> out) {
    String block = String.join("\n", lines);
    for (int k = 0; k < lines.size(); k++) {
      int line = fenceLine + 1 + k;
      checkOptions(file, lines.get(k), block + "\n" + section, offset -> line, out);
      for (Matcher t = Pattern.compile("\\S+").matcher(lines.get(k)); t.find(); ) {
        String path = strip(t.group());
        String why = pathProblem(path, true);
        if (why != null) {
          out.add(new Finding(file, line, path, why));
        }
      }
    }
  }

  private interface IntLine {
    int at(int offset);
  }

  private static int count(String text, int end) {
    int n = 0;
    for (int i = 0; i < end; i++) {
      n += text.charAt(i) == '\n' ? 1 : 0;
    }
    return n;
  }

  private static String strip(String token) {
    return token.replaceAll("^[(\\[\"',;:]+|[)\\]\"',;:.]+$", "");
  }

  /** Class names, with their package and member where given. */
  private void checkNames(String file, String code, IntLine lineOf, List<Finding> out) {
    for (Matcher m = NAME.matcher(code); m.find(); ) {
      String pkg = m.group(1).isEmpty() ? null : m.group(1).substring(0, m.group(1).length() - 1);
      String cls = m.group(2);
      if (m.end() < code.length() && code.charAt(m.end()) == '=') {
        continue; // a setting's name, as systemd's CacheDirectory=
      }
      if (pkg == null && !CAMEL.matcher(cls).matches()) {
        continue;
      }
      String name = m.group();
      int line = lineOf.at(m.start());
      List<CodeNames.JavaType> ours = has.types.getOrDefault(cls, List.of());
      if (ours.isEmpty()) {
        boolean foreign = S3_NAMES.contains(cls)
            || LIBRARY_CLASSES.stream().anyMatch(c -> c.endsWith("." + cls))
            || pkg != null && loads(pkg + "." + cls);
        if (!foreign) {
          out.add(new Finding(file, line, name,
              "no such class under */src/main/java or */src/test/java"));
        }
        continue;
      }
      if (pkg != null && ours.stream()
          .noneMatch(t -> t.pkg().equals(pkg) || t.pkg().endsWith("." + pkg))) {
        out.add(new Finding(file, line, name, cls + " is in "
            + String.join(", ", ours.stream().map(CodeNames.JavaType::pkg).distinct().toList())
            + ", not in a package " + pkg));
        continue;
      }
      List<String> members = new ArrayList<>();
      for (String s : m.group(3).split("\\.")) {
        if (!s.isEmpty()) {
          members.add(s);
        }
      }
      if (m.group(4) != null) {
        members.add(m.group(4).substring(1));
      }
      if (!members.isEmpty() && !members.get(0).equals("java")) {
        Pattern member = Pattern.compile("\\b" + Pattern.quote(members.get(0)) + "\\b");
        if (ours.stream().noneMatch(t -> member.matcher(t.source()).find())) {
          out.add(new Finding(file, line, name, cls + " has no " + members.get(0)));
        }
      }
    }
  }

  private static boolean loads(String className) {
    try {
      Class.forName(className, false, DocNames.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Why {@code token} names no path the repository or the product has, or null (also when it is
   * no relative path at all). {@code repoOnly}: only paths into the repository are checked.
   */
  private String pathProblem(String token, boolean repoOnly) {
    if (!token.contains("/") || token.contains(":") || token.contains("=")
        || token.startsWith("/") || token.startsWith("~") || token.startsWith("$")
        || token.startsWith("-") || token.startsWith("..") || token.contains("|")) {
      return null;
    }
    String path = token.startsWith("./") ? token.substring(2) : token;
    List<String> parts = new ArrayList<>();
    for (String p : path.split("/")) {
      if (!p.isEmpty() && !p.equals(".")) {
        parts.add(p);
      }
    }
    if (parts.isEmpty()) {
      return null;
    }
    if (has.topLevel.contains(parts.get(0))) {
      if (parts.contains("target")) {
        return null; // what a build writes: not there before one
      }
      return matches(has.root, parts, 0) ? null : "no such file or directory in the repository";
    }
    if (repoOnly) {
      return null;
    }
    String first = parts.get(0);
    Pattern p = segmentPattern(first);
    if (p == null) {
      return has.vocabulary.contains(first) || EXAMPLE_NAMES.contains(first) ? null
          : first + " is neither in the repository nor a name the code uses";
    }
    if (p.pattern().equals(".*")
        || has.vocabulary.stream().anyMatch(w -> p.matcher(w).matches())) {
      return null;
    }
    return first + " matches no name the code uses";
  }

  /** A segment with placeholders as a pattern; null when it has none. */
  private static Pattern segmentPattern(String segment) {
    Matcher m = PLACEHOLDER.matcher(segment);
    StringBuilder re = new StringBuilder();
    int last = 0;
    boolean any = false;
    while (m.find()) {
      re.append(Pattern.quote(segment.substring(last, m.start()))).append(".*");
      last = m.end();
      any = true;
    }
    if (!any) {
      return null;
    }
    re.append(Pattern.quote(segment.substring(last)));
    String s = re.toString().replace("\\Q\\E", "");
    return Pattern.compile(s.equals(".*") ? ".*" : s);
  }

  /** Whether {@code parts[i..]} names something under {@code dir} ({@code ...} for any depth). */
  private static boolean matches(Path dir, List<String> parts, int i) {
    if (i == parts.size()) {
      return true;
    }
    String part = parts.get(i);
    if (part.equals("...") || part.equals("**")) {
      if (matches(dir, parts, i + 1)) {
        return true;
      }
      return children(dir).stream().filter(Files::isDirectory)
          .anyMatch(d -> matches(d, parts, i));
    }
    Pattern p = segmentPattern(part);
    if (p == null) {
      Path next = dir.resolve(part);
      return Files.exists(next) && matches(next, parts, i + 1);
    }
    return children(dir).stream()
        .filter(c -> p.matcher(c.getFileName().toString()).matches())
        .anyMatch(c -> matches(c, parts, i + 1));
  }

  private static List<Path> children(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Long options of {@code code}: beamsave's, Beam's, or those of a program or repository script
   * {@code context} (the span or block, and its section) names.
   */
  private void checkOptions(String file, String code, String context, IntLine lineOf,
      List<Finding> out) {
    Set<String> theirs = null;
    for (Matcher m = OPTION.matcher(code); m.find(); ) {
      String option = m.group();
      if (has.cliOptions.contains(option) || has.beamOptions.contains(option)) {
        continue;
      }
      if (theirs == null) {
        theirs = foreignOptions(context);
      }
      if (!theirs.contains(option)) {
        out.add(new Finding(file, lineOf.at(m.start()), option,
            "not an option of beamsave, of Beam, or of a program or script named beside it"));
      }
    }
  }

  private Set<String> foreignOptions(String context) {
    Set<String> options = new HashSet<>();
    TOOL_OPTIONS.forEach((tool, theirs) -> {
      if (Pattern.compile("(?<![\\w-])" + Pattern.quote(tool) + "(?![\\w-])").matcher(context)
          .find()) {
        options.addAll(theirs);
      }
    });
    for (Matcher m = SCRIPT.matcher(context); m.find(); ) {
      String name = m.group();
      Path here = has.root.resolve(name);
      List<Path> scripts = Files.isRegularFile(here) ? List.of(here)
          : has.filesByName.getOrDefault(Path.of(name).getFileName().toString(), List.of());
      for (Path script : scripts) {
        try {
          String text = Files.readString(script, StandardCharsets.ISO_8859_1);
          for (Matcher o = OPTION.matcher(text); o.find(); ) {
            options.add(o.group());
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return options;
  }
}
