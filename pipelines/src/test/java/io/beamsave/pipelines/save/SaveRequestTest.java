package io.beamsave.pipelines.save;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Keys;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class SaveRequestTest {
  private static final SaveRequest.Selection ALL =
      new SaveRequest.Selection(List.of(), false, null, false);

  private static SaveRequest request(String base, boolean optional, int fullEvery) {
    return new SaveRequest(List.of(Path.of("/srv/data")), "/backup/data.bsave", null, "zstd:3",
        null, 1 << 20, 0, ALL, false, false, base, optional, fullEvery, List.of(), Keys.NONE,
        null, null, null, null, null, null);
  }

  @Test
  void anIncrementalOptionWithoutABaseIsRefusedNamingTheOption() {
    assertThatThrownBy(() -> request(null, true, 0)).isInstanceOf(BeamsaveException.class)
        .hasMessage("--base-optional needs --base IMAGE|latest");
    assertThatThrownBy(() -> request(null, false, 3)).isInstanceOf(BeamsaveException.class)
        .hasMessage("--full-every needs --base IMAGE|latest");
  }

  @Test
  void aNegativeFullEveryIsRefused() {
    assertThatThrownBy(() -> request("latest", false, -1))
        .hasMessage("--full-every -1: give 0 (never) or more");
  }

  @Test
  void nulSeparatedListsNeedAList() {
    assertThatThrownBy(() -> new SaveRequest.Selection(List.of(), false, null, true))
        .isInstanceOf(BeamsaveException.class).hasMessage("--from0 needs --files-from FILE");
  }

  @Test
  void aGoodRequestKeepsWhatItWasGivenAndIsNotEncryptedWithoutRecipients() {
    SaveRequest r = request("latest", true, 7);
    assertThat(r.base()).isEqualTo("latest");
    assertThat(r.fullEvery()).isEqualTo(7);
    assertThat(r.encrypted()).isFalse();
    assertThat(r.libraries()).containsExactly(Path.of("/srv/data"));
  }
}
