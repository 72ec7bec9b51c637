package io.beamsave.pipelines.runner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;

/**
 * Parses the Beam options given after {@code --} and adds what a production run wants unless
 * the operator set it: the DirectRunner's immutability and encodability checks off (they are
 * for tests and cost about a third of the run time), one worker thread per core, a non-blocking
 * run so progress can be shown, and on Flink no defensive copies between operators and, for the
 * embedded cluster, a REST port to read progress from; with {@code --jarOnCluster}, no jar shipped
 * with the job ({@link ClusterJarOptions}); with {@code --numberOfExecutionRetries}, the
 * DataStream translation, the only one Beam gives the retries to.
 */
public final class BeamOptions {
  private BeamOptions() {}

  /**
   * The options the registrars of Beam's core and Flink runner would register. Named, not
   * referred to: the runner is on the class path only of runs on Flink (lib/flink-LINE/).
   */
  private static final List<String> FLINK_OPTIONS = List.of(
      FlinkRunnerLine.RUNNER_PACKAGE + ".FlinkPipelineOptions",
      "org.apache.beam.sdk.options.ManualDockerEnvironmentOptions",
      "org.apache.beam.sdk.options.RemoteEnvironmentOptions",
      "org.apache.beam.sdk.transforms.resourcehints.ResourceHintsOptions",
      "org.apache.beam.sdk.util.construction.ExternalTranslationOptions");

  public static PipelineOptions parse(List<String> beamArgs) {
    return parse(beamArgs, false, null);
  }

  /**
   * As {@link #parse(List)} for a run: a session cluster's Flink line is checked against the
   * runner's ({@link FlinkRunnerLine}), by the version the operator told ({@code
   * --flink-version}), else by asking the cluster.
   */
  public static PipelineOptions forRun(List<String> beamArgs, String flinkVersion) {
    return parse(beamArgs, true, flinkVersion);
  }

  /**
   * As {@link #forRun(List, String)}, named {@code jobName} unless the operator named the job
   * ({@code --jobName}): a cluster's job list and the progress read from it go by that name.
   */
  public static PipelineOptions forRun(List<String> beamArgs, String flinkVersion,
      String jobName) {
    List<String> args = new ArrayList<>(beamArgs);
    defaultTo(args, "jobName", jobName);
    return parse(args, true, flinkVersion);
  }

  private static PipelineOptions parse(List<String> beamArgs, boolean run, String flinkVersion) {
    List<String> args = new ArrayList<>(beamArgs);
    defaultTo(args, "enforceImmutability", "false");
    defaultTo(args, "enforceEncodability", "false");
    defaultTo(args, "targetParallelism", String.valueOf(Runtime.getRuntime().availableProcessors()));
    defaultTo(args, "blockOnRun", "false");
    // The one place that decides where the workers run; the options carry it (Workers.of).
    Workers workers = !args.stream().anyMatch(BeamOptions::namesFlink) ? Workers.THIS_JVM
        : embeddedFlink(args) ? Workers.EMBEDDED_FLINK : Workers.FLINK_CLUSTER;
    if (workers.flink()) {
      FlinkRunnerLine.requireRunner();
      // The jar registers only the default and DirectRunner options (see its pom).
      for (String name : FLINK_OPTIONS) {
        PipelineOptionsFactory.register(optionsClass(name));
      }
      // Elements are never changed after output, so Flink's defensive copies are waste.
      defaultTo(args, "fasterCopy", "true");
      if (has(args, "numberOfExecutionRetries")) {
        // Beam 2.62 applies --numberOfExecutionRetries and --executionRetryDelay to jobs it
        // translates to Flink's DataStream API only. Its default for batch pipelines, the
        // DataSet API, leaves the restart strategy to the cluster: Flink 1.19 reads a DataSet
        // job's own strategy only from the ExecutionConfig calls Beam makes for DataStream jobs.
        defaultTo(args, "useDataStreamForBatch", "true");
      }
      if (workers == Workers.FLINK_CLUSTER && run) {
        FlinkRunnerLine.checkCluster(master(args), flinkVersion != null ? flinkVersion
            : System.getenv(FlinkRunnerLine.ENVIRONMENT));
      }
      if (workers == Workers.FLINK_CLUSTER) {
        // Job.run polls a cluster's job itself, faster than Flink's client would.
        defaultTo(args, "attachedMode", "false");
      } else if (!has(args, "flinkConfDir")) {
        args.add("--flinkConfDir=" + embeddedFlinkConf());
      }
      if ((args.contains("--jarOnCluster") || args.contains("--jarOnCluster=true"))
          && !has(args, "filesToStage")) {
        // Flink needs a jar to submit; an empty one makes every class come from the cluster's.
        args.add("--filesToStage=" + emptyJar());
      } else if (workers == Workers.FLINK_CLUSTER && !has(args, "filesToStage")) {
        String stage = jarsToStage();
        if (!stage.isEmpty()) {
          args.add("--filesToStage=" + stage);
        }
      }
    }
    PipelineOptionsFactory.register(DirectOptions.class);
    PipelineOptionsFactory.register(ClusterJarOptions.class);
    PipelineOptionsFactory.register(Workers.Choice.class);
    try {
      PipelineOptions options = PipelineOptionsFactory.fromArgs(args.toArray(String[]::new))
          .withValidation()
          .create();
      options.as(Workers.Choice.class).setWorkers(workers);
      return options;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad Beam option: " + e.getMessage(), e);
    }
  }

