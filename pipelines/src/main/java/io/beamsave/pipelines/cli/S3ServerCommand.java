package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.transfer.LocalS3Server;
import io.beamsave.transforms.BeamsaveException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave s3-server}: a local S3 server for trials, with nothing else installed. */
@Command(
    name = "s3-server",
    mixinStandardHelpOptions = true,
    description = {
      "Run an S3 server on 127.0.0.1 for trying beamsave's object-storage commands without a"
          + " store: S3Proxy (lib/s3proxy.jar), keeping each bucket as a directory under --dir"
          + " and each object as a file. It prints the endpoint and the credentials to use, and"
          + " runs until Ctrl-C or SIGTERM.",
      "For trials and tests only: it listens on loopback, its credentials are fixed and"
          + " printed, and it keeps no second copy. Back up to a real store in production."
    },
    footer = {
      "%nExamples:",
      "  beamsave s3-server --dir /var/tmp/s3 --bucket backups &",
      "  export AWS_ACCESS_KEY_ID=" + LocalS3Server.ACCESS_KEY,
      "  export AWS_SECRET_ACCESS_KEY=" + LocalS3Server.SECRET_KEY,
      "  export AWS_ENDPOINT_URL=http://127.0.0.1:9000",
      "  beamsave save --library /srv/data --image s3://backups/data.bsave"
    })
final class S3ServerCommand implements Callable<Integer> {
  @Option(
      names = "--dir",
      paramLabel = "DIR",
      required = true,
      description = "Where the objects are kept: a directory per bucket, a file per object."
          + " Made if missing; what an earlier run kept there is served again.")
  Path dir;

  @Option(
      names = "--port",
      paramLabel = "PORT",
      defaultValue = "9000",
      description = "The port on 127.0.0.1 to listen on; 0 picks a free one. Default: 9000.")
  int port;

  @Option(
      names = "--bucket",
      paramLabel = "NAME",
      defaultValue = "backups",
      split = ",",
      description = "Buckets to make if missing (repeat, or separate with commas); others are"
          + " made as their directories appear under --dir. Default: backups.")
  List<String> buckets;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (port < 0 || port > 65535) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--port " + port + ": give 0 to 65535");
    }
    for (String b : buckets) {
      // S3's own rule for bucket names, which also keeps a name inside --dir; the server's own
      // files lie there too.
      if (!b.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]") || b.contains("..")
          || b.matches("\\d+\\.\\d+\\.\\d+\\.\\d+") || b.startsWith("s3proxy.")) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--bucket " + b
            + ": not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens, not"
            + " an IP address, not s3proxy.*)");
      }
    }
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new BeamsaveException("--dir " + dir + ": not a directory");
    }
    Files.createDirectories(dir);
    LocalS3Server server = LocalS3Server.start(dir.toRealPath(), port, buckets.toArray(String[]::new));
    try (Interrupts.Registration stop = Interrupts.onInterrupt("s3-server " + server.endpoint(), server::close)) {
      PrintWriter out = spec.commandLine().getOut();
      out.println("S3 server (S3Proxy) at " + server.endpoint() + ", buckets " + buckets
          + ", objects under " + dir.toRealPath() + " (log: " + dir.resolve("s3proxy.log") + ")");
      out.println("  export AWS_ACCESS_KEY_ID=" + LocalS3Server.ACCESS_KEY
          + " AWS_SECRET_ACCESS_KEY=" + LocalS3Server.SECRET_KEY);
      out.println("  beamsave save --library DIR --image s3://" + buckets.get(0)
          + "/NAME.bsave --s3-endpoint " + server.endpoint());
      out.println("Ctrl-C stops it.");
      out.flush();
      int exit = server.waitFor();
      Interrupts.awaitExitIfInterrupted();
      throw new BeamsaveException("S3Proxy exited (status " + exit + "); see "
          + dir.resolve("s3proxy.log"));
    } finally {
      server.close();
    }
  }
}
