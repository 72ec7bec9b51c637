package io.beamsave.pipelines.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.beamsave.testing.Entries;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.Meta;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** As root, a restore gives an entry to the owner its image names, where this host has it. */
class OwnersTest {
  static Entry ownedBy(int uid, int gid, String user, String group) {
    Entry e = Entries.file("f", 0).withOwner(uid, gid);
    return e.withMeta(new Meta(user == null ? null : user.getBytes(StandardCharsets.US_ASCII),
        group == null ? null : group.getBytes(StandardCharsets.US_ASCII), List.of(), 0));
  }

  @Test
  void namesThisHostHasWinOverTheNumbersSavedUnlessNumericIsAsked() {
    assumeThat(Dir.effectiveUid()).as("run as root").isZero();
    // Saved on a host where nobody was 12345 and nogroup 23456.
    Entry saved = ownedBy(12345, 23456, "nobody", "nogroup");
    Entry here = Owners.of(false).map(saved);
    assertThat(here.uid()).isEqualTo(65534);
    assertThat(here.gid()).isEqualTo(65534);
    assertThat(Owners.of(true).map(saved)).isSameAs(saved);
    // A name this host lacks keeps the number; an entry of an older image has no names.
    Entry unknown = ownedBy(4242, 4343, "no-such-user-here", null);
    assertThat(Owners.of(false).map(unknown)).isSameAs(unknown);
  }
}
