package io.beamsave.pipelines.runner;

import io.beamsave.transforms.fs.Dir;
import java.util.Set;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.reflect.DoFnInvokers;

/**
 * Starts, on other threads, the slow one-time set-up a pipeline command will need, while the
 * main thread parses the command line and plans: Beam's options registry (~0.8 s of class
 * loading and proxy generation), the native bindings, ByteBuddy's code generation and the
 * DirectRunner's classes. Each would otherwise run one after another on the main thread while
 * the second core idles. Nothing here changes what a run does; a failure is left for the run
 * itself to meet and report.
 */
public final class Warmup {
  private Warmup() {}

  private static final Set<String> PIPELINE_COMMANDS = Set.of("save", "restore", "verify");

  /** A DoFn of no use but to have ByteBuddy generate an invoker once. */
  private static final class Nothing extends DoFn<String, String> {
    @ProcessElement
    public void process() {}
  }

  public static void start(String[] args) {
    if (args.length == 0 || !PIPELINE_COMMANDS.contains(args[0])) {
      return;
    }
    // On Flink the DirectRunner is not used: only Beam's options are worth warming.
    boolean flink = java.util.Arrays.stream(args).anyMatch(BeamOptions::namesFlink);
    run("options", flink ? PipelineOptionsFactory::create : Warmup::runEmptyPipeline);
    run("natives", () -> {
      Dir.effectiveUid();
      com.github.luben.zstd.Zstd.defaultCompressionLevel();
      DoFnInvokers.invokerFor(new Nothing());
      load("org.apache.beam.runners.direct.DirectRunner");
      load("org.apache.beam.runners.direct.ExecutorServiceParallelExecutor");
    });
  }

  /** A byte[]-to-String DoFn of no use but to be run once. */
  private static final class First extends DoFn<byte[], String> {
    @ProcessElement
    public void process(OutputReceiver<String> out) {
      out.output("");
    }
  }

  /**
   * Runs the smallest pipeline of the shape beamsave's are (a DoFn after an impulse, a
   * reshuffle, a DoFn) on the DirectRunner: what its first run sets up once (options, the
   * runner's executor, the reshuffle's machinery, ByteBuddy) is then ready for the real one.
   */
  private static void runEmptyPipeline() {
    org.apache.beam.sdk.options.PipelineOptions options = PipelineOptionsFactory.fromArgs(
        "--runner=DirectRunner", "--targetParallelism=1", "--enforceImmutability=false",
        "--enforceEncodability=false").create();
    org.apache.beam.sdk.Pipeline p = org.apache.beam.sdk.Pipeline.create(options);
    p.apply(org.apache.beam.sdk.transforms.Impulse.create())
        .apply(org.apache.beam.sdk.transforms.ParDo.of(new First()))
        .apply(org.apache.beam.sdk.transforms.Reshuffle.viaRandomKey())
        .apply(org.apache.beam.sdk.transforms.ParDo.of(new Nothing()));
    p.run().waitUntilFinish();
  }

  private static void load(String name) {
    try {
      Class.forName(name, true, Warmup.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      // Not on this class path: the run does without.
    }
  }

  private static void run(String what, Runnable work) {
    Thread t = new Thread(() -> {
      try {
        work.run();
      } catch (RuntimeException | LinkageError ignored) {
        // The run itself meets and reports whatever this was.
      }
    }, "beamsave-warmup-" + what);
    t.setDaemon(true);
    t.start();
  }
}
