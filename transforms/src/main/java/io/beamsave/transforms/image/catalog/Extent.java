package io.beamsave.transforms.image.catalog;

/**
 * A piece of a file stored in one shard: {@code length} bytes at {@code offset} of the shard's
 * raw bytes, with the digest ({@link ExtentDigest}) of those bytes ({@code null} until the shard
 * has been compressed). {@code image} says which image holds the shard: 0 the image whose
 * catalog this is, {@code i} its {@code i}th base ({@link Catalog#bases()}), for a file an
 * incremental save found unchanged.
 */
public record Extent(int image, int shard, long offset, long length, byte[] digest)
    implements java.io.Serializable {
  /** An extent in the image's own shards. */
  public Extent(int shard, long offset, long length, byte[] digest) {
    this(0, shard, offset, length, digest);
  }

  public Extent withDigest(byte[] newDigest) {
    return new Extent(image, shard, offset, length, newDigest);
  }

  public Extent inImage(int newImage) {
    return new Extent(newImage, shard, offset, length, digest);
  }

  /** Whether the bytes are in a base image, not in the image itself. */
  public boolean isReference() {
    return image != 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Extent x && image == x.image && shard == x.shard && offset == x.offset
        && length == x.length && java.util.Arrays.equals(digest, x.digest);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(image, shard, offset, length) * 31
        + java.util.Arrays.hashCode(digest);
  }
}
