package io.beamsave.pipelines.cli;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi.Text;
import picocli.CommandLine.Help.ColorScheme;
import picocli.CommandLine.Help.TextTable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Usage help whose option and parameter descriptions wrap at spaces only. picocli wraps with
 * the JDK's line breaker, which breaks after ':' and '/', so that {@code s3://BUCKET/PREFIX} or
 * a path could end one line and go on in the next, and copied from the help it would no longer
 * work. A word longer than a line still overflows as picocli makes it.
 */
final class WholeWordsHelp extends CommandLine.Help {
  static final CommandLine.IHelpFactory FACTORY = WholeWordsHelp::new;

  WholeWordsHelp(CommandSpec spec, ColorScheme scheme) {
    super(spec, scheme);
  }

  /** The description's paragraphs, wrapped at spaces. */
  @Override
  public String description(Object... params) {
    return paragraphs(commandSpec().usageMessage().description(), params);
  }

  /** The footer: its examples (lines that start with two spaces) whole, the rest wrapped. */
  @Override
  public String footer(Object... params) {
    String[] lines = commandSpec().usageMessage().footer();
    StringBuilder b = new StringBuilder();
    for (String line : lines) {
      String text = String.format(java.util.Locale.ROOT, line, params);
      if (text.startsWith("  ")) {
        b.append(text).append(System.lineSeparator());
      } else {
        b.append(paragraphs(new String[] {line}, params));
      }
    }
    return b.toString();
  }

  private String paragraphs(String[] values, Object... params) {
    if (values == null || values.length == 0) {
      return "";
    }
    Table t = new Table(colorScheme(), new Column[] {new Column(
        commandSpec().usageMessage().width(), 0, Column.Overflow.WRAP)});
    t.indentWrappedLines = 0;
    for (String v : values) {
      t.addRowValues(String.format(java.util.Locale.ROOT, v, params));
    }
    return t.toString();
  }

  @Override
  public Layout createDefaultLayout(List<OptionSpec> options,
      List<PositionalParamSpec> positionals, ColorScheme scheme) {
    TextTable columns = TextTable.forDefaultColumns(scheme,
        calcLongOptionColumnWidth(options, positionals, scheme),
        commandSpec().usageMessage().width());
    return new Layout(scheme, new Table(scheme, columns.columns()),
        createDefaultOptionRenderer(), createDefaultParameterRenderer());
  }

  /** The default table, its wrapping columns broken at spaces. */
  static final class Table extends TextTable {
    private final ColorScheme scheme;

    Table(ColorScheme scheme, Column[] columns) {
      super(scheme, columns);
      this.scheme = scheme;
    }

    @Override
    public Cell putValue(int row, int col, Text value) {
      Column column = columns()[col];
      String plain = value == null ? "" : value.plainString();
      if (column.overflow != Column.Overflow.WRAP || plain.length() + column.indent
          <= column.width) {
        return super.putValue(row, col, value);
      }
      Cell at = null;
      int start = 0;
      String hang = "";
      while (start < plain.length()) {
        int room = column.width - column.indent - hang.length();
        int end = breakAt(plain, start, room);
        if (at != null) {
          addEmptyRow();
          row = at.row + 1;
        }
        // Plain text: descriptions carry no markup, and '@' must stay as written.
        at = super.putValue(row, col, scheme.ansi().new Text(hang + plain.substring(start, end),
            scheme));
        hang = " ".repeat(indentWrappedLines);
        start = end;
        while (start < plain.length() && plain.charAt(start) == ' ') {
          start++;
        }
      }
      return at;
    }

    /** Where the line from {@code start} ends: at the last space that fits, else the word. */
    private static int breakAt(String s, int start, int room) {
      if (s.length() - start <= room) {
        return s.length();
      }
      int space = s.lastIndexOf(' ', start + room);
      if (space > start) {
        return space;
      }
      int next = s.indexOf(' ', start);
      return next < 0 ? s.length() : next;
    }
  }
}
