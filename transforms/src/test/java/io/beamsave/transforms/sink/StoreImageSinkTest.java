package io.beamsave.transforms.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.beamsave.testing.Entries;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codecs;
import io.beamsave.transforms.format.ImageFormat;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.sink.ImageSink.Kept;
import io.beamsave.transforms.sink.ImageSink.WrittenShard;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.UploadClaim;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store sink against a real S3 server: where shards of at least 5 MiB go straight
 * into the image's upload and smaller ones are staged, the image holds every shard whole where
 * its catalog says, and a shard sent twice keeps the copy its part holds.
 */
class StoreImageSinkTest {
  static final String BUCKET = "sink";
  static final int MIB = 1 << 20;

  @TempDir static Path dir;
  static S3TestServer server;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), BUCKET);
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static S3Store store() {
    return S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
  }

  static ImageSink prepared(String name) throws Exception {
    return new StoreImageSink(new ObjectUri(BUCKET, name + ".bsave"),
        new ObjectUri(BUCKET, name + "-staging/"), server.settings(), 0, 2).prepare();
  }

  static byte[] bytes(int len, long seed) {
    byte[] b = new byte[len];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes {@code b} as shard {@code shard}, cut into blocks as the catalog's rules allow. */
  static WrittenShard write(ImageSink sink, int shard, byte[] b) throws Exception {
    int[] blocks = new int[(b.length + MIB - 1) / MIB];
    for (int i = 0; i < blocks.length; i++) {
      blocks[i] = Math.min(MIB, b.length - i * MIB);
    }
    return new WrittenShard(shard, sink.writeShard(shard, b, b.length), b.length,
        (long) blocks.length * MIB, blocks);
  }

  static final Function<List<Kept>, Catalog> CATALOG = kept -> new Catalog("lib", "zstd:3", 42,
      MIB, MIB, Entries.root(), List.of(), kept.stream().map(Kept::info).toList());

  static long finish(ImageSink sink, List<WrittenShard> shards) throws Exception {
    return sink.finish(shards, CATALOG, Codecs.parse("zstd:3"), MIB);
  }

  /** The image {@code name} holds each of {@code shards}, whole, where its catalog says. */
  static Catalog holds(String name, byte[]... shards) throws Exception {
    Path image = server.file(BUCKET, name + ".bsave");
    Catalog c = ImageReader.readCatalog(image);
    byte[] all = Files.readAllBytes(image);
    assertThat(Arrays.copyOf(all, ImageFormat.HEADER_SIZE)).isEqualTo(ImageFormat.header());
    assertThat(c.shards()).hasSize(shards.length);
    for (int i = 0; i < shards.length; i++) {
      ShardInfo s = c.shards().get(i);
      assertThat(s.storedLength()).isEqualTo(shards[i].length);
      assertThat(Arrays.copyOfRange(all, (int) s.imageOffset(),
          (int) (s.imageOffset() + s.storedLength()))).as("shard %d", i).isEqualTo(shards[i]);
    }
    assertThat(store().list(name + "-staging/")).as("no staged shard is left").isEmpty();
    assertThat(store().uploadsInProgress(name + ".bsave")).isEmpty();
    assertThat(store().list(name + ".bsave")).extracting(Store.Item::key)
        .as("no claim outlives the upload").containsExactly(name + ".bsave");
    return c;
  }

  /**
   * From prepare until it ends, the image's upload is claimed beside its key, and the claim
   * names that upload: what lets cleanup abort it if the run is killed.
   */
  @Test
  void theUploadIsClaimedBesideTheImageUntilItIsComplete() throws Exception {
    StoreImageSink sink = (StoreImageSink) prepared("claimed");
    String claim = UploadClaim.nameFor("claimed.bsave", sink.uploadId());
    Store.Upload upload = store().uploads("claimed.bsave").stream()
        .filter(u -> u.uploadId().equals(sink.uploadId())).findFirst().orElseThrow();
    UploadClaim read = UploadClaim.read(store(), claim).orElseThrow();
    assertThat(read.claims(claim, upload)).isTrue();
    assertThat(read.get("run")).isEqualTo(sink.runTag());
    WrittenShard s0 = write(sink, 0, bytes(6 * MIB, 70));
    finish(sink, List.of(s0));
    holds("claimed", bytes(6 * MIB, 70));
    assertThat(store().stat("claimed.bsave").orElseThrow().metadata())
        .containsEntry(StoreImageSink.RUN_TAG, sink.runTag());
  }

  @Test
  void shardsOfFiveMiBBecomePartsAndSmallerOnesAreGatheredAfterThem() throws Exception {
    ImageSink sink = prepared("parts");
    byte[][] shards = {bytes(6 * MIB, 0), bytes(MIB, 1), bytes(5 * MIB, 2), bytes(100_000, 3)};
    List<WrittenShard> written = new ArrayList<>();
    for (int i = shards.length - 1; i >= 0; i--) {
      written.add(write(sink, i, shards[i]));
    }
    assertThat(written).extracting(w -> w.copy() instanceof ImageSink.Copy.Part)
        .containsExactly(false, true, false, true);
    long length = finish(sink, written);
    Catalog c = holds("parts", shards);
    // Shard 0 follows the header in part 1; the small ones follow the last part of a shard.
    assertThat(c.shards().get(0).imageOffset()).isEqualTo(ImageFormat.HEADER_SIZE);
    assertThat(c.shards().get(1).imageOffset()).isGreaterThan(c.shards().get(2).imageOffset());
    assertThat(Files.size(server.file(BUCKET, "parts.bsave"))).isEqualTo(length);
  }

  @Test
  void aSmallFirstShardGoesWithTheHeaderIntoPartOnePaddedToFiveMiB() throws Exception {
    ImageSink sink = prepared("padded");
    byte[][] shards = {bytes(100_000, 4), bytes(6 * MIB, 5), bytes(200_000, 6)};
    List<WrittenShard> written = new ArrayList<>();
    for (int i = 0; i < shards.length; i++) {
      written.add(write(sink, i, shards[i]));
    }
    finish(sink, written);
    Catalog c = holds("padded", shards);
    assertThat(c.shards().get(0).imageOffset()).isEqualTo(ImageFormat.HEADER_SIZE);
    assertThat(c.shards().get(1).imageOffset()).isEqualTo(StoreImageSink.MIN_PART);
  }

  @Test
  void withNoShardOfFiveMiBTheImageIsGatheredFromStagedShards() throws Exception {
    ImageSink sink = prepared("gathered");
    byte[][] shards = new byte[9][];
    List<WrittenShard> written = new ArrayList<>();
    for (int i = 0; i < shards.length; i++) {
      shards[i] = bytes(3 * MIB, 10 + i);
      written.add(write(sink, i, shards[i]));
    }
    finish(sink, written);
    holds("gathered", shards);
  }

  @Test
  void aShardSentTwiceWithOtherBytesKeepsTheCopyItsPartHolds() throws Exception {
    ImageSink sink = prepared("twice");
    byte[] first = bytes(6 * MIB, 20);
    byte[] second = bytes(6 * MIB + 4096, 21);
    byte[] one = bytes(6 * MIB, 22);
    WrittenShard a = write(sink, 0, first);
    WrittenShard b = write(sink, 0, second);
    WrittenShard s1 = write(sink, 1, one);
    // The job's results may name both copies, in any order.
    finish(sink, List.of(b, s1, a));
    holds("twice", second, one);
  }

  @Test
  void aKeptCopyThatIsNotThePartInTheUploadIsOneLineNamingTheShard() throws Exception {
    ImageSink sink = prepared("dropped");
    WrittenShard kept = write(sink, 1, bytes(6 * MIB, 30));
    write(sink, 1, bytes(6 * MIB, 31)); // an attempt the job dropped, sent last
    WrittenShard s0 = write(sink, 0, bytes(6 * MIB, 32));
    assertThatThrownBy(() -> finish(sink, List.of(s0, kept)))
        .isInstanceOf(BeamsaveException.class)
        .hasMessageContaining("s3://sink/dropped.bsave: shard 1: part 2 of the upload is not"
            + " the copy the job kept");
    sink.discard();
    assertThat(store().stat("dropped.bsave")).isEmpty();
    assertThat(store().uploadsInProgress("dropped.bsave")).isEmpty();
  }

  /**
   * An object written under the image's key while the save runs is never silently replaced: on
   * S3Proxy, which ignores conditions, the sink's own look at the key just before completing
   * finds it; on S3Mock, the completion's If-None-Match or If-Match is refused by the server
   * itself. The image a save was started to replace is replaced, as before.
   */
  @Test
  void anObjectWrittenUnderTheImagesKeyWhileTheSaveRunsIsNotReplaced() throws Exception {
    try (S3MockServer strict = S3MockServer.start(dir.resolve("s3mock"), BUCKET)) {
      for (S3Settings s3 : List.of(server.settings(), strict.settings())) {
        S3Store store = S3Store.at(s3, new ObjectUri(BUCKET, ""));
        byte[] theirs = "another writer's object".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (boolean wasThere : new boolean[] {false, true}) {
          String name = "meanwhile-" + wasThere;
          if (wasThere) {
            byte[] old = "the image this save replaces".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            store.put(name + ".bsave", old, old.length, "application/octet-stream");
          }
          ImageSink sink = new StoreImageSink(new ObjectUri(BUCKET, name + ".bsave"),
              new ObjectUri(BUCKET, name + "-staging/"), s3, 0, 2).prepare();
          WrittenShard s0 = write(sink, 0, bytes(6 * MIB, 40));
          store.put(name + ".bsave", theirs, theirs.length, "application/octet-stream");
          assertThatThrownBy(() -> finish(sink, List.of(s0)))
              .as(s3.where())
              .hasMessageContaining("s3://sink/" + name + ".bsave")
              .hasMessageContaining(wasThere
                  ? "the object it was to replace was replaced or removed meanwhile"
                  : "another object was written under this key meanwhile")
              .hasMessageContaining("nothing was written over it");
          assertThat(store.get(name + ".bsave")).as(s3.where()).isEqualTo(theirs);
          // (S3Mock's abort then removes the object too: a defect of the mock, not S3's way.)
          sink.discard();
          assertThat(store.uploadsInProgress(name + ".bsave")).isEmpty();
        }
        // With nothing written meanwhile, the image it was started to replace is replaced.
        ImageSink sink = new StoreImageSink(new ObjectUri(BUCKET, "meanwhile-true.bsave"),
            new ObjectUri(BUCKET, "meanwhile-true-staging/"), s3, 0, 2).prepare();
        WrittenShard s0 = write(sink, 0, bytes(6 * MIB, 41));
        long length = finish(sink, List.of(s0));
        assertThat(store.stat("meanwhile-true.bsave").orElseThrow().size()).isEqualTo(length);
      }
    }
  }

  @Test
  void aRunAgainAfterItsImageWasCompletedKeepsThatImageAndFailsNothing() throws Exception {
    // Flink runs a job again from the start when a TaskManager is lost: the image of one
    // library may be complete by then, its upload gone.
    ImageSink sink = prepared("rerun");
    byte[][] shards = {bytes(6 * MIB, 50), bytes(MIB, 51)};
    List<WrittenShard> first = new ArrayList<>();
    for (int i = 0; i < shards.length; i++) {
      first.add(write(sink, i, shards[i]));
    }
    long length = finish(sink, first);
    List<WrittenShard> again = new ArrayList<>();
    for (int i = 0; i < shards.length; i++) {
      again.add(write(sink, i, bytes(shards[i].length, 60 + i)));
    }
    // S3 refuses a part for a completed upload (NoSuchUpload: the worker sees the image done);
    // S3Proxy stores it where nothing reads it. Either way the image stays the first run's.
    assertThat(again.get(0).copy())
        .isInstanceOfAny(ImageSink.Copy.ImageComplete.class, ImageSink.Copy.Part.class);
    assertThat(finish(sink, again)).isEqualTo(length);
    holds("rerun", shards);
  }

  @Test
  void aDiscardedSaveAbortsItsUploadAndItsWorkersSendNoMore() throws Exception {
    ImageSink sink = prepared("abandoned");
    write(sink, 0, bytes(6 * MIB, 40));
    write(sink, 1, bytes(MIB, 41));
    assertThat(sink.discard()).as("nothing left").isEmpty();
    assertThat(store().uploadsInProgress("abandoned.bsave")).isEmpty();
    assertThat(store().list("abandoned")).extracting(Store.Item::key).isEmpty();
    assertThatThrownBy(() -> write(sink, 2, bytes(6 * MIB, 42)))
        .hasMessageContaining("stopped");
    assertThatThrownBy(sink::checkWritable).hasMessageContaining("stopped");
  }
}
