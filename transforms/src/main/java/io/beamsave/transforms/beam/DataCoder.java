package io.beamsave.transforms.beam;

import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.beam.sdk.coders.CustomCoder;

/**
 * Base of the small hand-written coders of this package: a runner encodes every element, and
 * these are several times cheaper than Java serialization.
 */
public abstract class DataCoder<T> extends CustomCoder<T> {
  public abstract void write(T value, DataOutputStream out) throws IOException;

  public abstract T read(DataInputStream in) throws IOException;

  @Override
  public final void encode(T value, OutputStream out) throws IOException {
    DataOutputStream data = new DataOutputStream(out);
    write(value, data);
    data.flush();
  }

  @Override
  public final T decode(InputStream in) throws IOException {
    return read(new DataInputStream(in));
  }

  @Override
  public void verifyDeterministic() {}

  public static void writeString(DataOutputStream out, String s) throws IOException {
    if (s == null) {
      out.writeInt(-1);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  public static void writeBytes(DataOutputStream out, PathBytes b) throws IOException {
    out.writeInt(b.length());
    out.write(b.bytes());
  }

  public static PathBytes readBytes(DataInputStream in) throws IOException {
    byte[] b = new byte[in.readInt()];
    in.readFully(b);
    return PathBytes.of(b);
  }

  /** Writes {@code b}, which may be null (an unencrypted image's key), length first. */
  public static void writeOptional(DataOutputStream out, byte[] b) throws IOException {
    out.writeShort(b == null ? 0 : b.length);
    if (b != null) {
      out.write(b);
    }
  }

  /** What {@link #writeOptional} wrote: null for null. */
  public static byte[] readOptional(DataInputStream in) throws IOException {
    byte[] b = new byte[in.readUnsignedShort()];
    in.readFully(b);
    return b.length == 0 ? null : b;
  }

  public static String readString(DataInputStream in) throws IOException {
    int len = in.readInt();
    if (len < 0) {
      return null;
    }
    byte[] b = new byte[len];
    in.readFully(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
