package io.beamsave.pipelines.save;

import io.beamsave.pipelines.locks.RunNames;
import io.beamsave.pipelines.runner.Workers;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.Printable;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.sink.ImageSinks;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.transfer.ImageUpload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Where a save's images and working files go: each library's name, its image (a file, or an
 * object in a store) with the sink that writes it, and the run's staging, from what the operator
 * gave as {@code --library}, {@code --image} and {@code --staging}. Each library is checked to
 * be a readable directory, and each image's directory is made, before anything runs.
 */
public final class SaveSpecs {
  private SaveSpecs() {}

  /**
   * Like {@link #toFiles}, but {@code image} may be {@code s3://BUCKET/KEY} (a
   * prefix with several libraries), and {@code staging} an {@code s3://} prefix. This is where
   * each image's sink is chosen, once: a {@link FileImageSink} for a path, a {@link
   * StoreImageSink} for {@code s3://}, whose shards are staged as objects beside the image (or
   * under an {@code s3://} {@code --staging} in its bucket) and sent as {@code upload} says.
   * The run's own working files go to local staging (default: the system's temporary
   * directory) when the workers run in this JVM, else, unless {@code --staging} says otherwise,
   * to a prefix beside the image, so workers on several machines need share no disk.
   */
  public static SaveSpec of(
      List<Path> libraries, String image, String staging, S3Settings s3, Workers workers,
      ImageUpload.Options upload, RunId run) {
    return of(libraries, image, staging, s3, workers, upload, true, run);
  }

