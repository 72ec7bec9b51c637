package io.beamsave.transforms.image.catalog;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;

/**
 * SHA-256 for {@link Ranges}, at native speed where it can be had. Saves run with C1 alone (the
 * launcher leaves C2's compile time to the codecs), where the JDK's SHA-256 runs at about 130
 * MB/s against 1.6 GB/s for Amazon Corretto Crypto Provider's (AWS-LC, with the CPU's SHA
 * instructions): it is asked for this digest only, never installed as the JVM's provider. Where
 * its native library does not load (another CPU or C library), the JDK's is used: slower, the
 * same digests. Static methods only.
 */
public final class RangeDigest {
  private RangeDigest() {}

  private static final class Native {
    static final Provider PROVIDER = load();

    private static Provider load() {
      try {
        var p = com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider.INSTANCE;
        return p.getLoadingError() == null && p.getService("MessageDigest", "SHA-256") != null
            ? p : null;
      } catch (LinkageError | RuntimeException unavailable) {
        return null;
      }
    }
  }

  /**
   * A SHA-256 of bytes handed over in arrays, for ranges: through a direct buffer of its own to
   * the native digest, since arrays handed to native code directly are pinned, and a pinned
   * array holds the serial collector off until it is let go (the heap grows meanwhile: a save
   * of 1 GiB peaked 130 MiB higher). Not thread-safe.
   */
  public static final class Hasher {
    private final MessageDigest md = sha256();
    private final java.nio.ByteBuffer through =
        Native.PROVIDER == null ? null : java.nio.ByteBuffer.allocateDirect(1 << 16);

    public void update(byte[] b, int off, int len) {
      if (through == null) {
        md.update(b, off, len);
        return;
      }
      while (len > 0) {
        int n = Math.min(len, through.capacity());
        through.clear();
        through.put(b, off, n).flip();
        md.update(through);
        off += n;
        len -= n;
      }
    }

    /** The digest of what was handed over since the last; starts afresh. */
    public byte[] digest() {
      return md.digest();
    }

    /** Forgets what was handed over since the last digest. */
    public void reset() {
      md.reset();
    }
  }

  /** A new SHA-256 digest: the native one if it loaded, else the JDK's. */
  public static MessageDigest sha256() {
    try {
      Provider p = Native.PROVIDER;
      return p != null ? MessageDigest.getInstance("SHA-256", p)
          : MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether the native digest is in use, for the record. */
  public static boolean isNative() {
    return Native.PROVIDER != null;
  }
}
