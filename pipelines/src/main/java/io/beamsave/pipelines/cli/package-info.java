/**
 * The {@code beamsave} command line (picocli): one class per subcommand. User errors become one
 * line on stderr and a non-zero exit code; {@code --verbose} adds the stack trace.
 */
package io.beamsave.pipelines.cli;