  /**
   * Like {@link #of(List, String, String, S3Settings, Workers, ImageUpload.Options, RunId)}; with
   * {@code create} false (a dry run) an image's directory that does not exist is not made.
   */
  public static SaveSpec of(
      List<Path> libraries, String image, String staging, S3Settings s3, Workers workers,
      ImageUpload.Options upload, boolean create, RunId run) {
    // A staging with no path on this host is in a bucket, where shards are parts of the upload.
    Optional<Path> stagingPath = staging == null ? Optional.empty() : Location.of(staging).localPath();
    boolean stagingInStore = staging != null && stagingPath.isEmpty();
    Optional<Path> file = Location.of(image).localPath();
    if (file.isPresent()) {
      if (stagingInStore) {
        throw new BeamsaveException("--staging " + staging + " needs an s3:// --image");
      }
      return toFiles(libraries, file.get(), stagingPath.orElse(null), create, run).withS3(s3);
    }
    if (libraries.isEmpty()) {
      throw new BeamsaveException("no library given: use --library DIR");
    }
    List<Path> roots = libraries.stream().map(SaveSpecs::checkLibrary).toList();
    List<String> names = libraries.stream().map(SaveSpecs::libraryName).toList();
    String given = image;
    boolean perLibrary = image.contains(LIBRARY);
    boolean many = libraries.size() > 1 && !perLibrary;
    Location.Placed probe = (many ? Location.prefix(image.replace(UTC, "x"), "--image")
        : Location.object(image.replace(UTC, "x").replace(LIBRARY, "x"), "--image"))
        .placed(s3);
    probe.store().check(probe.key());
    java.time.Instant started = freeSecond(given, at -> names.stream().anyMatch(name -> {
      String one = given.replace(UTC, utcStamp(at));
      Location u = perLibrary ? Location.of(one.replace(LIBRARY, name))
          : many ? Location.of(one).child(name + ImageFormat.EXTENSION)
          : Location.of(one);
      return u.exists(s3);
    }));
    image = image.replace(UTC, utcStamp(started));
    Location to = Location.of(image.replace(LIBRARY, "x"));
    Location shardRoot = null;
    String stagingRoot;
    if (stagingInStore) {
      shardRoot = Location.of(staging).child(STAGING_PREFIX + run + "/");
      stagingRoot = shardRoot.toString();
    } else if (staging == null && !workers.inThisJvm()) {
      stagingRoot = to.parent().child(STAGING_PREFIX + run + "/").toString();
    } else {
      Path base = stagingPath.orElse(Path.of(System.getProperty("java.io.tmpdir")));
      stagingRoot = base.resolve(STAGING_PREFIX + run).toAbsolutePath().toString();
    }
    SaveSpec spec =
        SaveSpec.of(stagingRoot).withS3(s3).withStartedMillis(started.toEpochMilli());
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      Location target =
          perLibrary ? Location.object(image.replace(LIBRARY, name), "--image")
              : roots.size() > 1 ? to.child(name + ImageFormat.EXTENSION) : to;
      Location shards = (shardRoot != null ? shardRoot
          : target.parent().child(STAGING_PREFIX + run + "/")).child(name + "/shards/");
      try {
        spec = spec.withLibrary(name, root.toUri().toString(), ImageSinks.forImage(target,
            shards, s3, upload.linkMbps(), upload.parallelParts()));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    // run() creates a local staging directory, with its lock.
    return spec;
  }

  /**
   * A library's name: the name of the directory as the operator gave it (a symlink's own name,
   * not its target's), printable ({@code \xNN} for bytes that are not UTF-8), as it names the
   * image and keys the library through the pipeline.
   */
  private static String libraryName(Path given) {
    Path p = given.toAbsolutePath().normalize();
    if (p.getFileName() == null) {
      return "root";
    }
    byte[] path = Dir.bytesOf(p);
    int slash = path.length - 1;
    while (slash >= 0 && path[slash] != '/') {
      slash--;
    }
    return Printable.bytes(Arrays.copyOfRange(path, slash + 1, path.length));
  }

  /**
   * The spec for saving {@code libraries}: one library goes to the image file {@code image};
   * several go to {@code image/<directory name>.bsave}. In {@code image}, {@value #UTC} stands
   * for the run's start time and {@value #LIBRARY} for each library's name (each library then
   * gets its own image from the template). Checks every library is a readable
   * directory. Staging defaults to a fresh directory beside the images.
   */
  public static SaveSpec toFiles(List<Path> libraries, Path image, Path staging, RunId run) {
    return toFiles(libraries, image, staging, true, run);
  }

  private static SaveSpec toFiles(List<Path> libraries, Path image, Path staging,
      boolean create, RunId run) {
    if (libraries.isEmpty()) {
      throw new BeamsaveException("no library given: use --library DIR");
    }
    List<Path> roots = libraries.stream().map(SaveSpecs::checkLibrary).toList();
    List<String> names = libraries.stream().map(SaveSpecs::libraryName).toList();
    String given = image.toString();
    boolean many0 = libraries.size() > 1 && !given.contains(LIBRARY);
    java.time.Instant started = freeSecond(given, at -> names.stream().anyMatch(name -> {
      Path one = Path.of(given.replace(UTC, utcStamp(at)).replace(LIBRARY, name));
      return Files.exists(many0 ? one.resolve(name + ImageFormat.EXTENSION) : one,
          LinkOption.NOFOLLOW_LINKS);
    }));
    String template = given.replace(UTC, utcStamp(started));
    boolean perLibrary = template.contains(LIBRARY);
    image = Path.of(template);
    boolean many = libraries.size() > 1 && !perLibrary;
    Path imageDir = many ? image : Path.of(template.replace(LIBRARY, names.get(0)))
        .toAbsolutePath().getParent();
    if (many && Files.exists(image) && !Files.isDirectory(image)) {
      throw new BeamsaveException(
          "--image " + image + " must be a directory when saving several libraries");
    }
    List<Path> targets = new ArrayList<>();
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      targets.add(perLibrary ? Path.of(template.replace(LIBRARY, name))
          : many ? image.resolve(name + ImageFormat.EXTENSION) : image);
    }
    for (int i = 0; i < targets.size(); i++) {
      Path target = targets.get(i);
      if (Files.isDirectory(target)) {
        throw new BeamsaveException("--image " + target + " is a directory; name the image file");
      }
      Path dir = target.toAbsolutePath().getParent();
      if (!create && !Files.isDirectory(dir)) {
        targets.set(i, target.toAbsolutePath().normalize());
        continue;
      }
      try {
        Files.createDirectories(dir);
        // One spelling from here on, the kernel's: "link/../x" is where the link leads.
        targets.set(i, dir.toRealPath().resolve(target.getFileName()));
      } catch (IOException e) {
        throw BeamsaveException.io("cannot create image directory", dir, e);
      }
    }
    Path stagingRoot =
        staging != null
            ? staging.resolve(RUN_PREFIX + run)
            : imageDir.resolve(STAGING_PREFIX + run);
    SaveSpec spec = SaveSpec.of(stagingRoot.toAbsolutePath().toString())
        .withStartedMillis(started.toEpochMilli());
    for (int i = 0; i < roots.size(); i++) {
      Path root = roots.get(i);
      String name = names.get(i);
      Path target = targets.get(i);
      try {
        spec = spec.withLibrary(name, root.toUri().toString(),
            ImageSinks.forImage(Location.of(target), null, null, 0, 0));
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException(e.getMessage());
      }
    }
    return spec;
  }

