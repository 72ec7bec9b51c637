package io.beamsave.pipelines.mount;

import io.beamsave.pipelines.stored.StoredImages;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/** What a mount shows: one image's tree, or every image under a location. */
final class Views {
  private Views() {}

  /** The tree of one image at the mount point. */
  static MountedFs.View of(ImageTree tree) {
    return new MountedFs.View() {
      @Override
      public MountedFs.Node resolve(byte[] path) throws IOException {
        Entry e = tree.lookup(PathBytes.of(path));
        return e == null ? null : new MountedFs.InImage(tree, e, 0);
      }

      @Override
      public List<MountedFs.Named> list(MountedFs.Node dir) throws IOException {
        return children(tree, ((MountedFs.InImage) dir).entry(), 0);
      }

      @Override
      public long[] totals() {
        return totalsOf(tree);
      }

      @Override
      public boolean modesSayAll() {
        return tree.modesSayAll();
      }
    };
  }

  private static List<MountedFs.Named> children(ImageTree tree, Entry dir, long salt)
      throws IOException {
    List<MountedFs.Named> out = new ArrayList<>();
    for (Entry e : tree.list(dir.path())) {
      out.add(new MountedFs.Named(e.path().fileName(), new MountedFs.InImage(tree, e, salt)));
    }
    return out;
  }

  private static long[] totalsOf(ImageTree tree) {
    CatalogHead.Totals t = tree.head().totals();
    return t == null ? new long[] {0, 0} : new long[] {t.entries(), t.rawBytes()};
  }

  /** The name of an image's directory: its time in UTC, as {@code 2026-12-03T07:03:52Z}. */
  static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

  /**
   * Every image under a location: {@code SERIES/TIME/...} (a series named by its path under
   * the location, a directory per component) and {@code SERIES/latest}, a link to the newest.
   * An image's tree is opened when first looked into, by {@code opener}.
   */
  static MountedFs.View of(Map<String, List<StoredImages.Image>> series, String at,
      Function<StoredImages.Image, ImageTree> opener) {
    return new LocationView(series, at, opener);
  }

  /** A directory the location view makes up: names to a directory, a link or an image. */
  private static final class Dir {
    final byte[] path;
    final TreeMap<String, Object> children = new TreeMap<>();
    long seconds;

    Dir(byte[] path) {
      this.path = path;
    }
  }

  /** An image's place: opened on first use, the same tree after. */
  private static final class Slot {
    final StoredImages.Image image;
    final long salt;
    ImageTree tree;

    Slot(StoredImages.Image image, long salt) {
      this.image = image;
      this.salt = salt;
    }
  }

  private static final class LocationView implements MountedFs.View {
    private final Dir root = new Dir(new byte[0]);
    private final Function<StoredImages.Image, ImageTree> opener;
    private final List<Slot> slots = new ArrayList<>();

    LocationView(Map<String, List<StoredImages.Image>> series, String at,
        Function<StoredImages.Image, ImageTree> opener) {
      this.opener = opener;
      String prefix = at.endsWith("/") ? at : at + "/";
      for (Map.Entry<String, List<StoredImages.Image>> s : series.entrySet()) {
        String rel = s.getKey().startsWith(prefix) ? s.getKey().substring(prefix.length())
            : s.getKey();
        Dir d = root;
        for (String part : rel.split("/")) {
          if (part.isEmpty() || part.equals(".") || part.equals("..")) {
            continue;
          }
          Object c = d.children.get(part);
          if (!(c instanceof Dir)) {
            Dir made = new Dir(join(d.path, part));
            d.children.put(part, made);
            c = made;
          }
          d = (Dir) c;
        }
        List<StoredImages.Image> images = new ArrayList<>(s.getValue());
        images.sort(Comparator.comparing(StoredImages.Image::time)
            .thenComparing(StoredImages.Image::uri));
        String newest = null;
        for (StoredImages.Image i : images) {
          String name = TIME.format(i.time());
          for (int n = 2; d.children.containsKey(name); n++) {
            name = TIME.format(i.time()) + "-" + n;
          }
          Slot slot = new Slot(i, slots.size() + 1);
          slots.add(slot);
          d.children.put(name, slot);
          newest = name;
          d.seconds = Math.max(d.seconds, i.time().getEpochSecond());
        }
        if (newest != null && !d.children.containsKey(StoredImages.LATEST)) {
          d.children.put(StoredImages.LATEST, newest.getBytes(StandardCharsets.UTF_8));
        }
      }
      latest(root);
    }

