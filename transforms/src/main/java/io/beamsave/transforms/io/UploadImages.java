package io.beamsave.transforms.io;

import io.beamsave.transforms.store.ImageUpload;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * The save pipeline's optional last stage: sends each finished image whose library has an
 * upload target to object storage (multipart, parallel parts, checked; see {@link
 * ImageUpload}), then removes the local copy. Emits (library, object URI); libraries without a
 * target pass through unchanged. Counter: {@code bytesUploaded}.
 */
public final class UploadImages
    extends PTransform<PCollection<KV<String, String>>, PCollection<KV<String, String>>> {
  private final SaveSpec spec;

  private UploadImages(SaveSpec spec) {
    this.spec = spec;
  }

  public static UploadImages of(SaveSpec spec) {
    return new UploadImages(spec);
  }

  @Override
  public PCollection<KV<String, String>> expand(PCollection<KV<String, String>> images) {
    return images
        .apply("Upload", ParDo.of(new UploadFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()));
  }

  static final class UploadFn extends DoFn<KV<String, String>, KV<String, String>> {
    private final SaveSpec spec;
    private final Counter bytesUploaded = StageMetrics.counter(StageMetrics.BYTES_UPLOADED);
    private final StageMetrics stage = StageMetrics.of("upload");

    UploadFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(@Element KV<String, String> image, OutputReceiver<KV<String, String>> out)
        throws IOException {
      SaveSpec.Library lib = spec.library(image.getKey());
      if (lib.uploadTo() == null) {
        out.output(image);
        return;
      }
      stage.started();
      Path local = Path.of(image.getValue());
      // Counters belong to this thread, not to the upload's part threads.
      ImageUpload.Result r =
          ImageUpload.upload(
              S3Store.of(spec.store()),
              local,
              ObjectUri.parse(lib.uploadTo(), false),
              ImageUpload.Options.defaults(),
              null);
      bytesUploaded.inc(r.storedBytes());
      Files.deleteIfExists(local);
      out.output(KV.of(image.getKey(), lib.uploadTo()));
      stage.finished();
    }
  }
}