  private static Path checkLibrary(Path lib) {
    if (!Files.exists(lib)) {
      throw new BeamsaveException("library " + lib + " does not exist");
    }
    if (!Files.isDirectory(lib)) {
      throw new BeamsaveException("library " + lib + " is not a directory");
    }
    if (!Files.isReadable(lib) || !Files.isExecutable(lib)) {
      throw new BeamsaveException("cannot read library " + lib + ": permission denied");
    }
    try {
      return lib.toRealPath();
    } catch (IOException e) {
      throw BeamsaveException.io("cannot resolve library", lib, e);
    }
  }

  private static final String STAGING_PREFIX = RunNames.STAGING_PREFIX;
  private static final String RUN_PREFIX = RunNames.RUN_PREFIX;

  /** In {@code --image}: replaced by the library's directory name. */
  public static final String LIBRARY = "{library}";
  /** In {@code --image}: replaced by the run's start, UTC, e.g. {@code 20261130T021500Z}. */
  public static final String UTC = "{utc}";

  /** The run's start as {@value #UTC} stands for it, e.g. {@code 20261130T021500Z}. */
  public static String utcStamp() {
    return utcStamp(startSecond());
  }

  /** {@code at} as {@value #UTC} stands for it: {@code 20261130T021500Z}. */
  static String utcStamp(java.time.Instant at) {
    return ZonedDateTime.ofInstant(at, ZoneOffset.UTC)
        .format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
  }

  /** Now, to the second: a run's start as its images' names and catalogs both record it. */
  private static java.time.Instant startSecond() {
    return java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
  }

  /**
   * The run's start to the second. When {@code template} names images by {@value #UTC} and an
   * image of this second is already there (two runs in one second), waits for the next second,
   * so a run never replaces the image before it, which may be its own base.
   */
  private static java.time.Instant freeSecond(String template,
      java.util.function.Predicate<java.time.Instant> taken) {
    java.time.Instant at = startSecond();
    if (!template.contains(UTC)) {
      return at;
    }
    for (int tries = 0; tries < 3 && taken.test(at); tries++) {
      java.time.Instant next = at.plusSeconds(1);
      try {
        Thread.sleep(Math.max(1, next.toEpochMilli() - System.currentTimeMillis()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BeamsaveException("interrupted");
      }
      at = startSecond();
    }
    return at;
  }

  /** The shard size when the operator gives none. */
  public static long defaultShardSize(String image) {
    // Shards are parts of the image's upload where the store writes in parts.
    return Location.of(image).minimumPart() > 0 ? SaveSpec.DEFAULT_OBJECT_SHARD_SIZE
        : SaveSpec.DEFAULT_SHARD_SIZE;
  }
}
