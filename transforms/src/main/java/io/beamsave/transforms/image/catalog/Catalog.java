package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageId;
import java.util.List;
import java.util.Map;

/**
 * The table of contents of an image: what was saved, how, and where each piece lies. {@code
 * root} is the library directory itself (empty path), or {@code null} in a version 1 image,
 * which did not record it.
 *
 * <p>The catalog is always the complete tree. An incremental image's unchanged files have
 * extents in its {@code bases}: the images (a direct base, and the images it referenced in turn)
 * whose shards hold their bytes, each known by id and catalog digest. {@code id} is the image's
 * own; {@code origin} is the image a consolidated image was folded from (or null); {@code depth}
 * is how many incremental saves lead back to a full one (0 for a full image); {@code digest} is the SHA-256 of the catalog's raw bytes, set when it was read or written.
 *
 * <p>{@code notes} are what the save knew of where the bytes came from ({@link Notes}): empty
 * for most images and for every image of a version before 11.
 *
 * <p>{@code key} is the key of an encrypted image, as the catalog was read with it or is to be
 * written with it; null for an image that is not encrypted. It is no part of the catalog's bytes.
 */
public record Catalog(
    String library,
    String codecSpec,
    long createdMillis,
    int blockSize,
    long shardSize,
    Entry root,
    List<Entry> entries,
    List<ShardInfo> shards,
    ImageId id,
    ImageId origin,
    int depth,
    List<Base> bases,
    Map<String, String> notes,
    byte[] digest,
    ImageKey key) {

  /**
   * A base image: its id, the digest of its catalog (so that an image put in its place is
   * noticed), when it was saved, and where it was when this image was saved: a path or an
   * {@code s3://} URI.
   */
  public record Base(ImageId id, byte[] catalogDigest, long createdMillis, String location)
      implements java.io.Serializable {}

  /** A self-contained image (no bases), with a random id. */
  public Catalog(
      String library,
      String codecSpec,
      long createdMillis,
      int blockSize,
      long shardSize,
      Entry root,
      List<Entry> entries,
      List<ShardInfo> shards) {
    this(library, codecSpec, createdMillis, blockSize, shardSize, root, entries, shards,
        ImageId.random(), null, 0, List.of(), Map.of(), null, null);
  }

  public Catalog withIdentity(
      ImageId newId, ImageId newOrigin, int newDepth, List<Base> newBases) {
    return new Catalog(library, codecSpec, createdMillis, blockSize, shardSize, root, entries,
        shards, newId, newOrigin, newDepth, List.copyOf(newBases), notes, digest, key);
  }

  public Catalog withDigest(byte[] newDigest) {
    return new Catalog(library, codecSpec, createdMillis, blockSize, shardSize, root, entries,
        shards, id, origin, depth, bases, notes, newDigest, key);
  }

  /** This catalog of an image encrypted with {@code newKey} (whose id it takes). */
  public Catalog withKey(ImageKey newKey) {
    return new Catalog(library, codecSpec, createdMillis, blockSize, shardSize, root, entries,
        shards, newKey == null ? id : newKey.id(), origin, depth, bases, notes, digest, newKey);
  }

  /** This catalog with {@code newNotes} (see {@link Notes}) in place of its own. */
  public Catalog withNotes(Map<String, String> newNotes) {
    return new Catalog(library, codecSpec, createdMillis, blockSize, shardSize, root, entries,
        shards, id, origin, depth, bases, Notes.check(newNotes), digest, key);
  }

  public boolean encrypted() {
    return key != null;
  }

  /** This image as a base of another: what the other's catalog records of it. */
  public Base asBase(String location) {
    return new Base(id, digest, createdMillis, location);
  }

  public boolean incremental() {
    return !bases.isEmpty();
  }

  public long rawBytes() {
    long n = 0;
    for (Entry e : entries) {
      n += e.isFile() ? e.size() : 0;
    }
    return n;
  }

  /** Raw bytes of files whose bytes lie in this image's own shards. */
  public long ownRawBytes() {
    long n = 0;
    for (Entry e : entries) {
      for (Extent x : e.extents()) {
        n += x.isReference() ? 0 : x.length();
      }
    }
    return n;
  }

  public long fileCount() {
    return entries.stream().filter(Entry::isFile).count();
  }
}
