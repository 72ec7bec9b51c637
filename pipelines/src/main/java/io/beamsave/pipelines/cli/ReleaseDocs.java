package io.beamsave.pipelines.cli;

import io.beamsave.transforms.fs.Removal;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import picocli.AutoComplete;
import picocli.CommandLine;

/**
 * Writes the release's bash completion script and the AsciiDoc sources of its man pages (one per
 * command), from the whole command tree. The build runs it before packaging (exec-maven-plugin,
 * pipelines/pom.xml) and Asciidoctor turns the AsciiDoc into troff. The man page generator is
 * picocli-codegen's, which only the build's class path has: it is reached by reflection, since
 * on the compiler's class path its annotation processor would run on every compile and add
 * GraalVM configuration to the jar. The shaded jar leaves this class out.
 *
 * <p>picocli-codegen copies the help texts into the AsciiDoc as they are, where Asciidoctor
 * would read a glob's {@code *} as bold, {@code ~/.aws} as a subscript and {@code {utc}} as an
 * attribute: each line of help text is passed through as written instead. The commands'
 * "Examples:" footer lines (picocli-codegen shows a footer only under a footer heading) become
 * the man page's EXAMPLES section, shown verbatim.
 *
 * <p>Arguments: the completion script to write, the directory for the AsciiDoc pages, and the
 * directory Asciidoctor writes the man pages to, which is cleared of pages of commands gone.
 */
public final class ReleaseDocs {
  private ReleaseDocs() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      throw new IllegalArgumentException("usage: ReleaseDocs COMPLETION_SCRIPT ADOC_DIR MAN_DIR");
    }
    Path completion = Path.of(args[0]);
    Path adoc = Path.of(args[1]);
    clear(adoc, ".adoc");
    clear(Path.of(args[2]), ".1");
    // No arguments: every subcommand, not only the one a run would name.
    CommandLine cli = BeamsaveCommand.commandLine();
    Files.createDirectories(completion.toAbsolutePath().getParent());
    Files.writeString(completion, AutoComplete.bash("beamsave", cli), StandardCharsets.UTF_8);
    Files.createDirectories(adoc);
    CommandLine pages = BeamsaveCommand.commandLine();
    // picocli wraps the synopsis at the usage width, mid-label if need be; man fills it.
    pages.setUsageHelpWidth(10_000);
    // The pages' footers name beamsave's version alone.
    examplesAsSection(pages, new String[] {"beamsave " + BuildInfo.version()});
    Method generate = Class.forName("picocli.codegen.docgen.manpage.ManPageGenerator")
        .getMethod("generateManPage", File.class, File.class, boolean[].class, boolean.class,
            CommandLine.Model.CommandSpec[].class);
    int code;
    try {
      code = (Integer) generate.invoke(null, adoc.toFile(), null, new boolean[0], false,
          new CommandLine.Model.CommandSpec[] {pages.getCommandSpec()});
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
    if (code != CommandLine.ExitCode.OK) {
      throw new IOException("man page generation failed with exit code " + code);
    }
    try (Stream<Path> files = Files.list(adoc)) {
      for (Path page : files.filter(f -> f.toString().endsWith(".adoc")).toList()) {
        List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
        Files.write(page, helpTextVerbatim(lines), StandardCharsets.UTF_8);
      }
    }
  }

  private static void clear(Path dir, String suffix) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(f -> f.toString().endsWith(suffix)).toList()) {
        Removal.file(f);
      }
    }
  }

  private static final String EXAMPLES = "%nExamples:";

  /**
   * Moves a leading "Examples:" footer line of each command into the footer heading, and gives
   * each command the version, for the pages' footers.
   */
  private static void examplesAsSection(CommandLine cli, String[] version) {
    if (cli.getCommandSpec().version().length == 0) {
      cli.getCommandSpec().version(version);
    }
    CommandLine.Model.UsageMessageSpec usage = cli.getCommandSpec().usageMessage();
    String[] footer = usage.footer();
    if (usage.footerHeading().isEmpty() && footer.length > 1 && footer[0].equals(EXAMPLES)) {
      usage.footerHeading("Examples");
      usage.footer(Arrays.copyOfRange(footer, 1, footer.length));
    }
    cli.getSubcommands().values().forEach(sub -> examplesAsSection(sub, version));
  }

  /**
   * The generated AsciiDoc with each line of help text in a passthrough that only escapes
   * {@code <>&}: the DESCRIPTION section and the entries of OPTIONS, ARGUMENTS, COMMANDS and
   * the exit codes (their indented lines and the lines after a {@code +}). The SYNOPSIS and the
   * entries' terms are the generator's markup; the EXAMPLES and any indented DESCRIPTION line
   * are literal blocks, verbatim already, and the NAME line gets no inline markup.
   */
  static List<String> helpTextVerbatim(List<String> lines) {
    List<String> out = new ArrayList<>();
    String section = "";
    boolean continued = false;
    for (String line : lines) {
      String result = line;
      if (line.startsWith("// tag::picocli-generated-man-section-")) {
        section = line.substring("// tag::picocli-generated-man-section-".length())
            .replace("[]", "");
      } else if (line.isBlank() || line.startsWith("//") || line.startsWith("=")
          || line.startsWith(":")) {
        // structure
      } else if (section.equals("description") && !Character.isWhitespace(line.charAt(0))) {
        result = verbatim(line);
      } else if (List.of("options", "arguments", "commands", "exit-status").contains(section)
          && !line.equals("+") && (line.startsWith("  ") || continued)) {
        int indent = line.length() - line.stripLeading().length();
        result = line.substring(0, indent) + verbatim(line.substring(indent));
      }
      continued = line.equals("+");
      out.add(result);
    }
    return out;
  }

  private static String verbatim(String text) {
    return text.isEmpty() ? text : "pass:c[" + text.replace("]", "\\]") + "]";
  }
}
