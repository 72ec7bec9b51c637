package io.beamsave.transforms.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.ShardReader.FileExtent;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A task of many small pieces cut for threads: every piece read once, in order, and each part
 * knowing the pieces others read from the blocks it shares with them.
 */
class ReadTaskSplitTest {
  private static final int BLOCK = 1000;

  /** 100 pieces of 70 bytes, back to back: most blocks hold parts of 15 files. */
  private static ReadTask task() {
    List<FileExtent> pieces = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      pieces.add(new FileExtent(PathBytes.of(("f" + i).getBytes()), 0,
          new Extent(0, 0, 70L * i, 70, new byte[ImageFormat.DIGEST_SIZE]), 0));
    }
    return new ReadTask("img", BLOCK, 0, new ShardInfo(0, 7000, 7000, new int[7], null), pieces);
  }

  @Test
  void partsCoverEveryPieceOnceInOrder() {
    ReadTask whole = task();
    List<ReadTask> parts = whole.split(1500);
    assertThat(parts).hasSizeGreaterThan(3);
    List<FileExtent> again = new ArrayList<>();
    parts.forEach(p -> again.addAll(p.pieces()));
    assertThat(again).isEqualTo(whole.pieces());
    assertThat(whole.split(100_000)).containsExactly(whole);
  }

  @Test
  void eachPartKnowsWhoElseIsInItsEndBlocks() {
    List<ReadTask> parts = task().split(1500);
    for (int i = 0; i < parts.size(); i++) {
      ReadTask part = parts.get(i);
      long first = part.pieces().get(0).extent().offset() / BLOCK;
      Extent last = part.pieces().get(part.pieces().size() - 1).extent();
      long lastBlock = (last.offset() + last.length() - 1) / BLOCK;
      for (int j = 0; j < parts.size(); j++) {
        for (FileExtent other : parts.get(j).pieces()) {
          long a = other.extent().offset() / BLOCK;
          long b = (other.extent().offset() + other.extent().length() - 1) / BLOCK;
          boolean shares = j != i && b >= first && a <= lastBlock;
          assertThat(part.beside().contains(other))
              .as("part %d, piece %s of part %d", i, other.path(), j).isEqualTo(shares);
        }
      }
    }
  }

  @Test
  void theCoderKeepsWhatIsBeside() throws Exception {
    ReadTask part = task().split(1500).get(1);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ReadTask.CODER.encode(part, out);
    ReadTask back = ReadTask.CODER.decode(new ByteArrayInputStream(out.toByteArray()));
    assertThat(back.beside()).extracting(FileExtent::path)
        .isEqualTo(part.beside().stream().map(FileExtent::path).toList()).isNotEmpty();
    assertThat(back.pieces()).extracting(p -> p.extent().offset())
        .isEqualTo(part.pieces().stream().map(p -> p.extent().offset()).toList());
  }
}
