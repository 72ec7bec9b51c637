package io.beamsave.transforms.save;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.sink.FileImageSink;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A save's working files: sealed under the image's key when the image is encrypted. */
class StagingTest {
  @TempDir Path dir;

  @Test
  void anEncryptedImagesListingIsSealedInStagingAndReadBack() throws Exception {
    ImageKey key = ImageKey.create(ImageId.random(), 1, 0, null, List.of(),
        List.of(new Recipient.KeyFile(new byte[32])));
    Path staging = dir.resolve("staging");
    SaveSpec spec = SaveSpec.of(staging.toString())
        .withLibrary("plain", dir.toString(), new FileImageSink(dir.resolve("plain.bsave")))
        .withLibrary("sealed", dir.toString(),
            new FileImageSink(dir.resolve("sealed.bsave")).encryptedWith(key));
    byte[] listing = "salaries-2026/quarterly.csv".repeat(10).getBytes(StandardCharsets.UTF_8);
    Staging.write(spec, "plain", "plain/listing", listing, listing.length);
    Staging.write(spec, "sealed", "sealed/listing", listing, listing.length);
    assertThat(Files.readString(staging.resolve("plain/listing"))).contains("quarterly.csv");
    assertThat(new String(Files.readAllBytes(staging.resolve("sealed/listing")),
        StandardCharsets.ISO_8859_1)).doesNotContain("quarterly");
    assertThat(Staging.read(spec, "sealed", "sealed/listing")).isEqualTo(listing);
    assertThat(Staging.read(spec, "plain", "plain/listing")).isEqualTo(listing);
    // A sealed file cannot be swapped for another of the run's.
    Files.copy(staging.resolve("sealed/listing"), staging.resolve("sealed/summary"));
    assertThatThrownBy(() -> Staging.read(spec, "sealed", "sealed/summary"))
        .isInstanceOf(BeamsaveException.class).hasMessageContaining("does not authenticate");
    try (Stream<Path> all = Files.walk(staging)) {
      assertThat(all.filter(Files::isRegularFile).count()).isEqualTo(3);
    }
  }
}
