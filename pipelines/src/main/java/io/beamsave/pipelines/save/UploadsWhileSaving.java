package io.beamsave.pipelines.save;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.io.SaveSpec;
import io.beamsave.transforms.store.GrowingFile;
import io.beamsave.transforms.store.ImageUpload;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The overlapped way of saving to object storage: each image is uploaded while it is being
 * written, part by part as shards are appended to {@code <image>.partial}, so the link works
 * while the cores are still compressing and the total approaches the longer of the two rather
 * than their sum. The catalog and trailer, written last, go in the last part; the object
 * appears only when the upload completes after the image is finished. Works where the save's
 * workers write to this machine's disk (the DirectRunner); other runners upload each finished
 * image in the pipeline's {@code UploadImage} stage instead.
 */
final class UploadsWhileSaving {
  private record Upload(SaveSpec.Library library, GrowingFile image, Future<ImageUpload.Result> result) {}

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
    for (SaveSpec.Library lib : targets) {
      Path image = Path.of(lib.image());
      GrowingFile growing = new GrowingFile(ImageWriter.partialPath(image));
      ObjectUri to = ObjectUri.parse(lib.uploadTo(), false);
      u.uploads.add(new Upload(lib, growing, u.pool.submit(
          () -> ImageUpload.uploadWhileWritten(
              store, growing, image.getFileName().toString(), to, options, null))));
    }
    return u;
  }

  /**
   * The images are complete: lets each upload send the rest and complete its object, waits for
   * them, and removes the local images.
   */
  List<ImageUpload.Result> finish() {
    List<ImageUpload.Result> results = new ArrayList<>();
    try {
      for (Upload u : uploads) {
        Path image = Path.of(u.library.image());
        try {
          u.image.finished(image, Files.size(image));
        } catch (IOException e) {
          u.image.failed("the finished image cannot be read: " + e.getMessage());
        }
      }
      for (Upload u : uploads) {
        results.add(get(u.result));
        Files.deleteIfExists(Path.of(u.library.image()));
      }
      return results;
    } catch (IOException e) {
      throw new BeamsaveException("cannot remove an uploaded image from staging: " + e, e);
    } finally {
      pool.shutdownNow();
    }
  }

  /** The save failed: every upload is aborted, leaving nothing in the store. */
  void abort(String why) {
    uploads.forEach(u -> u.image.failed(why));
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
