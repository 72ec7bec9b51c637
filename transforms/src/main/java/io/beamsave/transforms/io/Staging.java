package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A save run's working files — each library's listing, its compressed shards when they are not
 * appended to a local partial image, and the summary for the report — by name relative to the
 * run's staging: a directory every worker can reach, or an {@code s3://} prefix when the workers
 * share no disk (a cluster of several machines). Objects are written whole, files through a
 * temporary name, so a reader never sees half of one.
 */
public final class Staging {
  private Staging() {}

  /** Staging of runs that were interrupted: nothing more is written there. */
  private static final java.util.Set<String> ABANDONED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Writes {@code data[0, len)} as {@code name}. */
  public static void write(SaveSpec spec, String name, byte[] data, int len) {
    if (ABANDONED.contains(spec.staging())) {
      throw new BeamsaveException("the save was interrupted");
    }
    if (spec.stagesInStore()) {
      S3Store.of(spec.store()).put(object(spec, name), data, len, "application/octet-stream");
      return;
    }
    Path file = Path.of(spec.staging(), name);
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    try {
      Files.createDirectories(file.getParent());
      try (var out = Files.newOutputStream(tmp)) {
        out.write(data, 0, len);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot write to staging", file, e);
    }
  }

  public static byte[] read(SaveSpec spec, String name) {
    if (spec.stagesInStore()) {
      return S3Store.of(spec.store()).get(object(spec, name));
    }
    Path file = Path.of(spec.staging(), name);
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw BeamsaveException.io("cannot read from staging", file, e);
    }
  }

  /** Removes the run's staging for good: an interrupted run's workers write no more there. */
  public static void abandon(SaveSpec spec) {
    ABANDONED.add(spec.staging());
    remove(spec, "");
  }

  /** Removes everything under {@code prefix} (a library's directory: {@code "NAME/"}). */
  public static void remove(SaveSpec spec, String prefix) {
    if (spec.stagesInStore()) {
      S3Store store = S3Store.of(spec.store());
      ObjectUri under = object(spec, prefix);
      for (S3Object o : store.list(under)) {
        store.delete(new ObjectUri(under.bucket(), o.key()));
      }
      return;
    }
    try {
      AssembleImage.deleteTree(Path.of(spec.staging(), prefix));
    } catch (IOException e) {
      throw BeamsaveException.io("cannot remove staging", Path.of(spec.staging(), prefix), e);
    }
  }

  /** The object holding {@code name} when staging is in the store. */
  public static ObjectUri object(SaveSpec spec, String name) {
    return ObjectUri.parse(spec.staging(), true).child(name);
  }
}
