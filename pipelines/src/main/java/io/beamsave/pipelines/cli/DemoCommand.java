package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.save.SavePipeline;
import io.beamsave.pipelines.save.SaveReport;
import io.beamsave.pipelines.verify.VerifyPipeline;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.io.AssembleImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code beamsave demo}: the whole cycle on a directory every machine has (the running JDK):
 * save with several codecs, compare them, restore one image, verify it and check the restored
 * tree is identical to the source.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Run the whole cycle on embedded defaults: save --source with each of --codecs, print the"
          + " comparison table, then restore the last image, verify it and compare the restored"
          + " tree with the source.",
      "Needs nothing but a JDK; writes only under --work."
    })
final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--source",
      paramLabel = "DIR",
      description = "The library to save. Default: this JDK's installation (${sys:java.home}).")
  Path source = Path.of(System.getProperty("java.home"));

  @Option(
      names = "--work",
      paramLabel = "DIR",
      defaultValue = "beamsave-demo",
      description = "Where images and the restored tree go. Default: ${DEFAULT-VALUE}.")
  Path work;

  @Option(
      names = "--codecs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "none,lz4,zlib:6,zstd:3",
      description = "Codecs to compare. Default: ${DEFAULT-VALUE}.")
  List<String> codecs;

  @Mixin PipelineArgs pipeline;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr());
    out.println("beamsave demo: saving " + source + " with " + String.join(", ", codecs));
    Path images = work.resolve("images");
    Path last = null;
    out.println(SaveReport.header());
    for (String codec : codecs) {
      Path image = images.resolve(codec.replaceAll("[^A-Za-z0-9]+", "-") + ".bsave");
      SavePipeline.Outcome o =
          SavePipeline.run(
              SavePipeline.spec(List.of(source), image, null).withCodec(codec),
              pipeline.options(),
              progress);
      new SaveReport(o).rows().forEach(out::println);
      out.flush();
      last = image;
    }
    Path restored = work.resolve("restored");
    AssembleImage.deleteTree(restored);
    RestorePipeline.Outcome r =
        RestorePipeline.run(last, restored, List.of(), false, pipeline.options(), progress);
    out.printf(
        Locale.ROOT, "restored %s: %d files into %s (%.2fs)%n", last, r.files(), restored,
        r.seconds());
    VerifyPipeline.Outcome v = VerifyPipeline.run(last, pipeline.options(), progress);
    out.printf(
        Locale.ROOT, "verified %s: every block and digest OK (%.2fs)%n", last, v.seconds());
    String diff = TreeSnapshot.of(source).diff(TreeSnapshot.of(restored));
    if (diff != null) {
      throw new BeamsaveException("restored tree differs from " + source + ": " + diff);
    }
    out.println("restored tree is identical to " + source + " (bytes, modes, mtimes, links)");
    return 0;
  }
}
