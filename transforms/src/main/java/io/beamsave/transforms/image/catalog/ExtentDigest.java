package io.beamsave.transforms.image.catalog;

import io.beamsave.transforms.format.ImageFormat;
import net.jpountz.xxhash.StreamingXXHash64;
import net.jpountz.xxhash.XXHashFactory;

/**
 * The digest of an extent's raw bytes: XXH64 with seed 0, as 8 big-endian bytes. XXH64 runs at
 * memory speed through lz4-java's native code whatever the JIT does, where SHA-256 is fast only
 * under C2 intrinsics that cost more CPU to compile than a save spends hashing; the digest guards
 * against corruption and codec faults, not against an adversary (blocks carry CRC32C too). Not
 * thread-safe; holds native memory until closed.
 */
public final class ExtentDigest implements AutoCloseable {
  private static final class Holder {
    static final XXHashFactory FACTORY = XXHashFactory.fastestInstance();
  }

  private final StreamingXXHash64 hash = Holder.FACTORY.newStreamingHash64(0);

  public void reset() {
    hash.reset();
  }

  public void update(byte[] b, int off, int len) {
    // The hash is native code that trusts its offsets: a bad one read past the array (SIGSEGV).
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    hash.update(b, off, len);
  }

  /** The digest of everything updated since the last reset. */
  public byte[] digest() {
    long v = hash.getValue();
    byte[] out = new byte[ImageFormat.DIGEST_SIZE];
    for (int i = 0; i < 8; i++) {
      out[i] = (byte) (v >>> (56 - 8 * i));
    }
    return out;
  }

  @Override
  public void close() {
    hash.close();
  }
}
