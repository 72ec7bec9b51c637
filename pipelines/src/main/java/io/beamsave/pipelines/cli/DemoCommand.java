package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.restore.Restore;
import io.beamsave.pipelines.restore.RestorePipeline;
import io.beamsave.pipelines.restore.RestoreRequest;
import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.save.Save;
import io.beamsave.pipelines.save.SavePipeline;
import io.beamsave.pipelines.save.SaveReport;
import io.beamsave.pipelines.save.SaveRequest;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.transfer.LocalS3Server;
import io.beamsave.pipelines.verify.VerifyPipeline;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.transfer.ImageUpload;
import io.beamsave.transforms.transfer.TransferCodec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code beamsave demo}: the whole cycle on a directory every machine has (the running JDK):
 * save with several codecs, compare them, restore one image, verify it and check the restored
 * tree is identical to the source.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave demo",
      "  beamsave demo --no-s3 --work /tmp/beamsave-demo",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Run the whole cycle on embedded defaults: save --source with each of --codecs and print"
          + " the comparison table; start a local S3 server (S3Proxy, under --work), upload the"
          + " last image raw and the first compressed in transfer; restore the last image from"
          + " object storage, verify it there, and compare the restored tree with the source.",
      "Needs nothing but a JDK and the build; writes only under --work."
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

  @Option(names = "--no-s3", description = "Skip the object-storage half of the demo.")
  boolean noS3;

  @Mixin PipelineArgs pipeline;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    if (!noS3) {
      LocalS3Server.jar(); // Known missing before the saves, not after them.
    }
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr());
    out.println("beamsave demo: saving " + source + " with " + String.join(", ", codecs));
    Path images = work.resolve("images");
    Path last = null;
    Path first = null;
    out.println(SaveReport.header());
    for (String codec : codecs) {
      Path image = images.resolve(codec.replaceAll("[^A-Za-z0-9]+", "-") + ".bsave");
      SavePipeline.Outcome o = Save.run(null,
          () -> SaveRequest.builder(List.of(source), image.toString()).codec(codec)
              .ledger(false).build(),
          pipeline::options, new Save.Output(note -> { }, warning -> { }, progress, done -> { }))
          .outcome();
      new SaveReport(o).rows().forEach(out::println);
      out.flush();
      last = image;
      first = first == null ? image : first;
    }
    Path restored = work.resolve("restored");
    Removal.tree(restored);
    String from = last.toString();
    S3Settings s3 = null;
    LocalS3Server server = null;
    String[] credentials = null;
    try {
      if (!noS3) {
        Path root = work.resolve("s3");
        Removal.tree(root);
        server = LocalS3Server.start(root, "demo");
        // The SDK's default chain reads these, as it would read the environment; S3Settings
        // carries no credentials, since it travels to workers. Put back when the demo ends.
        credentials = new String[] {
            System.setProperty("aws.accessKeyId", LocalS3Server.ACCESS_KEY),
            System.setProperty("aws.secretAccessKey", LocalS3Server.SECRET_KEY)};
        s3 = S3Settings.resolve(server.endpoint(), true, null);
        out.println("started S3Proxy on " + server.endpoint() + " (objects under " + root + ")");
        from = upload(out, s3, last, "none");
        upload(out, s3, first, "zstd:3");
      }
      String image = from;
      S3Settings store = s3;
      RestorePipeline.Outcome r = Restore.run(() -> ImageRef.of(image, store, progress),
          RestoreRequest.of(restored), pipeline::options, progress, Restore.QUIET)
          .outcome();
      try (ImageRef ref = ImageRef.of(from, s3, progress)) {
        out.printf(
            Locale.ROOT, "restored %s: %d files into %s (%.2fs)%n", from, r.files(), restored,
            r.seconds());
        VerifyPipeline.Outcome v = VerifyPipeline.run(ref, pipeline::options, progress);
        out.printf(
            Locale.ROOT, "verified %s: every block and digest OK (%.2fs)%n", from, v.seconds());
      }
    } finally {
      if (server != null) {
        server.close();
      }
      if (credentials != null) {
        restore("aws.accessKeyId", credentials[0]);
        restore("aws.secretAccessKey", credentials[1]);
      }
    }
    String diff = TreeSnapshot.of(source).diff(TreeSnapshot.of(restored));
    if (diff != null) {
      throw new BeamsaveException("restored tree differs from " + source + ": " + diff);
    }
    out.println("restored tree is identical to " + source + " (bytes, modes, mtimes, links)");
    long bytes;
    try (java.util.stream.Stream<Path> all = java.nio.file.Files.walk(work)) {
      bytes = all.filter(f -> java.nio.file.Files.isRegularFile(f,
              java.nio.file.LinkOption.NOFOLLOW_LINKS))
          .mapToLong(f -> f.toFile().length()).sum();
    }
    out.printf(Locale.ROOT, "the demo's files: %s, %s (rm -r %s removes them)%n", work,
        io.beamsave.pipelines.runner.Sizes.human(bytes), work);
    return 0;
  }

  /** Uploads {@code image} to the demo bucket; returns where it went. */
  private static String upload(PrintWriter out, S3Settings s3, Path image, String codec) {
    Location to = Location.object("s3://demo/" + image.getFileName(), "the demo's image");
    ImageUpload.Result r = ImageUpload.upload(image, to, s3,
        new ImageUpload.Options(TransferCodec.parse(codec), ImageUpload.DEFAULT_PART, 4, 0, false),
        null);
    out.printf(
        Locale.ROOT, "uploaded %s to %s with transfer codec %s: %s stored, %.2fs%n",
        image.getFileName(), to, codec, Sizes.human(r.storedBytes()), r.seconds());
    out.flush();
    return to.toString();
  }

  private static void restore(String property, String was) {
    if (was == null) {
      System.clearProperty(property);
    } else {
      System.setProperty(property, was);
    }
  }
}
