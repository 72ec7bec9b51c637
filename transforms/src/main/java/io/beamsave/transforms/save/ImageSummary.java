package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.walk.Unreadable;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;

/**
 * What {@link AssembleImage} wrote for one library, with what it could not read and skipped and
 * the {@code --files-from} paths it does not hold. It leaves this in the run's staging directory
 * for the launcher's report (with, for an incremental image, its base, the raw bytes left in
 * the base, and those of changed files read to find which of their ranges the base holds:
 * {@code rawBytes} counts only what was stored), so the launcher need not re-read every
 * catalog: a pipeline's output does not travel back to the program that started it, and
 * staging is shared storage.
 */
public record ImageSummary(
    String library,
    String image,
    long files,
    long rawBytes,
    long imageBytes,
    int shards,
    List<Unreadable> unreadable,
    List<PathBytes> missing,
    String imageId,
    String base,
    long referencedBytes,
    long comparedBytes) {

  public static final DataCoder<ImageSummary> CODER =
      new DataCoder<>() {
        @Override
        public void write(ImageSummary s, DataOutputStream out) throws IOException {
          writeString(out, s.library);
          writeString(out, s.image);
          out.writeLong(s.files);
          out.writeLong(s.rawBytes);
          out.writeLong(s.imageBytes);
          out.writeInt(s.shards);
          Unreadable.writeAll(out, s.unreadable);
          Unreadable.writePaths(out, s.missing);
          writeString(out, s.imageId);
          writeString(out, s.base);
          out.writeLong(s.referencedBytes);
          out.writeLong(s.comparedBytes);
        }

        @Override
        public ImageSummary read(DataInputStream in) throws IOException {
          return new ImageSummary(
              readString(in), readString(in), in.readLong(), in.readLong(), in.readLong(),
              in.readInt(), Unreadable.readAll(in), Unreadable.readPaths(in), readString(in),
              readString(in), in.readLong(), in.readLong());
        }
      };

  void writeTo(SaveSpec spec) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CODER.encode(this, out);
    Staging.write(spec, library, Staging.summaryName(library), out.toByteArray(), out.size());
  }

  /** Reads the summary {@link AssembleImage} left for {@code library} of {@code spec}. */
  public static ImageSummary read(SaveSpec spec, String library) throws IOException {
    return CODER.decode(new ByteArrayInputStream(
        Staging.read(spec, library, Staging.summaryName(library))));
  }
}
