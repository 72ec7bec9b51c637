package io.beamsave.pipelines.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** Where else a reading command looks for the base images of an incremental image. */
final class BaseLocationArgs {
  @Option(
      names = "--base-location",
      paramLabel = "DIR|s3://BUCKET/PREFIX",
      description = "Also look for the base images of an incremental image here, by the names"
          + " they were saved under. Bases are looked for where they were saved, if that is in"
          + " the image's own store (this machine for a file, its bucket for an s3:// image),"
          + " and beside the image: a location a catalog names elsewhere is read only if named"
          + " here, so that a crafted image cannot make beamsave read another bucket with your"
          + " credentials. Repeat for several.")
  List<String> locations = new ArrayList<>();
}
