package io.beamsave.pipelines.cli;

import picocli.CommandLine.Option;

/** The options of {@code save} that make it incremental. */
final class BaseArgs {
  @Option(
      names = "--base",
      paramLabel = "IMAGE|latest",
      description =
          "Save incrementally against IMAGE (a path, s3://..., or DIR/latest): a file whose"
              + " type, size, mode, mtime, ctime and inode are those IMAGE recorded is not read"
              + " again but referenced in IMAGE (or in the image IMAGE references for it); the"
              + " rest is saved as usual. The new image still lists the whole tree, and list,"
              + " verify and restore read it alone, opening its bases as needed. 'latest' is"
              + " the newest readable image of the series --image joins (as {library}-{utc}.bsave"
              + " makes one per run), for each library. Bases must be kept: 'beamsave prune'"
              + " keeps every image a kept image needs, and 'beamsave consolidate' folds a"
              + " chain into one full image.")
  String base;

  @Option(
      names = "--base-optional",
      description =
          "Where --base has no usable image (none yet, another library's, unreadable), save"
              + " that library whole and say so, instead of failing.")
  boolean baseOptional;

  @Option(
      names = "--full-every",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "With --base: every Nth save of a chain is a full one (the base's chain already has"
              + " N-1 incremental saves). Default: 0, never.")
  int fullEvery;
}
