package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.runner.Warmup;
import io.beamsave.pipelines.runner.Job;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** {@code beamsave}: the top-level command and the program's entry point. */
@Command(
    name = "beamsave",
    mixinStandardHelpOptions = true,
    versionProvider = BuildInfo.class,
    footer = {
      "%nExamples:",
      "  beamsave demo                       # the whole cycle on a sample tree",
      "  beamsave save --library /srv/data --image /backup/data-{utc}.bsave",
      "  beamsave images --at /backup",
      "  beamsave verify /backup/latest",
      "  beamsave restore /backup/latest --target /srv/restored",
      "  beamsave consolidate --image /backup/latest --to /backup/full.bsave",
      "  beamsave save --help                # every option of a command, with examples"
    },
    description = {
      "Saves libraries (directory trees) into compressed, self-describing save images with an"
          + " Apache Beam pipeline, and restores, verifies and lists them.",
      "",
      "Pipeline commands accept Beam options after '--', e.g."
          + " '-- --runner=DirectRunner --targetParallelism=2'."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success",
      "1:failure (bad input, a damaged image, an I/O error), named in one line on stderr;"
          + " nothing partial is left",
      "2:usage error (an unknown option, a missing argument)",
      "3:partial: 'save' wrote a usable image without what it could not read"
          + " (--skip-unreadable) or find (--files-from); 'restore --skip-damaged' restored"
          + " all but the damaged files it names"
    },
    // Subcommands are added in execute(): see SUBCOMMANDS.
    subcommands = {})
public final class BeamsaveCommand implements Runnable {
  /** Exit code for a failed run (bad input, damaged image, I/O error). */
  public static final int EXIT_FAILURE = 1;

  /**
   * Exit code for a save whose image is complete and usable but partial: entries it could not
   * read or find were left out, each named in a warning (as restic's 3).
   */
  public static final int EXIT_PARTIAL = 3;

  /**
   * The commands, in the order help lists them. A run adds only the one it names: picocli
   * builds the model of every command it is given by reflection, and all of them took about a
   * quarter of a second of a save's start-up.
   */
  private static final java.util.Map<String, Class<?>> SUBCOMMANDS = subcommands(
      SaveCommand.class,
      RestoreCommand.class,
      VerifyCommand.class,
      ListCommand.class,
      CatCommand.class,
      DiffCommand.class,
      MountCommand.class,
      ConsolidateCommand.class,
      ImagesCommand.class,
      UploadCommand.class,
      DownloadCommand.class,
      HistoryCommand.class,
      PruneCommand.class,
      CleanupCommand.class,
      KeygenCommand.class,
      RekeyCommand.class,
      BenchCommand.class,
      CompareCommand.class,
      CodecsCommand.class,
      DemoCommand.class,
      S3ServerCommand.class,
      CommandLine.HelpCommand.class);

  private static java.util.Map<String, Class<?>> subcommands(Class<?>... commands) {
    java.util.Map<String, Class<?>> byName = new java.util.LinkedHashMap<>();
    for (Class<?> c : commands) {
      byName.put(c.getAnnotation(Command.class).name(), c);
    }
    return java.util.Collections.unmodifiableMap(byName);
  }

  @Option(
      names = {"-v", "--verbose"},
      scope = ScopeType.INHERIT,
      description = "Print stack traces with errors, and Beam's own log messages.")
  boolean verbose;

  @Option(
      names = {"-q", "--quiet"},
      scope = ScopeType.INHERIT,
      description = "Print no progress, only results, warnings and errors.")
  boolean quiet;

  /**
   * What followed {@code --} on the command line: Beam's pipeline options. They are split off
   * before picocli parses the rest, so an image can be given positionally before them.
   */
  java.util.List<String> beamArgs = java.util.List.of();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** The top-level command of the command line that {@code command} belongs to. */
  static BeamsaveCommand of(CommandLine.Model.CommandSpec command) {
    return (BeamsaveCommand) command.root().userObject();
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
  }

  public static void main(String[] args) {
    Warmup.start(args);
    Interrupts.install(System.err);
    int code = execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
    Interrupts.awaitExitIfInterrupted();
    System.exit(code);
  }

