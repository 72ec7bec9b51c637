package io.beamsave.pipelines.mount;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code beamsave mount}: what is mounted (one image, or every image under a location) and the
 * FUSE session that serves it until it is unmounted.
 */
public final class Mount {
  private final String source;
  private final MountedFs.View view;
  private final List<AutoCloseable> opened;
  private final PrintWriter err;
  private final boolean quiet;

  private Mount(String source, MountedFs.View view, List<AutoCloseable> opened, PrintWriter err,
      boolean quiet) {
    this.source = source;
    this.view = view;
    this.opened = opened;
    this.err = err;
    this.quiet = quiet;
  }

  /**
   * What {@code source} names: an image (a file, an object, or {@code .../latest}), opened now
   * so that a bad one is reported before anything is mounted; else a directory or prefix,
   * whose images are listed now and opened when first looked into.
   */
  public static Mount of(String source, S3Settings s3, Keys keys, List<String> baseLocations,
      PrintWriter err, boolean quiet) {
    List<AutoCloseable> opened = java.util.Collections.synchronizedList(new ArrayList<>());
    if (!isLocation(source, s3)) {
      String image = StoredImages.resolveLatest(source, s3);
      ImageTree tree = ImageTree.open(
          ImageRef.of(image, s3, keys, quiet ? null : err).withBaseLocations(baseLocations));
      opened.add(tree);
      return new Mount(image, Views.of(tree), opened, err, quiet);
    }
    String at = Location.of(source).normalized().toString();
    Map<String, List<StoredImages.Image>> series = StoredImages.list(at, s3);
    if (series.isEmpty()) {
      throw new BeamsaveException(source + ": no images under it");
    }
    MountedFs.View view = Views.of(series, at, image -> {
      ImageTree tree = ImageTree.open(ImageRef.of(image.uri(), s3, keys, quiet ? null : err)
          .withBaseLocations(baseLocations));
      opened.add(tree);
      return tree;
    });
    return new Mount(at, view, opened, err, quiet);
  }

  private static boolean isLocation(String source, S3Settings s3) {
    Location where = Location.of(source);
    if (StoredImages.LATEST.equals(where.name()) && !source.endsWith("/") && !where.exists(s3)) {
      // "latest" that is no image is the newest image there, unless a directory has that name.
      return where.localPath().map(Files::isDirectory).orElse(false);
    }
    return where.isDirectory(s3);
  }

  /**
   * Mounts on {@code mountPoint} and serves until it is unmounted; an interrupt unmounts.
   * Returns the exit code: 0 once unmounted, 1 if libfuse could not mount.
   */
  public int serve(Path mountPoint, boolean allowOther) {
    String mp = mountPoint.toAbsolutePath().normalize().toString();
    // default_permissions has the kernel check the mode bits alone: the whole check where no
    // saved access ACL says more, and enough for the mounting user, who alone reaches a mount
    // without allow_other and holds the image (they could restore all of it). Else MountedFs
    // checks each call itself (AccessCheck).
    boolean kernelChecks = !allowOther || view.modesSayAll();
    // nodev, nosuid: an image's devices and set-user-ID files are its data, not this host's.
    // kernel_cache and long timeouts: nothing mounted ever changes.
    String options = "ro,nodev,nosuid,use_ino," + (kernelChecks ? "default_permissions," : "")
        + "kernel_cache,auto_unmount,attr_timeout=86400,entry_timeout=86400,fsname=beamsave,"
        + "subtype=beamsave" + (allowOther ? ",allow_other" : "");
    MountedFs fs = new MountedFs(view, err, !kernelChecks, () -> {
      if (!quiet) {
        err.println("beamsave: mounted " + Printable.text(source) + " on " + mp
            + "; unmount with: fusermount -u " + mp);
        err.flush();
      }
    });
    int status;
    try (Interrupts.Registration unmount =
        Interrupts.onInterrupt("mount " + mp, () -> unmount(mp))) {
      status = fs.serve(new String[] {"beamsave", "-f", "-o", options, mp});
    } finally {
      closeAll();
    }
    if (status != 0) {
      throw new BeamsaveException("cannot mount on " + mp + " (libfuse exited with " + status
          + "; is it an empty directory, with /dev/fuse and fusermount present?)");
    }
    return 0;
  }

  /** Asks the kernel to detach the mount, which ends the session. */
  static void unmount(String mp) {
    try {
      Process p = new ProcessBuilder("fusermount", "-u", "-z", mp)
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new BeamsaveException("cannot unmount " + mp + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeAll() {
    synchronized (opened) {
      for (AutoCloseable c : opened) {
        try {
          c.close();
        } catch (Exception ignored) {
          // Unmounted: what is left open goes with the process.
        }
      }
      opened.clear();
    }
  }
}
