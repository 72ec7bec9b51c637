package io.beamsave.testing;

import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.save.AssembleImage;
import io.beamsave.transforms.save.CompressShards;
import io.beamsave.transforms.save.ListLibrary;
import io.beamsave.transforms.save.PlanShards;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.sink.FileImageSink;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Reshuffle;

/**
 * Images for tests, saved by the save transforms on the DirectRunner as a save does (list,
 * plan, compress, assemble): a test's fixture, not what it tests.
 */
public final class TestSaves {
  private TestSaves() {}

  /** The library every image here holds. */
  public static final String LIBRARY = "lib";

  /**
   * Saves {@code root} into {@code image} with {@code codec}, blocks of {@code blockSize} and
   * shards of {@code shardSize} raw bytes; incrementally against {@code base} unless it is null.
   * Returns the image's catalog, read back.
   */
  public static Catalog save(Path root, Path image, String codec, int blockSize, long shardSize,
      Path base) throws IOException {
    SaveSpec spec = SaveSpec.of(image.resolveSibling(".staging-" + image.getFileName()).toString())
        .withCodec(codec)
        .withSizes(shardSize, blockSize)
        .withLibrary(LIBRARY, root.toString(), new FileImageSink(image));
    if (base != null) {
      spec = spec.withBase(LIBRARY,
          ImageReader.readCatalog(base).asBase(base.toAbsolutePath().toString()));
    }
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    p.apply("List", ListLibrary.of(spec))
        .apply("Plan", PlanShards.of(spec))
        .apply("Reshuffle", Reshuffle.viaRandomKey())
        .apply("Compress", CompressShards.of(spec))
        .apply("Assemble", AssembleImage.of(spec));
    p.run().waitUntilFinish();
    return ImageReader.readCatalog(image);
  }
}
