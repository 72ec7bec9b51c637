package io.beamsave.transforms.image.catalog;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.format.ImageException;
import io.beamsave.transforms.format.ImageFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Extents met one at a time: back to back is fine in any order; a shared byte is refused. */
class ExtentOverlapsTest {
  private static Entry file(String path, int image, long offset, long length) {
    return new Entry(PathBytes.of(path), EntryType.FILE, 0, 0644, 0, 0, 1, 0, 1, 0, 1, length,
        null, List.of(new Extent(image, 0, offset, length, new byte[ImageFormat.DIGEST_SIZE])));
  }

  @Test
  void extentsBackToBackInAnyOrderPass() {
    ExtentOverlaps o = new ExtentOverlaps("img");
    assertThatCode(() -> {
      o.add(file("b", 0, 100, 100));
      o.add(file("a", 0, 0, 100));
      o.add(file("d", 0, 300, 50));
      o.add(file("c", 0, 200, 100));
      // The same bytes of a base are another shard's.
      o.add(file("e", 1, 0, 350));
    }).doesNotThrowAnyException();
  }

  @Test
  void anExtentInsideAnEarlierRunIsRefusedNamingAFileOfIt() throws Exception {
    ExtentOverlaps o = new ExtentOverlaps("img");
    o.add(file("a", 0, 0, 100));
    o.add(file("b", 0, 100, 100));
    o.add(file("far", 0, 1000, 10));
    assertThatThrownBy(() -> o.add(file("x", 0, 150, 10)))
        .isInstanceOf(ImageException.class)
        .hasMessage("img: catalog: file x overlaps file b in shard 0");
    // Starting before a run and reaching into it.
    assertThatThrownBy(() -> o.add(file("y", 0, 995, 6)))
        .hasMessage("img: catalog: file y overlaps file far in shard 0");
  }

  @Test
  void twoReferencesToOneByteOfABaseAreRefused() throws Exception {
    ExtentOverlaps o = new ExtentOverlaps("img");
    o.add(file("a0.bin", 1, 0, 300));
    assertThatThrownBy(() -> o.add(file("a1.bin", 1, 299, 300)))
        .hasMessage("img: catalog: file a1.bin references bytes of base 1 (shard 0) that file"
            + " a0.bin references too; no image is saved so");
  }
}