    /** A made-up directory's time: its newest image's, found beneath it. */
    private static long latest(Dir d) {
      for (Object c : d.children.values()) {
        if (c instanceof Dir sub) {
          d.seconds = Math.max(d.seconds, latest(sub));
        }
      }
      return d.seconds;
    }

    private static byte[] join(byte[] dir, String name) {
      byte[] n = name.getBytes(StandardCharsets.UTF_8);
      if (dir.length == 0) {
        return n;
      }
      byte[] b = Arrays.copyOf(dir, dir.length + 1 + n.length);
      b[dir.length] = '/';
      System.arraycopy(n, 0, b, dir.length + 1, n.length);
      return b;
    }

    @Override
    public MountedFs.Node resolve(byte[] path) throws IOException {
      Dir d = root;
      int i = 0;
      while (i < path.length) {
        int slash = i;
        while (slash < path.length && path[slash] != '/') {
          slash++;
        }
        String name = new String(path, i, slash - i, StandardCharsets.UTF_8);
        if (!Arrays.equals(name.getBytes(StandardCharsets.UTF_8),
            Arrays.copyOfRange(path, i, slash))) {
          return null;
        }
        Object c = d.children.get(name);
        int next = Math.min(path.length, slash + 1);
        if (c instanceof Dir sub) {
          d = sub;
          i = next;
        } else if (c instanceof byte[] target) {
          return slash < path.length ? null
              : new MountedFs.Made(Arrays.copyOf(path, slash), target, d.seconds);
        } else if (c instanceof Slot slot) {
          ImageTree tree = tree(slot);
          Entry e = tree.lookup(PathBytes.of(Arrays.copyOfRange(path, next, path.length)));
          return e == null ? null : new MountedFs.InImage(tree, e, slot.salt);
        } else {
          return null;
        }
      }
      return new MountedFs.Made(d.path, null, d.seconds);
    }

    private synchronized ImageTree tree(Slot slot) {
      if (slot.tree == null) {
        slot.tree = opener.apply(slot.image);
      }
      return slot.tree;
    }

    @Override
    public List<MountedFs.Named> list(MountedFs.Node dir) throws IOException {
      if (dir instanceof MountedFs.InImage in) {
        return children(in.tree(), in.entry(), in.salt());
      }
      MountedFs.Made made = (MountedFs.Made) dir;
      MountedFs.Node self = resolve(made.path());
      if (!(self instanceof MountedFs.Made)) {
        return List.of();
      }
      Dir d = dirAt(made.path());
      List<MountedFs.Named> out = new ArrayList<>();
      for (Map.Entry<String, Object> c : d.children.entrySet()) {
        byte[] name = c.getKey().getBytes(StandardCharsets.UTF_8);
        byte[] path = join(d.path, c.getKey());
        MountedFs.Node node = c.getValue() instanceof byte[] target
            ? new MountedFs.Made(path, target, d.seconds)
            : c.getValue() instanceof Dir sub ? new MountedFs.Made(path, null, sub.seconds)
            : new MountedFs.Made(path, null, ((Slot) c.getValue()).image.time().getEpochSecond());
        out.add(new MountedFs.Named(name, node));
      }
      return out;
    }

    private Dir dirAt(byte[] path) {
      Dir d = root;
      if (path.length == 0) {
        return d;
      }
      for (String part : new String(path, StandardCharsets.UTF_8).split("/")) {
        d = (Dir) d.children.get(part);
      }
      return d;
    }

    /** Unknown until each image is opened, which a mount does not do at its start. */
    @Override
    public boolean modesSayAll() {
      return false;
    }

    @Override
    public long[] totals() {
      long entries = 0;
      long bytes = 0;
      for (Slot s : slots) {
        bytes += s.image.bytes();
        entries++;
      }
      return new long[] {entries, bytes};
    }
  }
}
