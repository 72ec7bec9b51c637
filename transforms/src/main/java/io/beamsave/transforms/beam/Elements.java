package io.beamsave.transforms.beam;

import java.io.IOException;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Impulse;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;

/**
 * A pipeline's input from elements known when it is built: an {@link Impulse} and one DoFn
 * that emits them, carried encoded by their coder. {@code Create.of} does the same through a
 * splittable read of several steps, and the DirectRunner's start-up and bookkeeping grow with
 * every step: a restore of 100 MiB started its first task about 0.4 s later with it.
 */
public final class Elements<T> extends PTransform<PBegin, PCollection<T>> {
  private final List<T> elements;
  private final Coder<T> coder;

  private Elements(List<T> elements, Coder<T> coder) {
    this.elements = elements;
    this.coder = coder;
  }

  public static <T> Elements<T> of(List<T> elements, Coder<T> coder) {
    return new Elements<>(elements, coder);
  }

  @Override
  public PCollection<T> expand(PBegin input) {
    if (elements == null || coder == null) {
      throw new IllegalArgumentException("Elements needs its elements and their coder");
    }
    return input
        .apply("Impulse", Impulse.create())
        .apply("Emit", ParDo.of(new EmitFn<>(encode(elements, coder), coder)))
        .setCoder(coder);
  }

  /** {@code elements} as the bytes a DoFn carries them in. */
  public static <T> byte[] encode(List<T> elements, Coder<T> coder) {
    try {
      return CoderUtils.encodeToByteArray(ListCoder.of(coder), elements);
    } catch (CoderException e) {
      throw new IllegalArgumentException("cannot encode the elements: " + e.getMessage(), e);
    }
  }

  public static <T> List<T> decode(byte[] encoded, Coder<T> coder) throws IOException {
    return CoderUtils.decodeFromByteArray(ListCoder.of(coder), encoded);
  }

  private static final class EmitFn<T> extends DoFn<byte[], T> {
    private final byte[] encoded;
    private final Coder<T> coder;

    EmitFn(byte[] encoded, Coder<T> coder) {
      this.encoded = encoded;
      this.coder = coder;
    }

    @ProcessElement
    public void process(OutputReceiver<T> out) throws IOException {
      for (T t : decode(encoded, coder)) {
        out.output(t);
      }
    }
  }
}
