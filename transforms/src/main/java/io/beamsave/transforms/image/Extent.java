package io.beamsave.transforms.image;

/**
 * A piece of a file stored in one shard: {@code length} bytes at {@code offset} of the shard's
 * raw bytes, with the digest ({@link ExtentDigest}) of those bytes ({@code null} until the shard has been compressed).
 */
public record Extent(int shard, long offset, long length, byte[] digest)
    implements java.io.Serializable {
  public Extent withDigest(byte[] newDigest) {
    return new Extent(shard, offset, length, newDigest);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Extent x && shard == x.shard && offset == x.offset
        && length == x.length && java.util.Arrays.equals(digest, x.digest);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(shard, offset, length) * 31 + java.util.Arrays.hashCode(digest);
  }
}