  private static Class<? extends PipelineOptions> optionsClass(String name) {
    try {
      return Class.forName(name).asSubclass(PipelineOptions.class);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("the Flink runner's " + name + " is missing", e);
    }
  }

  /** Whether {@code arg} picks the Flink runner, spelt any way Beam accepts. */
  public static boolean namesFlink(String arg) {
    return arg.matches("(?i)--runner=(org\\.apache\\.beam\\.runners\\.flink\\.)?flink(runner)?");
  }

  private static void defaultTo(List<String> args, String name, String value) {
    if (!has(args, name)) {
      args.add("--" + name + "=" + value);
    }
  }

  private static boolean has(List<String> args, String name) {
    return args.stream().anyMatch(a -> a.equals("--" + name) || a.startsWith("--" + name + "="));
  }

  private static String master(List<String> args) {
    return args.stream().filter(a -> a.startsWith("--flinkMaster="))
        .map(a -> a.substring("--flinkMaster=".length())).reduce((a, b) -> b).orElse("");
  }

  /**
   * The jars a job ships to a cluster: those of the class path, less Flink's own (a cluster has
   * them; they are most of lib/flink-LINE/). Empty when the class path holds no jar (a build's
   * classes directories), leaving Beam's default.
   */
  private static String jarsToStage() {
    List<String> jars = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path", "").split(java.io.File.pathSeparator)) {
      Path p = Path.of(entry);
      String name = p.getFileName() == null ? "" : p.getFileName().toString();
      if (name.endsWith(".jar") && !name.startsWith("flink-") && Files.isRegularFile(p)) {
        jars.add(p.toAbsolutePath().toString());
      }
    }
    return String.join(",", jars);
  }

  private static boolean embeddedFlink(List<String> args) {
    return args.stream()
        .filter(a -> a.startsWith("--flinkMaster="))
        .allMatch(a -> a.equals("--flinkMaster=[local]") || a.equals("--flinkMaster=[auto]"));
  }

  private static String emptyJar() {
    try {
      Path jar = Files.createTempFile("beamsave-job", ".jar");
      jar.toFile().deleteOnExit();
      Manifest manifest = new Manifest();
      manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
      try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
        // Only the manifest.
      }
      return jar.toString();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the job's empty jar", e);
    }
  }

  /**
   * A configuration for the embedded Flink cluster that fixes its REST port on loopback, so
   * progress can be read from it ({@link FlinkProgressPrinter}), and refreshes metrics every
   * second; otherwise Flink's defaults.
   */
  private static String embeddedFlinkConf() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Path dir = Files.createTempDirectory("beamsave-flink-conf");
      // Deleted at exit in the reverse order of registration: the file first, then its
      // directory, which must be empty by then.
      dir.toFile().deleteOnExit();
      Path conf = dir.resolve("config.yaml");
      conf.toFile().deleteOnExit();
      Files.writeString(conf, String.join("\n",
          "rest.address: 127.0.0.1",
          "rest.bind-address: 127.0.0.1",
          "rest.port: " + s.getLocalPort(),
          "metrics.fetcher.update-interval: 1000",
          ""));
      return dir.toString();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the embedded Flink cluster's configuration", e);
    }
  }
}
