package io.beamsave.transforms.sink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UploadGateTest {
  @Test
  void everyLibraryOfOneRunSharesOneLinkWhereverItsImageGoes() {
    String a = UploadGate.runOf("nightly/a/.beamsave-staging-20261202T1-x1/a/shards/");
    String b = UploadGate.runOf("nightly/b/.beamsave-staging-20261202T1-x1/b/shards/");
    String other = UploadGate.runOf("nightly/a/.beamsave-staging-20261202T2-y2/a/shards/");
    assertThat(a).isEqualTo(b).isEqualTo(".beamsave-staging-20261202T1-x1");
    assertThat(other).isNotEqualTo(a);
    assertThat(UploadGate.runOf("elsewhere/shards/")).isEqualTo("elsewhere/shards/");
  }
}
