package io.beamsave.transforms.store;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** MD5 as S3 uses it: Content-MD5 of parts, and ETags of whole and multipart objects. */
public final class Md5 {
  private Md5() {}

  public static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no MD5", e);
    }
  }

  public static byte[] of(byte[] b, int off, int len) {
    MessageDigest d = digest();
    d.update(b, off, len);
    return d.digest();
  }

  public static String hex(byte[] md5) {
    return HexFormat.of().formatHex(md5);
  }

  /** An ETag that is the plain MD5 of the body (single-part uploads on most servers). */
  public static boolean isPlainMd5(String etag) {
    return etag.matches("[0-9a-fA-F]{32}");
  }

  /** The ETag S3 gives a multipart object: MD5 of the parts' binary MD5s, dash, part count. */
  public static String multipartEtag(List<byte[]> partMd5s) {
    MessageDigest d = digest();
    partMd5s.forEach(d::update);
    return hex(d.digest()) + "-" + partMd5s.size();
  }

  /**
   * The ETag S3 gives the object completed from parts with these ETags (quoted or not), or null
   * if one of them is not a plain MD5 (a store that makes its ETags otherwise).
   */
  public static String multipartEtagOf(List<String> partEtags) {
    List<byte[]> md5s = new java.util.ArrayList<>(partEtags.size());
    for (String tag : partEtags) {
      String t = S3Store.unquote(tag);
      if (!isPlainMd5(t)) {
        return null;
      }
      md5s.add(HexFormat.of().parseHex(t));
    }
    return multipartEtag(md5s);
  }
}
