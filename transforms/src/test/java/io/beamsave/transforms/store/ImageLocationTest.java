package io.beamsave.transforms.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One image, however its location is spelled: a guard that compares {@link ImageLocation}s
 * takes every spelling of a place for that place, and two places for two.
 */
class ImageLocationTest {
  @TempDir Path dir;

  @Test
  void keysThatAServerResolvingItsPathsServesAsOneAreOne() {
    String key = "s3://backups/img/root.bsave";
    for (String same : new String[] {"s3://backups/img/./root.bsave",
        "s3://backups/img//root.bsave", "s3://backups/x/../img/root.bsave",
        "s3://backups//img/root.bsave"}) {
      assertThat(ImageLocation.same(key, same)).as(same).isTrue();
    }
    assertThat(ImageLocation.same(key, "s3://backups/img/root.bsave2")).isFalse();
    assertThat(ImageLocation.same(key, "s3://other/img/root.bsave")).isFalse();
    assertThat(ImageLocation.same(key, "s3://backups/root.bsave")).isFalse();
  }

  @Test
  void localSpellingsOfOneFileAreOne() throws Exception {
    Path img = Files.createDirectories(dir.resolve("img"));
    Path image = Files.writeString(img.resolve("a.bsave"), "x");
    Path linked = Files.createSymbolicLink(dir.resolve("linked"), img);
    Path hard = Files.createLink(dir.resolve("hard.bsave"), image);
    for (String same : new String[] {img + "/./a.bsave", img + "/../img/a.bsave",
        linked + "/a.bsave", hard.toString(),
        "./" + Path.of("").toAbsolutePath().relativize(image)}) {
      assertThat(ImageLocation.same(image.toString(), same)).as(same).isTrue();
    }
    Path copy = Files.copy(image, dir.resolve("copy.bsave"));
    assertThat(ImageLocation.same(image.toString(), copy.toString())).isFalse();
    assertThat(ImageLocation.same(image.toString(), img + "/b.bsave")).isFalse();
  }
}