  /** Runs the command line and returns its exit code; the tests call this in-process. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    boolean verbose = java.util.Arrays.asList(args).contains("--verbose")
        || java.util.Arrays.asList(args).contains("-v");
    configureLogging(verbose);
    for (String a : args) {
      if (a.indexOf('\uFFFD') >= 0) {
        // The JVM decodes its arguments with the locale's charset before beamsave sees them,
        // replacing what is not valid: such a path would name another file, so it is refused.
        err.println("beamsave: error: argument '" + Printable.text(a) + "' holds bytes that are"
            + " not valid UTF-8, which Java cannot pass on exactly; name the file through a"
            + " symlink or its parent directory");
        err.flush();
        return EXIT_FAILURE;
      }
    }
    int dashes = java.util.Arrays.asList(args).indexOf("--");
    java.util.List<String> beamArgs = dashes < 0 ? java.util.List.of()
        : java.util.List.of(args).subList(dashes + 1, args.length);
    args = dashes < 0 ? args : java.util.Arrays.copyOf(args, dashes);
    CommandLine cli = commandLine(args);
    ((BeamsaveCommand) cli.getCommand()).beamArgs = beamArgs;
    cli.setOut(out);
    cli.setErr(err);
    // A usage error is one line naming it, what may have been meant, and where help is, not
    // the whole usage text.
    cli.setParameterExceptionHandler((e, given) -> usageError(e, java.util.List.of(given)));
    cli.setExecutionStrategy(parsed -> {
      CommandLine.ParseResult last = parsed;
      while (last.hasSubcommand()) {
        last = last.subcommand();
      }
      if (!beamArgs.isEmpty() && last.commandSpec().mixins().get("pipeline") == null
          && last.commandSpec().userObject() instanceof java.util.concurrent.Callable<?>) {
        throw new CommandLine.ParameterException(last.commandSpec().commandLine(),
            "'" + last.commandSpec().name() + "' runs no pipeline and takes no Beam options"
                + " after '--'");
      }
      return new CommandLine.RunLast().execute(parsed);
    });
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (Interrupts.interrupted()) {
            // What broke was broken on purpose; the signal handler reports and exits.
            return EXIT_FAILURE;
          }
          if (e instanceof CommandLine.ParameterException usage) {
            return usageError(usage, parseResult.originalArgs());
          }
          RuntimeException shown = e instanceof BeamsaveException ? (BeamsaveException) e
              : e instanceof IllegalArgumentException ? (IllegalArgumentException) e
              : Job.translate(e);
          // Escaped before it is cut to one line: a name's newline must not end the message.
          String message = oneLine(Printable.text(redact(shown.getMessage(),
              parseResult.originalArgs())));
          commandLine.getErr().println("beamsave: error: " + message);
          if (commandLine.getCommandSpec().mixins().get("json") != null
              && ((JsonOutput) commandLine.getCommandSpec().mixins().get("json").userObject())
                  .on()) {
            java.util.Map<String, Object> error = JsonOutput.object("error");
            error.put("message", message);
            commandLine.getOut().println(JsonOutput.text(error));
            commandLine.getOut().flush();
          }
          if (verbose) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            commandLine.getErr().print(trace);
          }
          commandLine.getErr().flush();
          return EXIT_FAILURE;
        });
    int code = cli.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  /**
   * Parses {@code args} as {@link #execute} would, without running anything: what precedes
   * {@code --} by picocli, what follows as Beam's options. Throws what either rejects.
   */
  public static CommandLine.ParseResult parse(String... args) {
    int dashes = java.util.Arrays.asList(args).indexOf("--");
    String[] head = dashes < 0 ? args : java.util.Arrays.copyOf(args, dashes);
    CommandLine cli = commandLine(head);
    CommandLine.ParseResult parsed = cli.parseArgs(head);
    if (dashes >= 0) {
      java.util.List<String> beam = java.util.List.of(args).subList(dashes + 1, args.length);
      ((BeamsaveCommand) cli.getCommand()).beamArgs = beam;
      io.beamsave.pipelines.runner.BeamOptions.parse(beam);
    }
    return parsed;
  }

