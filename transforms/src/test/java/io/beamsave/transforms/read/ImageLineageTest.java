package io.beamsave.transforms.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.catalog.Catalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ImageLineage} over images written here, each naming only its direct base: every image
 * down to the root is known by its place and its generation, and a chain that comes back to
 * itself or never ends is refused rather than followed.
 */
class ImageLineageTest {
  @TempDir Path dir;

  /** Writes an image with no files, {@code id}, whose one base is {@code base} at {@code at}. */
  static void write(Path image, ImageId id, int depth, ImageId base, Path at) throws Exception {
    List<Catalog.Base> bases = base == null ? List.of()
        : List.of(new Catalog.Base(base, new byte[32], 1, at.toString()));
    Catalog c = Entries.catalog("none", 4096, List.of(), List.of())
        .withIdentity(id, null, depth, bases);
    try (ImageWriter w = ImageWriter.open(image)) {
      w.finish(c, Codecs.parse("none"));
    }
  }

  /** A chain of {@code n} images, the newest first: {@code g0 ← ... }; image i's base is i+1. */
  List<Path> chain(int n) throws Exception {
    List<Path> images = new ArrayList<>();
    List<ImageId> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      images.add(dir.resolve("g" + i + ".bsave"));
      ids.add(ImageId.random());
    }
    for (int i = 0; i < n; i++) {
      boolean root = i == n - 1;
      write(images.get(i), ids.get(i), n - 1 - i, root ? null : ids.get(i + 1),
          root ? null : images.get(i + 1));
    }
    return images;
  }

  @Test
  void everyImageDownToTheRootIsNamedForWhatItIsOfTheChain() throws Exception {
    List<Path> g = chain(5);
    ImageLineage l = ImageLineage.walk("g0", g.get(0).toString(), null, Keys.NONE, List.of());
    assertThat(l.members()).extracting(ImageLineage.Member::generation)
        .containsExactly(0, 1, 2, 3, 4);
    assertThat(l.whatIs(g.get(0).toString(), null)).endsWith("g0 itself");
    assertThat(l.whatIs(g.get(1).toString(), null)).endsWith(", the base of g0");
    assertThat(l.whatIs(dir + "/./g2.bsave", null)).endsWith(", the base of the base of g0");
    assertThat(l.whatIs(g.get(4).toString(), null)).endsWith("the base 4 images down the chain"
        + " of g0");
    assertThat(l.whatIs(dir.resolve("other.bsave").toString(), null)).isNull();
    // A copy of the root is its id under another name.
    Path copy = Files.copy(g.get(4), dir.resolve("copy.bsave"));
    assertThat(l.whatIs(copy.toString(), null)).startsWith("it holds image ");
    // A copy of the image itself is no image of its chain.
    Path self = Files.copy(g.get(0), dir.resolve("self.bsave"));
    assertThat(l.whatIs(self.toString(), null)).isNull();
  }

  @Test
  void whereABaseIsMissingItsPlaceIsStillGuarded() throws Exception {
    List<Path> g = chain(4);
    Files.delete(g.get(2));
    ImageLineage l = ImageLineage.walk("g0", g.get(0).toString(), null, Keys.NONE, List.of());
    assertThat(l.members()).hasSize(3);
    assertThat(l.whatIs(g.get(2).toString(), null)).endsWith("the base of the base of g0");
  }

  @Test
  void aChainThatComesBackToAnImageOnItIsRefused() throws Exception {
    ImageId a = ImageId.random();
    ImageId b = ImageId.random();
    Path pa = dir.resolve("a.bsave");
    Path pb = dir.resolve("b.bsave");
    write(pa, a, 2, b, pb);
    write(pb, b, 1, a, pa);
    assertThatThrownBy(() -> ImageLineage.walk("a", pa.toString(), null, Keys.NONE, List.of()))
        .isInstanceOf(BeamsaveException.class)
        .hasMessageContaining("comes back to image " + a)
        .hasMessageContaining("a itself");
  }

  @Test
  void aChainLongerThanTheLimitIsRefused() throws Exception {
    List<Path> g = chain(4);
    assertThat(ImageLineage.walk("g0", g.get(0).toString(), null, Keys.NONE, List.of(), 4)
        .members()).hasSize(4);
    assertThatThrownBy(() -> ImageLineage.walk("g0", g.get(0).toString(), null, Keys.NONE,
        List.of(), 3)).isInstanceOf(BeamsaveException.class)
        .hasMessageContaining("longer than 3 images");
  }
}
