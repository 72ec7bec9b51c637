package io.beamsave.pipelines;

import io.beamsave.pipelines.cli.BeamsaveCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Runs the command line in-process, as a user would type it, and keeps what it printed. */
public record Cli(int exit, String out, String err) {

  public static Cli run(Object... args) {
    List<String> argv = new ArrayList<>();
    Arrays.stream(args).map(String::valueOf).forEach(argv::add);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        BeamsaveCommand.execute(
            argv.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
    return new Cli(code, out.toString(), err.toString());
  }

  /** Runs and fails the test with what was printed unless the command succeeded. */
  public static Cli ok(Object... args) {
    Cli c = run(args);
    if (c.exit != 0) {
      throw new AssertionError(
          "beamsave " + Arrays.toString(args) + " exited " + c.exit + ":\n" + c.err + c.out);
    }
    return c;
  }
}
