package io.beamsave.transforms.crypt;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.params.HKDFParameters;

/**
 * The few primitives everything here is built from: random bytes, HKDF-SHA256 (RFC 5869, from
 * Bouncy Castle: the JDK 17 has none), HMAC-SHA256, SHA-256, and AES-256-GCM of small values
 * ("wrapping": a 12-byte random nonce, the ciphertext and the 16-byte tag, in that order).
 */
final class Primitives {
  static final int KEY_SIZE = 32;
  static final int NONCE_SIZE = 12;
  static final int TAG_SIZE = 16;
  /** A wrapped 32-byte key: nonce, ciphertext, tag. */
  static final int WRAPPED_KEY_SIZE = NONCE_SIZE + KEY_SIZE + TAG_SIZE;

  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * Where AES-GCM comes from: Conscrypt (BoringSSL, in native code) where its library loads on
   * this platform, else the JDK. The JDK's runs at native speed only once C2 has compiled its
   * intrinsics, and the launcher runs pipelines with C1 alone, where it sealed 22 MB/s against
   * Conscrypt's 1.5 GB/s on the 2-core machine measured.
   */
  private static final java.security.Provider GCM_PROVIDER = gcmProvider();

  private static java.security.Provider gcmProvider() {
    try {
      if (org.conscrypt.Conscrypt.isAvailable()) {
        java.security.Provider p = org.conscrypt.Conscrypt.newProvider();
        Cipher.getInstance("AES/GCM/NoPadding", p);
        return p;
      }
    } catch (GeneralSecurityException | LinkageError | RuntimeException unavailable) {
      // No native library for this platform: the JDK's AES-GCM does the same, slower.
    }
    return null;
  }

  /** A new AES-256-GCM cipher (not thread-safe). */
  static Cipher gcm() throws GeneralSecurityException {
    return GCM_PROVIDER != null ? Cipher.getInstance("AES/GCM/NoPadding", GCM_PROVIDER)
        : Cipher.getInstance("AES/GCM/NoPadding");
  }

  private Primitives() {}

  static byte[] random(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  static byte[] hkdf(byte[] ikm, byte[] salt, String info, int length) {
    HKDFBytesGenerator g = new HKDFBytesGenerator(new SHA256Digest());
    g.init(new HKDFParameters(ikm, salt, info.getBytes(StandardCharsets.US_ASCII)));
    byte[] out = new byte[length];
    g.generateBytes(out, 0, length);
    return out;
  }

  static byte[] hmac(byte[] key, byte[] data, int off, int len) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(data, off, len);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is not available", e);
    }
  }

  static byte[] sha256(byte[]... parts) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (byte[] p : parts) {
        d.update(p);
      }
      return d.digest();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  /** {@code plain} sealed with {@code key}: a random nonce, then the ciphertext and tag. */
  static byte[] wrap(byte[] key, byte[] aad, byte[] plain) {
    byte[] nonce = random(NONCE_SIZE);
    try {
      Cipher c = gcm();
      c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"),
          new GCMParameterSpec(TAG_SIZE * 8, nonce));
      c.updateAAD(aad);
      byte[] out = new byte[NONCE_SIZE + plain.length + TAG_SIZE];
      System.arraycopy(nonce, 0, out, 0, NONCE_SIZE);
      c.doFinal(plain, 0, plain.length, out, NONCE_SIZE);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256-GCM is not available", e);
    }
  }

  /** What {@link #wrap} sealed, or null if {@code key} or {@code aad} is not the one used. */
  static byte[] unwrap(byte[] key, byte[] aad, byte[] wrapped) {
    if (wrapped.length < NONCE_SIZE + TAG_SIZE) {
      return null;
    }
    try {
      Cipher c = gcm();
      c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"),
          new GCMParameterSpec(TAG_SIZE * 8, wrapped, 0, NONCE_SIZE));
      c.updateAAD(aad);
      return c.doFinal(wrapped, NONCE_SIZE, wrapped.length - NONCE_SIZE);
    } catch (AEADBadTagException wrongKeyOrDamaged) {
      return null;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256-GCM is not available", e);
    }
  }

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
