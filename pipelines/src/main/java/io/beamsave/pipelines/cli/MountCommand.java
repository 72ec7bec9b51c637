package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.mount.Mount;
import io.beamsave.transforms.BeamsaveException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code beamsave mount}: an image's tree, or every image under a location, as files. */
@Command(
    name = "mount",
    mixinStandardHelpOptions = true,
    description = {
      "Mount an image read-only with FUSE: MOUNTPOINT shows its tree as it was saved (names"
          + " as bytes, modes, owners, times with nanoseconds, symbolic and hard links,"
          + " extended attributes). Any image of an incremental chain shows its whole tree."
          + " Reading a file fetches only the blocks that hold it (a ranged GET each from"
          + " s3://), checked as they are decoded; a file read through from start to end is"
          + " checked against its digests too. Decoded blocks are cached (64 MiB).",
      "Given a directory or s3:// prefix instead of an image, MOUNTPOINT shows every image"
          + " under it as SERIES/TIME/... (TIME in UTC, as 2026-12-03T07:03:52Z), and"
          + " SERIES/latest, a link to the newest; each image is opened when first looked"
          + " into.",
      "Runs in the foreground until unmounted (fusermount -u MOUNTPOINT) or interrupted"
          + " (Ctrl-C), which unmounts. Devices and set-user-ID bits of an image do nothing"
          + " through the mount (nodev, nosuid). Needs FUSE: /dev/fuse and libfuse 2"
          + " (Debian: fuse, libfuse2)."
    },
    footer = {
      "%nExamples:",
      "  beamsave mount /backup/data/latest /mnt/data",
      "  beamsave mount s3://backups/nightly /mnt/backups     # every image, by time",
      "  diff -r --no-dereference /mnt/backups/data/latest/ /srv/data/",
      "  fusermount -u /mnt/backups"
    })
final class MountCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "IMAGE|LOCATION",
      description = ImageArgs.IMAGE_HELP + " A directory or s3://BUCKET/PREFIX that is no"
          + " image shows every image under it.")
  String source;

  @Parameters(index = "1", paramLabel = "MOUNTPOINT",
      description = "An empty directory to mount on.")
  Path mountPoint;

  @Mixin BaseLocationArgs bases;

  @Option(
      names = "--allow-other",
      description = "Let other users than the one mounting read the mount (FUSE's"
          + " allow_other; for a user other than root, user_allow_other in /etc/fuse.conf),"
          + " each as the saved owners, modes and access ACLs allow. The kernel checks the"
          + " modes where no saved ACL says more; else beamsave checks each open, listing,"
          + " link and attribute read itself (the caller's groups from /proc/PID/status).")
  boolean allowOther;

  @Mixin S3Args s3;

  @Mixin KeyArgs keys;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (!Files.isDirectory(mountPoint)) {
      throw new BeamsaveException(mountPoint + ": the mount point is no directory");
    }
    Mount mount = Mount.of(source, s3.settings(), keys.keys(), bases.locations,
        spec.commandLine().getErr(), BeamsaveCommand.of(spec).quiet);
    return mount.serve(mountPoint, allowOther);
  }
}
