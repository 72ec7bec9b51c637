package io.beamsave.transforms.walk;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import org.junit.jupiter.api.Test;

/** Later names of a file met before are saved as links to the first; the first stays a file. */
class HardLinksTest {
  static Entry file(String path, long inode) {
    Entry e = Entries.file(path, 5);
    return new Entry(e.path(), e.type(), 0, 0644, 0, 0, 1, 2, 3, 4, inode, 5, null,
        e.extents());
  }

  @Test
  void laterNamesBecomeLinksToTheFirstUntilAllAreMet() {
    HardLinks links = new HardLinks();
    assertThat(links.of(file("a", 7), 1, 3).type()).isEqualTo(EntryType.FILE);
    Entry b = links.of(file("b", 7), 1, 3);
    assertThat(b.type()).isEqualTo(EntryType.HARDLINK);
    assertThat(b.linkTarget().toString()).isEqualTo("a");
    assertThat(b.size()).isZero();
    assertThat(links.of(file("c", 7), 1, 3).linkTarget().toString()).isEqualTo("a");
    // All three names met: the group is forgotten, and the same inode on another device, or
    // a file of one name, is a file of its own.
    assertThat(links.of(file("d", 7), 2, 2).type()).isEqualTo(EntryType.FILE);
    assertThat(links.of(file("e", 9), 1, 1).type()).isEqualTo(EntryType.FILE);
    assertThat(links.links()).isEqualTo(2);
  }

  @Test
  void pastItsBoundFurtherNamesAreSavedAsFiles() {
    HardLinks links = new HardLinks(1);
    links.of(file("a", 1), 1, 2);
    links.of(file("b", 2), 1, 2);
    assertThat(links.of(file("c", 2), 1, 2).type()).isEqualTo(EntryType.FILE);
    assertThat(links.of(file("d", 1), 1, 2).type()).isEqualTo(EntryType.HARDLINK);
  }
}
