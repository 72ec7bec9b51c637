package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.transfer.ImageRef;
import java.io.PrintWriter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The image a reading command ({@code list}, {@code verify}, {@code restore}) works on. */
final class ImageArgs {
  @Option(
      names = "--image",
      paramLabel = "PATH",
      required = true,
      description = "The image: a file, or s3://BUCKET/KEY (read with ranged GETs).")
  String image;

  @Mixin S3Args s3;

  /** Opens the image; {@code progress} hears of a download the image needs first. */
  ImageRef open(PrintWriter progress) {
    return ImageRef.of(image, s3.settings(), progress);
  }
}
