package io.beamsave.pipelines.locks;

import io.beamsave.transforms.image.ImageWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A save that locks its image, begins its partial image and staging, says so on stdout, and
 * then waits to be killed: what {@link ImageLockTest} kills to leave what a killed run leaves.
 * Arguments: the image, the staging directory.
 */
public final class HoldImageLock {
  private HoldImageLock() {}

  public static void main(String[] args) throws Exception {
    Path image = Path.of(args[0]);
    ImageLock lock = ImageLock.acquire(io.beamsave.transforms.run.RunId.mint(), "save", List.of(args[0]), args[1], null);
    Files.writeString(Path.of(args[1]).resolve("listing"), "the run's listing");
    Files.writeString(ImageWriter.partialPath(image), "shards appended by the run");
    System.out.println("locked " + lock.run());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
