package io.beamsave.pipelines.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --json}: a command's output as JSON Lines on stdout, one object per line, each with a
 * {@code "type"} saying what it is (docs/json.md lists them). Errors stay one line on stderr,
 * and are also given as a {@code "type":"error"} line.
 */
final class JsonOutput {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Option(
      names = "--json",
      description = "Print JSON Lines on stdout instead of text: one object per line with a"
          + " \"type\" field (see docs/json.md); progress too, as \"type\":\"progress\" lines.")
  boolean json;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  boolean on() {
    return json;
  }

  PrintWriter out() {
    return command.commandLine().getOut();
  }

  /** A new object of {@code type}, to fill and {@link #emit}. */
  static Map<String, Object> object(String type) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("type", type);
    return m;
  }

  void emit(Map<String, ?> object) {
    PrintWriter out = out();
    synchronized (out) {
      out.println(text(object));
      out.flush();
    }
  }

  /**
   * Like {@link #emit}, left in the output's buffer: for a long run of lines (a listing) whose
   * writer flushes once at its end.
   */
  void emitBuffered(Map<String, ?> object) {
    PrintWriter out = out();
    synchronized (out) {
      out.print(text(object) + System.lineSeparator());
    }
  }

  /** A warning: a line on stderr, and a {@code "warning"} object too with --json. */
  void warning(String message) {
    say("warning", message);
  }

  /** A note (something the operator should know, not a fault), the same way. */
  void note(String message) {
    say("note", message);
  }

  private void say(String type, String message) {
    command.commandLine().getErr().println("beamsave: " + type + ": " + message);
    command.commandLine().getErr().flush();
    if (json) {
      Map<String, Object> m = object(type);
      m.put("message", message);
      emit(m);
    }
  }

  static String text(Map<String, ?> object) {
    try {
      return JSON.writeValueAsString(object);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
