package io.beamsave.pipelines.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImagePipe;
import io.beamsave.transforms.io.SaveSpec;
import io.beamsave.transforms.store.ImageUpload;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The overlapped way of saving to object storage: each image is uploaded while it is being
 * written, its bytes handed from the save's workers to the upload in memory ({@link ImagePipe})
 * and sent part by part as shards are appended, so the link works while the cores are still
 * compressing and the total approaches the longer of the two rather than their sum. The image
 * never touches the local disk. The catalog and trailer, written last, go in the last part; the
 * object appears only when the upload completes after the image is finished. Works where the
 * save's workers run in this JVM (the DirectRunner); other runners upload each finished image in
 * the pipeline's {@code UploadImage} stage instead.
 */
final class UploadsWhileSaving {
  /**
   * How many parts' worth of compressed shards may wait unread in the pipe before workers wait:
   * a few shards, so that workers seldom wait while the link keeps up. The upload holds its own
   * parts besides (up to {@code parallelParts} being read and {@code parallelParts + 1} sent).
   */
  static final int PARTS_BUFFERED = 4;

  private record Upload(ImagePipe image, Future<ImageUpload.Result> result) {}

  private final List<Upload> uploads = new ArrayList<>();
  private final ExecutorService pool;

  private UploadsWhileSaving(int libraries) {
    pool = Executors.newFixedThreadPool(Math.max(1, libraries), r -> {
      Thread t = new Thread(r, "beamsave-upload-while-saving");
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts an upload for every library of {@code spec} that has an upload target. */
  static UploadsWhileSaving start(SaveSpec spec, ImageUpload.Options options) {
    List<SaveSpec.Library> targets =
        spec.libraries().values().stream().filter(l -> l.uploadTo() != null).toList();
    UploadsWhileSaving u = new UploadsWhileSaving(targets.size());
    S3Store store = S3Store.of(spec.store());
    try {
      for (SaveSpec.Library lib : targets) {
        ObjectUri to = ObjectUri.parse(lib.uploadTo(), false);
        ImagePipe pipe = ImagePipe.open(Path.of(lib.image()), PARTS_BUFFERED * options.partSize());
        u.uploads.add(new Upload(pipe, u.pool.submit(
            () -> ImageUpload.uploadWhileWritten(store, pipe, to, options, null))));
      }
    } catch (RuntimeException e) {
      u.abort(e.getMessage());
      throw e;
    }
    return u;
  }

  /** The save has finished every image: waits for each upload to complete its object. */
  List<ImageUpload.Result> finish() {
    List<ImageUpload.Result> results = new ArrayList<>();
    try {
      for (Upload u : uploads) {
        if (u.image.finalLength() < 0) {
          u.image.fail("the save ended without finishing it");
        }
        results.add(get(u.result));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  /** The save failed: every upload is aborted, leaving nothing in the store. */
  void abort(String why) {
    uploads.forEach(u -> u.image.fail(why));
    for (Upload u : uploads) {
      try {
        u.result.get();
      } catch (Exception expected) {
        // The upload failed as it was told to, and aborted its multipart upload.
      }
    }
    pool.shutdownNow();
  }

  private static ImageUpload.Result get(Future<ImageUpload.Result> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BeamsaveException("upload interrupted");
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new BeamsaveException(String.valueOf(e.getCause()), e.getCause());
    }
  }
}
