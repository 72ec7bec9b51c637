package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.pipelines.stored.ImageRef;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** The image a reading command ({@code list}, {@code verify}, {@code restore}) works on. */
final class ImageArgs {
  static final String IMAGE_HELP =
      "The image: a file, or s3://BUCKET/KEY (read with ranged GETs). DIR/latest or"
          + " s3://BUCKET/PREFIX/latest is the newest image under DIR or PREFIX, at any depth.";

  @Parameters(index = "0", arity = "0..1", paramLabel = "IMAGE", description = IMAGE_HELP)
  String positional;

  @Option(names = "--image", paramLabel = "IMAGE", description = "The image, as IMAGE.")
  String option;

  @Mixin BaseLocationArgs bases;

  @Mixin S3Args s3;

  @Mixin KeyArgs keys;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  private String resolved;

  /**
   * With {@code --image}, a first positional argument is no image but the command's next one
   * (a PATH): taken out and returned; else null.
   */
  String shiftedPositional() {
    if (option == null || positional == null) {
      return null;
    }
    String p = positional;
    positional = null;
    return p;
  }

  /** The image named, with {@code latest} resolved to the image it stands for. */
  String image() {
    if (resolved == null) {
      if (positional != null && option != null && !positional.equals(option)) {
        throw new CommandLine.ParameterException(command.commandLine(),
            "two images given: " + positional + " and --image " + option);
      }
      String given = positional != null ? positional : option;
      if (given == null) {
        throw new CommandLine.ParameterException(command.commandLine(),
            "an image is required: " + command.name() + " IMAGE");
      }
      resolved = StoredImages.resolveLatest(given, s3.settings());
      if (!resolved.equals(given) && !BeamsaveCommand.of(command).quiet) {
        command.commandLine().getErr().println(
            "beamsave: " + given + " is " + io.beamsave.transforms.Printable.text(resolved));
        command.commandLine().getErr().flush();
      }
    }
    return resolved;
  }

  /** Opens the image; {@code progress} hears of a download the image needs first. */
  ImageRef open(PrintWriter progress) {
    return ImageRef.of(image(), s3.settings(), keys.keys(), progress)
        .withBaseLocations(bases.locations);
  }
}
