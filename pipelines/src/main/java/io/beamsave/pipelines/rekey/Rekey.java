package io.beamsave.pipelines.rekey;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.Envelope;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Keys;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.crypt.Stanza;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.fs.Rename;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.ImageSource;
import io.beamsave.transforms.image.ImageWriter;
import io.beamsave.transforms.read.ImageSources;
import io.beamsave.transforms.sink.StoreImageSink;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.UploadClaim;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Adds recipients to an encrypted image and removes others, rewriting only its header: the data
 * key stays, so nothing else changes. The header keeps its length (it was made with room to
 * spare), so every offset in the image still holds. A file is copied beside itself with the new
 * header and renamed over the old one; an object is made anew by the store, its first part sent
 * (the header and what follows it up to 5 MiB, S3's smallest part) and the rest copied in the
 * store with ranged part copies. Either way the image is replaced whole or not at all, and not
 * at all if it changed meanwhile.
 *
 * <p>Removing a key stops it opening the image from now on. It does not take back what someone
 * who held that key could already read: the data key is the same. {@code consolidate} makes an
 * image with a new data key.
 */
public final class Rekey {
  private Rekey() {}

  /** What a rekey did: the recipients before and after, and how the rest was copied. */
  public record Outcome(String image, Envelope before, Envelope after, long bytesCopied,
      boolean copiedInStore, double seconds) {}

  /** The largest part copied in one request: S3 allows 5 GiB. */
  static final long COPY_PART = 1L << 30;

  /**
   * Rewrites {@code image} (a path or {@code s3://} URI), opened with {@code keys}, without the
   * stanzas {@code remove} names ({@code password}, a key id as {@code verify} and {@code
   * images} show them, or a public key) and with a stanza for each of {@code add}.
   */
  public static Outcome run(String image, S3Settings s3, Keys keys, List<String> remove,
      List<Recipient> add) {
    long start = System.nanoTime();
    ImageEnds.Trailer ends;
    long size;
    try (ImageSource src = ImageSources.open(image, s3)) {
      ends = ImageEnds.read(src);
      size = src.size();
      if (!ends.encrypted()) {
        throw new BeamsaveException(image + " is not encrypted; 'beamsave consolidate --image "
            + image + " --to NEW --recipient ...' makes an encrypted copy");
      }
      ImageKey key = ImageKey.open(src.name(), ends.envelope(), keys);
      // The rest of the image is copied as it is: it must be this image's, and whole.
      ImageReader.readCatalog(src, Keys.of(key));
      List<Stanza> kept = kept(image, ends.envelope(), remove);
      ImageKey rekeyed = key.withRecipients(kept, add);
      byte[] header = rekeyed.header();
      Location where = Location.of(image);
      // Where the store copies the rest itself, only the head passes through this host.
      long copied = where.copiesWithin()
          ? rewriteObject(where, s3, header, size)
          : rewriteFile(where.localPath().orElseThrow(), header);
      return new Outcome(image, ends.envelope(), rekeyed.envelope(), copied,
          where.copiesWithin(), (System.nanoTime() - start) / 1e9);
    } catch (IOException e) {
      throw new BeamsaveException(e.getMessage(), e);
    }
  }

  /** The stanzas of {@code e} that none of {@code remove} names; each must name one. */
  static List<Stanza> kept(String image, Envelope e, List<String> remove) {
    List<Stanza> kept = new ArrayList<>(e.stanzas());
    for (String r : remove) {
      String id = idOf(r);
      boolean removed = kept.removeIf(s -> id.equals("password") ? s.type() == Stanza.PASSWORD
          : s.keyId() != null && HexFormat.of().formatHex(s.keyId()).equals(id));
      if (!removed) {
        throw new BeamsaveException("--remove " + r + ": " + image + " has no such recipient"
            + " (it is for " + e.recipients() + ")");
      }
    }
    return kept;
  }

  /** What {@code --remove} names: {@code password}, or a key id in hex. */
  private static String idOf(String given) {
    String g = given.strip();
    if (g.startsWith("beamsave-pub-")) {
      try {
        String d = Recipient.PublicKey.parse(g).describe();
        return d.substring(d.lastIndexOf(' ') + 1);
      } catch (IllegalArgumentException e) {
        throw new BeamsaveException("--remove: " + e.getMessage());
      }
    }
    g = g.replaceFirst("^(recipient|key file) ", "").toLowerCase(java.util.Locale.ROOT);
    if (!g.equals("password") && !g.matches("[0-9a-f]{16}")) {
      // Not repeated: what was given by mistake may be a secret.
      throw new BeamsaveException("--remove: give 'password', a key id (16 hex digits, as"
          + " 'beamsave verify' shows the recipients) or a public key");
    }
    return g;
  }

  /**
   * A copy of {@code image} beside it with {@code header} in front, forced to disk and renamed
   * over it, its mode and modification time kept; refused if the image changed meanwhile.
   */
  static long rewriteFile(Path image, byte[] header) throws IOException {
    Path copy = ImageWriter.partialPath(image);
    BasicFileAttributes before = Files.readAttributes(image, BasicFileAttributes.class);
    try {
      Files.copy(image, copy, StandardCopyOption.COPY_ATTRIBUTES);
    } catch (FileAlreadyExistsException e) {
      throw new BeamsaveException(copy + " exists: a save or rekey of " + image + " is running"
          + " (or was killed; then remove it)");
    }
    boolean done = false;
    try {
      try (FileChannel ch = FileChannel.open(copy, StandardOpenOption.WRITE,
          java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        ByteBuffer b = ByteBuffer.wrap(header);
        while (b.hasRemaining()) {
          ch.write(b, b.position());
        }
        ch.force(true);
      }
      Files.setLastModifiedTime(copy, before.lastModifiedTime());
      BasicFileAttributes now = Files.readAttributes(image, BasicFileAttributes.class);
      if (now.size() != before.size() || !now.lastModifiedTime().equals(before.lastModifiedTime())
          || !Objects.equals(now.fileKey(), before.fileKey())) {
        throw new BeamsaveException(image + " changed during the rekey; left as it is now");
      }
      Rename.replacing(copy, image);
      done = true;
      return before.size() - header.length;
    } finally {
      if (!done) {
        Removal.file(copy);
      }
    }
  }

  /**
   * The object made anew from {@code header} and the rest of itself, copied by the store; the
   * upload is aborted, and the object left as it is, if it changed meanwhile.
   */
  static long rewriteObject(Location object, S3Settings s3, byte[] header, long size) {
    Location uri = object;
    Location.Placed placed = object.placed(s3);
    Store store = placed.store();
    String key = placed.key();
    Store.Stat before = store.stat(key)
        .orElseThrow(() -> new BeamsaveException(uri + ": no such image"));
    if (before.size() != size) {
      throw new BeamsaveException(uri + " changed during the rekey; left as it is now");
    }
    long first = Math.min(size, StoreImageSink.MIN_PART);
    byte[] part1 = new byte[(int) first];
    System.arraycopy(header, 0, part1, 0, header.length);
    store.read(key, before.etag(), header.length, part1, header.length,
        (int) (first - header.length));
    // Claimed, so that cleanup can abort it if this process is killed before it ends.
    String upload = UploadClaim.begin(store, key, "application/octet-stream", before.metadata(),
        "rekey", null).uploadId();
    boolean done = false;
    try {
      List<Store.Part> parts = new ArrayList<>();
      parts.add(new Store.Part(1, store.uploadPart(key, upload, 1, part1, part1.length, null),
          part1.length));
      long copied = 0;
      for (long at = first; at < size; at += COPY_PART) {
        long n = Math.min(COPY_PART, size - at);
        parts.add(new Store.Part(parts.size() + 1,
            store.copyPart(key, upload, parts.size() + 1, key, before.etag(), at, n), n));
        copied += n;
      }
      Store.Stat still = store.stat(key).orElse(null);
      if (still == null || still.size() != before.size()
          || !still.etag().equals(before.etag())) {
        throw new BeamsaveException(uri + " changed during the rekey; left as it is now");
      }
      store.complete(key, upload, parts);
      done = true;
      Store.Stat made = store.stat(key).orElseThrow();
      if (made.size() != size) {
        throw new BeamsaveException(uri + ": rekeyed into " + made.size() + " bytes, not "
            + size);
      }
      return copied;
    } finally {
      boolean ended = done;
      if (!done) {
        try {
          store.abort(key, upload);
          ended = true;
        } catch (RuntimeException e) {
          System.err.println("beamsave: warning: cannot abort the upload of " + uri + ": "
              + e.getMessage() + "; 'beamsave cleanup' aborts it");
        }
      }
      if (ended) {
        try {
          store.delete(UploadClaim.nameFor(key, upload));
        } catch (RuntimeException e) {
          // A claim whose upload has ended ties nothing to beamsave; cleanup removes it.
        }
      }
    }
  }
}
