package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.pipelines.runner.Workers;
import io.beamsave.pipelines.save.SaveSpecs;
import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.save.AssembleImage;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.PlanShards;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.save.ShardTask;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.transfer.ImageUpload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Beam may run a task twice (a retried bundle, a job restarted after a lost TaskManager): a
 * save whose every shard task runs twice, at once, still makes an image that verifies and
 * restores identical to the library, through either sink, also where a shard's pieces and
 * digests are staged (each attempt's digests its own).
 */
class ShardTasksRunTwiceTest {
  static final String BUCKET = "twice";

  @TempDir static Path dir;
  static S3TestServer server;
  static Path library;

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), BUCKET);
    library = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(library, 24L << 20);
    Trees.linksAndEmpties(library);
    // A shard of more than a thousand files: its pieces and its digests go through staging.
    Trees.tinyFiles(library, 3000);
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  /** Every task, twice. */
  static final class Twice extends DoFn<ShardTask, ShardTask> {
    @ProcessElement
    public void process(@Element ShardTask t, OutputReceiver<ShardTask> out) {
      out.output(t);
      out.output(t);
    }
  }

  /** The save pipeline with every shard task emitted twice before the shuffle. */
  static void saveTwice(SaveSpec unprepared) throws Exception {
    SaveSpec spec = unprepared;
    for (SaveSpec.Library lib : unprepared.libraries().values()) {
      spec = spec.withSink(lib.name(), lib.sink().prepare());
    }
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    p.apply("ListLibrary", ListLibrary.of(spec))
        .apply("PlanShards", PlanShards.of(spec))
        .apply("Twice", ParDo.of(new Twice()))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply("CompressShard", CompressShards.of(spec))
        .apply("AssembleImage", AssembleImage.of(spec));
    p.run().waitUntilFinish();
  }

  void restoresIdentical(Object image, Object... s3) throws Exception {
    Path target = dir.resolve("restored-" + Math.abs(image.hashCode()));
    Cli.ok(ObjectStorageTest.concat(new Object[] {"verify", "--image", image, "--quiet"}, s3));
    Cli.ok(ObjectStorageTest.concat(
        new Object[] {"restore", "--image", image, "--target", target, "--quiet"}, s3));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(library))).isNull();
  }

  @Test
  void anImageFileWhoseShardsWereWrittenTwiceVerifiesAndRestoresIdentical() throws Exception {
    Path image = dir.resolve("file/lib.bsave");
    SaveSpec spec = SaveSpecs.toFiles(List.of(library), image, null, RunId.mint())
        .withCodec("auto").withShardSize(2L << 20);
    saveTwice(spec);
    Catalog c = ImageReader.readCatalog(image);
    assertThat(c.shards()).hasSizeGreaterThan(5);
    // Each shard went in twice; the catalog names one copy of each, the other is dead space.
    long shardBytes = c.shards().stream().mapToLong(s -> s.storedLength()).sum();
    assertThat(Files.size(image)).isGreaterThan(shardBytes * 2);
    restoresIdentical(image);
  }

  @Test
  void anImageInTheStoreWhoseShardsWereStagedTwiceVerifiesAndRestoresIdentical()
      throws Exception {
    String image = "s3://" + BUCKET + "/store/lib.bsave";
    SaveSpec spec = SaveSpecs.of(List.of(library), image, dir.resolve("staging").toString(),
            server.settings(), Workers.THIS_JVM, ImageUpload.Options.defaults(), RunId.mint())
        .withCodec("auto").withShardSize(6L << 20);
    saveTwice(spec);
    S3Store store = S3Store.at(server.settings(), new ObjectUri(BUCKET, ""));
    assertThat(store.list("store/")).extracting(Store.Item::key)
        .as("the image, and no staged shard left").containsExactly("store/lib.bsave");
    restoresIdentical(image, "--s3-endpoint", server.endpoint());
  }
}
