package io.beamsave.pipelines.save;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class SaveRequestTest {
  private static SaveRequest request(String base, boolean optional, int fullEvery) {
    return SaveRequest.builder(List.of(Path.of("/srv/data")), "/backup/data.bsave")
        .base(base, optional, fullEvery).build();
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

  @Test
  void whatTheOperatorSaidWrongInItselfIsAUsageErrorNamingTheOption() {
    SaveRequest.Builder b = SaveRequest.builder(List.of(Path.of("/srv/data")), "/b.bsave");
    assertThatThrownBy(() -> b.codec("zstd:99").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.codec("zstd:3").sizes(null, 1024).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--block-size");
    assertThatThrownBy(() -> b.sizes(null, 1 << 20)
        .hooks(new Hooks.Plan(List.of(), List.of("true"), List.of(), 10)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--snapshot");
    assertThatThrownBy(() -> new Hooks.Plan(List.of("true"), List.of(), List.of(), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--hook-timeout");
    assertThat(b.hooks(Hooks.Plan.NONE).build().ledger()).isTrue();
  }
}
