package io.beamsave.transforms.walk;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An entry of a library that a save with {@code --skip-unreadable} could not read and skipped:
 * its path in the library and why (as {@link io.beamsave.transforms.BeamsaveException#describe}
 * words it). The launcher warns about each, naming it, from the {@code save.ImageSummary}.
 */
public record Unreadable(PathBytes path, String reason) {

  public static void writeAll(DataOutputStream out, List<Unreadable> all) throws IOException {
    out.writeInt(all.size());
    for (Unreadable u : all) {
      DataCoder.writeBytes(out, u.path);
      DataCoder.writeString(out, u.reason);
    }
  }

  public static List<Unreadable> readAll(DataInputStream in) throws IOException {
    int n = in.readInt();
    List<Unreadable> all = new ArrayList<>(Math.min(n, 1 << 16));
    for (int i = 0; i < n; i++) {
      all.add(new Unreadable(DataCoder.readBytes(in), DataCoder.readString(in)));
    }
    return all;
  }

  public static void writePaths(DataOutputStream out, List<PathBytes> paths) throws IOException {
    out.writeInt(paths.size());
    for (PathBytes p : paths) {
      DataCoder.writeBytes(out, p);
    }
  }

  public static List<PathBytes> readPaths(DataInputStream in) throws IOException {
    int n = in.readInt();
    List<PathBytes> paths = new ArrayList<>(Math.min(n, 1 << 16));
    for (int i = 0; i < n; i++) {
      paths.add(DataCoder.readBytes(in));
    }
    return paths;
  }
}
