package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.codec.Codec;
import io.beamsave.transforms.image.Catalog;
import io.beamsave.transforms.image.CatalogCodec;
import io.beamsave.transforms.image.ImageFormat;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.image.ShardInfo;
import io.beamsave.transforms.store.ImageUpload;
import io.beamsave.transforms.store.LinkThrottle;
import io.beamsave.transforms.store.Md5;
import io.beamsave.transforms.store.ObjectUri;
import io.beamsave.transforms.store.S3Store;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Assembles an image in object storage from shards staged there as objects, for runs whose
 * workers share no disk: one multipart upload to the image's key whose parts are, in shard
 * order, the header, the shards and the catalog with the trailer. A staged shard of at least 5
 * MiB becomes a part by a copy inside the store (UploadPartCopy), so its bytes do not travel
 * again; smaller ones, and the header and tail, are gathered into parts of at least 5 MiB. The
 * image appears at its key only when complete; on failure the upload is aborted.
 */
final class AssembleInStore {
  private final S3Store store;
  private final ObjectUri to;
  private final boolean md5s;
  private final List<CompletedPart> parts = new ArrayList<>();
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private String uploadId;
  private boolean copyRefused;

  private AssembleInStore(S3Store store, ObjectUri to) {
    this.store = store;
    this.to = to;
    this.md5s = !store.settings().signsPayload();
  }

  /**
   * Writes the image of {@code library} to {@code to} from its staged shards ({@code results},
   * in shard order); {@code catalog} builds the catalog from the shard table. Returns the image's
   * length.
   */
  static long assemble(
      SaveSpec spec, String library, ObjectUri to, List<ShardResult> results,
      Function<List<ShardInfo>, Catalog> catalog, Codec codec) throws IOException {
    List<ShardInfo> infos = new ArrayList<>(results.size());
    long pos = ImageFormat.HEADER_SIZE;
    for (ShardResult r : results) {
      infos.add(new ShardInfo(pos, r.storedLength(), r.rawLength(), r.blockLengths()));
      pos += r.storedLength();
    }
    byte[] tail = ImageWriter.tail(CatalogCodec.encode(catalog.apply(infos)), codec,
        spec.blockSize(), pos);
    long length = pos + tail.length;
    AssembleInStore a = new AssembleInStore(S3Store.of(spec.store()), to);
    a.uploadId = a.store.createMultipart(to, "application/octet-stream", Map.of());
    try {
      a.pending.write(ImageFormat.header());
      for (ShardResult r : results) {
        a.add(Staging.object(spec, SaveSpec.shardName(library, r.shard())), r.storedLength());
      }
      a.pending.write(tail);
      a.flush();
      a.store.complete(to, a.uploadId, a.parts);
    } catch (IOException | RuntimeException e) {
      try {
        a.store.abort(to, a.uploadId);
      } catch (RuntimeException ignored) {
        // The original failure is the one to report.
      }
      throw e;
    }
    long stored = a.store.head(to).map(h -> h.contentLength()).orElse(-1L);
    if (stored != length) {
      a.store.delete(to);
      throw new BeamsaveException(to + ": assembled " + stored + " bytes, expected " + length);
    }
    return length;
  }

  private void add(ObjectUri shard, long storedLength) throws IOException {
    if (pending.size() == 0 && storedLength >= ImageUpload.MIN_PART && !copyRefused) {
      try {
        String etag = store.copyPart(to, uploadId, parts.size() + 1, shard);
        parts.add(CompletedPart.builder().partNumber(parts.size() + 1).eTag(etag).build());
        return;
      } catch (BeamsaveException e) {
        if (!(e.getCause() instanceof S3Exception s3e) || s3e.statusCode() != 501) {
          throw e;
        }
        // A store without UploadPartCopy: the bytes come through this worker instead.
        copyRefused = true;
      }
    }
    pending.write(store.get(shard));
    if (pending.size() >= ImageUpload.MIN_PART) {
      flush();
    }
  }

  private void flush() {
    byte[] data = pending.toByteArray();
    int number = parts.size() + 1;
    String etag = store.uploadPart(to, uploadId, number, data, data.length,
        md5s ? Md5.of(data, 0, data.length) : null, LinkThrottle.of(0));
    parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
    pending.reset();
  }
}
