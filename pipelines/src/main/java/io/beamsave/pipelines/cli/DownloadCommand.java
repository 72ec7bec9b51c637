package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.locks.ImageLock;
import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.transfer.TransferProgress;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.read.ImageLineage;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.transfer.ImageDownload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** {@code beamsave download}: an image from object storage to a file. */
@Command(
    name = "download",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave download --from s3://backups/data.bsave --to /tmp/data.bsave",
      "  beamsave download --from s3://backups/nightly/data/latest --to /tmp/data.bsave --overwrite"
    },
    description =
        "Download an image from object storage with parallel ranged GETs, undoing transfer"
            + " compression. The file appears only once complete and checked (length, MD5 where"
            + " the store gives one, every gzip/zstd checksum).")
final class DownloadCommand implements Callable<Integer> {
  @Option(names = "--from", paramLabel = "s3://BUCKET/KEY", required = true,
      description = "The stored image.")
  String from;

  Path image;

  @Option(names = "--to", paramLabel = "PATH", description = "The image file to write (required).")
  void to(Path p) {
    Commands.once(spec, image, p, "--to");
    image = p;
  }

  @Option(names = "--image", paramLabel = "PATH", hidden = true)
  void deprecatedImage(Path p) {
    Commands.deprecated(spec, "--image", "--to");
    Commands.once(spec, image, p, "--to");
    image = p;
  }

  @Option(names = "--overwrite", description = "Replace an existing file at --to, unless it"
      + " is an image of the chain of the image downloaded (a copy of its base, say).")
  boolean overwrite;

  @Option(
      names = "--parallel",
      paramLabel = "N",
      defaultValue = "4",
      description = "Ranges fetched at once (1-64). Default: ${DEFAULT-VALUE}.")
  int parallel;

  @Mixin S3Args s3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * Removes {@code file} and fails unless it begins and ends as an image does: a store that is
   * no S3 server (a web server answers 200 with a page) must not leave a page named as an image.
   */
  private static void checkIsImage(Location from, Path file) throws IOException {
    try (io.beamsave.transforms.image.ImageSource src =
        io.beamsave.transforms.image.FileImageSource.open(file)) {
      io.beamsave.transforms.image.ImageEnds.read(src);
    } catch (IOException | RuntimeException e) {
      Removal.file(file);
      throw new BeamsaveException(from + ": what was downloaded is not a beamsave image ("
          + e.getMessage() + "); nothing was kept");
    }
  }

  /**
   * Removes {@code incoming} and fails where {@code --to}, which it is to replace, is an image
   * of its lineage as it will be found there (beside it, or beside {@code from}): a copy of its
   * base downloaded before it, say, which the image downloaded would then lack.
   */
  private void refuseLineage(Location from, Path incoming) throws IOException {
    try {
      ImageLineage.walk(from.toString(), incoming.toString(), s3.settings(), Keys.NONE,
          List.of(from.parent().toString()))
          .refuse("--to", image.toString(), s3.settings(), "download it under another name");
    } catch (RuntimeException e) {
      Removal.file(incoming);
      throw e;
    }
  }

  @Override
  public Integer call() throws IOException {
    Commands.require(spec, image, "--to");
    from = io.beamsave.pipelines.stored.StoredImages.resolveLatest(from, s3.settings());
    Location uri = Location.object(from, "--from");
    if (parallel < 1 || parallel > 64) {
      throw new BeamsaveException("--parallel must be between 1 and 64");
    }
    if (Files.exists(image) && !overwrite) {
      throw new BeamsaveException(image + " exists; use --overwrite to replace it");
    }
    Path parent = image.toAbsolutePath().getParent();
    Files.createDirectories(parent);
    Path target = image.toAbsolutePath();
    Path incoming = overwrite ? target.resolveSibling(target.getFileName() + ".incoming") : target;
    ImageDownload.Result r;
    // Its partial file is this run's: 'cleanup' and other runs leave it alone.
    try (ImageLock lock = ImageLock.acquire(RunId.mint(), "download", List.of(target.toString()), null,
            Commands.progress(spec));
        TransferProgress progress =
            new TransferProgress("downloaded", 0, Commands.progress(spec))) {
      r = ImageDownload.download(uri, s3.settings(), incoming, parallel, progress);
      checkIsImage(uri, incoming);
      if (incoming != target) {
        refuseLineage(uri, incoming);
      }
    }
    if (incoming != target) {
      Rename.replacing(incoming, target);
    }
    spec.commandLine()
        .getOut()
        .println(
            String.format(
                Locale.ROOT,
                "downloaded %s to %s: %s stored (%s), %s image, in %.2fs, %.1f MB/s",
                uri, image, Sizes.human(r.storedBytes()), r.codec(), Sizes.human(r.rawBytes()),
                r.seconds(), r.storedBytes() / 1e6 / Math.max(r.seconds(), 1e-3)));
    return 0;
  }
}