  /** The command line that parses {@code args}: with only the command they name, if any. */
  public static CommandLine commandLine(String... args) {
    CommandLine cli = new CommandLine(new BeamsaveCommand());
    Class<?> named = args.length > 0 && !args[0].equals("help") ? SUBCOMMANDS.get(args[0]) : null;
    if (named != null) {
      cli.addSubcommand(named);
    } else {
      SUBCOMMANDS.values().forEach(cli::addSubcommand);
    }
    // After the subcommands: picocli hands the factory to those present. A command's options
    // are listed under it; the synopsis says [OPTIONS] rather than all of them again.
    cli.setHelpFactory(WholeWordsHelp.FACTORY);
    cli.getSubcommands().values().forEach(
        c -> c.getCommandSpec().usageMessage().abbreviateSynopsis(true));
    return cli;
  }

  /**
   * A usage error is one line naming it, what may have been meant, and where help is, not the
   * whole usage text.
   */
  private static int usageError(CommandLine.ParameterException e, java.util.List<String> given) {
    CommandLine at = e.getCommandLine();
    // A mistyped option also leaves a required one missing; the typo is the news.
    // Of what was not understood, the first is named: what follows a mistyped option is most
    // likely its value.
    CommandLine.ParameterException shown = e;
    if (!at.getUnmatchedArguments().isEmpty()) {
      shown = new CommandLine.UnmatchedArgumentException(at,
          at.getUnmatchedArguments().subList(0, 1));
    }
    String line = "beamsave: error: "
        + oneLine(Printable.text(redact(shown.getMessage(), given)));
    if (shown instanceof CommandLine.UnmatchedArgumentException u
        && !u.getSuggestions().isEmpty()) {
      line += "; did you mean " + String.join(" or ", u.getSuggestions()) + "?";
    }
    at.getErr().println(line);
    at.getErr().println("see '" + at.getCommandSpec().qualifiedName() + " --help'");
    at.getErr().flush();
    if (given.contains("--json")) {
      java.util.Map<String, Object> error = JsonOutput.object("error");
      error.put("message", line.substring("beamsave: error: ".length()));
      error.put("usage", true);
      at.getOut().println(JsonOutput.text(error));
      at.getOut().flush();
    }
    return at.getCommandSpec().exitCodeOnInvalidInput();
  }

  /**
   * {@code message} without any argument of {@code args} that may be a secret (a key or an
   * identity pasted where something else belongs: "unmatched argument", "no such file"), nor any
   * long line of one: whatever the option, no error repeats a key.
   */
  static String redact(String message, java.util.List<String> args) {
    if (message == null) {
      return null;
    }
    for (String a : args) {
      if (a.length() >= 8 && io.beamsave.transforms.crypt.KeyText.mayBeSecret(a)) {
        message = message.replace(a, "(an argument that looks like a key, not repeated)");
        for (String part : a.split("[\\r\\n]+")) {
          if (part.strip().length() >= 16) {
            message = message.replace(part.strip(), "(not repeated)");
          }
        }
      }
    }
    return message;
  }

  private static String oneLine(String message) {
    if (message == null) {
      return "unknown error";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }

  private static void configureLogging(boolean verbose) {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      // Everything the operator should read beamsave says itself, in one line; the libraries'
      // logs (Beam's "[ERROR] ... tearing down DoFns" with its stack trace after a failure or
      // an interrupt, the SDK's, Flink's) are for --verbose.
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "info" : "off");
    }
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    if (!verbose) {
      // A failed job is reported in one line; Beam's Flink runner would log it again, with its
      // stack trace, at ERROR.
      System.setProperty("org.slf4j.simpleLogger.log.org.apache.beam.runners.flink.FlinkRunner", "off");
    }
    System.setProperty("org.slf4j.simpleLogger.showThreadName", "false");
    System.setProperty("org.slf4j.simpleLogger.showLogName", "false");
    System.setProperty("org.slf4j.simpleLogger.levelInBrackets", "true");
  }
}
