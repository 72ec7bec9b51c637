package io.beamsave.transforms.io;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import io.beamsave.transforms.image.PathBytes;
import java.util.List;

/**
 * What {@link AssembleImage} wrote for one library, with what it could not read and skipped and
 * the {@code --files-from} paths it does not hold. It leaves this in the run's staging directory
 * for the launcher's report, so the launcher need not re-read every catalog: a pipeline's
 * output does not travel back to the program that started it, and staging is shared storage.
 */
public record ImageSummary(
    String library,
    String image,
    long files,
    long rawBytes,
    long imageBytes,
    int shards,
    List<Unreadable> unreadable,
    List<PathBytes> missing) {

  public static final DataCoder<ImageSummary> CODER =
      new DataCoder<>() {
        @Override
        void write(ImageSummary s, DataOutputStream out) throws IOException {
          writeString(out, s.library);
          writeString(out, s.image);
          out.writeLong(s.files);
          out.writeLong(s.rawBytes);
          out.writeLong(s.imageBytes);
          out.writeInt(s.shards);
          Unreadable.writeAll(out, s.unreadable);
          Unreadable.writePaths(out, s.missing);
        }

        @Override
        ImageSummary read(DataInputStream in) throws IOException {
          return new ImageSummary(
              readString(in), readString(in), in.readLong(), in.readLong(), in.readLong(),
              in.readInt(), Unreadable.readAll(in), Unreadable.readPaths(in));
        }
      };

  void writeTo(SaveSpec spec) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CODER.encode(this, out);
    Staging.write(spec, SaveSpec.summaryName(library), out.toByteArray(), out.size());
  }

  /** Reads the summary {@link AssembleImage} left for {@code library} of {@code spec}. */
  public static ImageSummary read(SaveSpec spec, String library) throws IOException {
    return CODER.decode(new ByteArrayInputStream(Staging.read(spec, SaveSpec.summaryName(library))));
  }
}
