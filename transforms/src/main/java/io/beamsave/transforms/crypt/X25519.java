package io.beamsave.transforms.crypt;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import javax.crypto.KeyAgreement;

/**
 * X25519 (RFC 7748) on raw 32-byte keys, through the JDK's XDH provider: the JDK speaks in key
 * objects and a public key's u-coordinate as a number, the image and the key files in the RFC's
 * little-endian bytes.
 */
final class X25519 {
  private static final byte[] BASE_POINT = new byte[32];

  static {
    BASE_POINT[0] = 9;
  }

  private X25519() {}

  /** The public key of the private scalar {@code secret}. */
  static byte[] publicKey(byte[] secret) {
    return agree(secret, BASE_POINT);
  }

  /**
   * The shared secret of {@code secret} and {@code publicKey}, or null where {@code publicKey}
   * is a point of small order (the result would be all zeros, which the JDK refuses too).
   */
  static byte[] agree(byte[] secret, byte[] publicKey) {
    try {
      KeyFactory kf = KeyFactory.getInstance("XDH");
      PrivateKey priv = kf.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519,
          secret.clone()));
      PublicKey pub = kf.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519,
          u(publicKey)));
      KeyAgreement ka = KeyAgreement.getInstance("XDH");
      ka.init(priv);
      ka.doPhase(pub, true);
      byte[] shared = ka.generateSecret();
      boolean zero = true;
      for (byte b : shared) {
        zero &= b == 0;
      }
      return zero ? null : shared;
    } catch (java.security.InvalidKeyException smallOrder) {
      return null;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("X25519 is not available", e);
    }
  }

  /** RFC 7748's decodeUCoordinate: little-endian, the top bit ignored. */
  private static BigInteger u(byte[] le) {
    byte[] be = new byte[le.length];
    for (int i = 0; i < le.length; i++) {
      be[i] = le[le.length - 1 - i];
    }
    be[0] &= 0x7f;
    return new BigInteger(1, be);
  }
}
