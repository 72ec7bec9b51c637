package io.beamsave.pipelines;

import io.beamsave.pipelines.cli.BeamsaveCommand;
import io.beamsave.pipelines.runner.ClusterJarOptions;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import picocli.CommandLine;

/**
 * What the code has that a page of the docs may name ({@link DocNames}), read from the
 * repository itself (build output and {@code .git} aside): its classes, its command line's
 * options and the Beam options it passes on, its files, and the names it uses.
 */
final class CodeNames {
  final Path root;
  /** The repository's own entries: {@code docs}, {@code pipelines}, {@code bench}, ... */
  final Set<String> topLevel = new HashSet<>();
  /** Classes and nested types by simple name, with their package and file's text. */
  final Map<String, List<JavaType>> types = new HashMap<>();
  /** Every option of every command, as picocli's model of the command line has them. */
  final Set<String> cliOptions = new HashSet<>();
  final Set<String> beamOptions = new HashSet<>();
  /** Names the product uses, for the first part of a relative path that is not the repo's. */
  final Set<String> vocabulary = new HashSet<>();
  /** Every file of the repository by name, for the scripts a page names. */
  final Map<String, List<Path>> filesByName = new HashMap<>();

  /** A class or nested type: its package and the text of the file it is declared in. */
  record JavaType(String pkg, String source) {}

  private CodeNames(Path root) {
    this.root = root;
  }

  /** Reads what the code has, from the repository at {@code root}. */
  static CodeNames read(Path root) throws IOException {
    CodeNames c = new CodeNames(root.toAbsolutePath().normalize());
    c.readRepository();
    c.readCommandLine();
    c.readBeamOptions();
    return c;
  }

  private void readRepository() throws IOException {
    try (Stream<Path> top = Files.list(root)) {
      top.map(p -> p.getFileName().toString())
          .filter(n -> !n.equals("target") && !n.equals(".git"))
          .forEach(topLevel::add);
    }
    List<Path> files = new ArrayList<>();
    Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
      @Override
      public java.nio.file.FileVisitResult preVisitDirectory(Path dir,
          java.nio.file.attribute.BasicFileAttributes attrs) {
        String n = dir.getFileName() == null ? "" : dir.getFileName().toString();
        if (!dir.equals(root) && (n.equals("target") || n.equals(".git"))) {
          return java.nio.file.FileVisitResult.SKIP_SUBTREE;
        }
        vocabulary.add(n);
        return java.nio.file.FileVisitResult.CONTINUE;
      }

      @Override
      public java.nio.file.FileVisitResult visitFile(Path file,
          java.nio.file.attribute.BasicFileAttributes attrs) {
        files.add(file);
        return java.nio.file.FileVisitResult.CONTINUE;
      }
    });
    Pattern javaString = Pattern.compile("\"((?:[^\"\\\\\\n]|\\\\.)*)\"");
    Pattern declared = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");
    Pattern word = Pattern.compile("[\\w.${}-]+");
    for (Path f : files) {
      String name = f.getFileName().toString();
      String rel = root.relativize(f).toString();
      vocabulary.add(name);
      filesByName.computeIfAbsent(name, k -> new ArrayList<>()).add(f);
      Matcher src = Pattern.compile("/src/(main|test)/java/(.*)/[^/]+\\.java$").matcher("/" + rel);
      if (src.find()) {
        String text = Files.readString(f, StandardCharsets.UTF_8);
        String pkg = src.group(2).replace('/', '.');
        JavaType t = new JavaType(pkg, text);
        types.computeIfAbsent(name.substring(0, name.length() - 5), k -> new ArrayList<>()).add(t);
        for (Matcher m = declared.matcher(text); m.find(); ) {
          types.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(t);
        }
        if (src.group(1).equals("main")) {
          for (Matcher m = javaString.matcher(text); m.find(); ) {
            vocabulary.addAll(List.of(m.group(1).split("/")));
          }
        }
      } else if (name.endsWith(".sh") || name.endsWith(".xml") || rel.equals("beamsave")
          || rel.startsWith("deploy/") && !name.endsWith(".md")
          || rel.startsWith("pipelines/src/dist/")) {
        String text = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
        for (Matcher m = word.matcher(text); m.find(); ) {
          vocabulary.add(m.group());
        }
      }
    }
  }

  private void readCommandLine() {
    Set<CommandLine> seen = new HashSet<>();
    List<CommandLine> todo = new ArrayList<>(List.of(BeamsaveCommand.commandLine()));
    while (!todo.isEmpty()) {
      CommandLine c = todo.remove(todo.size() - 1);
      if (seen.add(c)) {
        c.getCommandSpec().options().forEach(o -> cliOptions.addAll(List.of(o.names())));
        todo.addAll(c.getSubcommands().values());
      }
    }
  }

  /**
   * Beam's pipeline options the command line passes on after {@code --}: those Beam registers,
   * the DirectRunner's, Flink's (on the class path of tests), and beamsave's own.
   */
  private void readBeamOptions() {
    Set<Class<?>> interfaces = new LinkedHashSet<>(PipelineOptionsFactory.getRegisteredOptions());
    interfaces.add(DirectOptions.class);
    interfaces.add(ClusterJarOptions.class);
    try {
      interfaces.add(Class.forName("org.apache.beam.runners.flink.FlinkPipelineOptions"));
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("the Flink runner is not on the tests' class path", e);
    }
    for (Class<?> c : interfaces) {
      for (Method m : c.getMethods()) {
        String n = m.getName();
        int prefix = n.startsWith("get") ? 3 : n.startsWith("is") ? 2 : 0;
        if (prefix > 0 && n.length() > prefix && m.getParameterCount() == 0
            && PipelineOptions.class.isAssignableFrom(m.getDeclaringClass())) {
          beamOptions.add("--" + Character.toLowerCase(n.charAt(prefix)) + n.substring(prefix + 1));
        }
      }
    }
  }

}
