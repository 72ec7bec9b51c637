package io.beamsave.transforms.codec;

import java.io.Serializable;

/**
 * A block compression algorithm at one level.
 *
 * <p>A {@code Codec} is immutable, cheap, serializable and thread-safe; it only describes the
 * algorithm. The work is done by the {@link Compressor}s and {@link Decompressor}s it creates,
 * which hold native or heap state and are used by one thread at a time (create them once per
 * worker thread, e.g. in a DoFn's {@code @Setup}, and close them in {@code @Teardown}).
 */
public interface Codec extends Serializable {

  /** The id written to disk in every block this codec compressed; see {@link CodecId}. */
  CodecId id();

  /** The canonical spec, e.g. {@code zstd:3}; {@link Codecs#parse} turns it back into a codec. */
  String spec();

  Compressor newCompressor();

  Decompressor newDecompressor();
}
