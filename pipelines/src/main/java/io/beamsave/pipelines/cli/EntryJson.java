package io.beamsave.pipelines.cli;

import io.beamsave.transforms.Printable;
import io.beamsave.transforms.fs.DeviceNumber;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.Meta;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A catalog entry as the JSON lines of {@code list}, {@code diff} and {@code restore} show it
 * (docs/json.md): a name as text where it is UTF-8, else printable with its exact bytes in
 * base64 beside it.
 */
final class EntryJson {
  private EntryJson() {}

  /** An entry as JSON: its name as text, and as base64 too where it is not valid UTF-8. */
  static Map<String, Object> entry(Entry e) {
    return entry(e, null);
  }

  /**
   * The images holding a file's bytes, in the order its bytes come from them: 0 for the image
   * itself, {@code i} for base {@code i}. One, but for a file changed since its base whose
   * unchanged ranges stay there.
   */
  static List<Integer> imagesOf(Entry e) {
    List<Integer> images = new ArrayList<>(1);
    for (io.beamsave.transforms.image.catalog.Extent x : e.extents()) {
      if (!images.contains(x.image())) {
        images.add(x.image());
      }
    }
    return images;
  }

  /** Where image {@code i} of {@link #imagesOf} is: "." for the image itself. */
  static String location(Catalog c, int i) {
    return i == 0 ? "." : c.bases().get(i - 1).location();
  }

  /** An entry's type as JSON names it. */
  static String entryType(EntryType t) {
    return switch (t) {
      case FILE -> "file";
      case DIRECTORY -> "dir";
      case SYMLINK -> "symlink";
      case HARDLINK -> "hardlink";
      case FIFO -> "fifo";
      case CHAR_DEVICE -> "chardev";
      case BLOCK_DEVICE -> "blockdev";
    };
  }

  /** As {@link #entry(Entry)}, with the base holding a file's bytes if {@code sourcesOf}. */
  static Map<String, Object> entry(Entry e, Catalog sourcesOf) {
    Map<String, Object> m = JsonOutput.object("entry");
    putName(m, "path", e.path().bytes());
    m.put("entryType", entryType(e.type()));
    m.put("mode", String.format("%04o", e.mode()));
    m.put("uid", e.uid());
    m.put("gid", e.gid());
    m.put("size", e.size());
    m.put("mtime", isoTime(e.mtimeSeconds(), e.mtimeNanos()));
    m.put("mtimeSeconds", e.mtimeSeconds());
    m.put("mtimeNanos", e.mtimeNanos());
    m.put("changed", e.changed());
    m.put("unreadable", e.unreadable());
    if (e.linkTarget() != null) {
      putName(m, "linkTarget", e.linkTarget().bytes());
    }
    Meta meta = e.meta();
    if (meta.user() != null) {
      putName(m, "user", meta.user());
    }
    if (meta.group() != null) {
      putName(m, "group", meta.group());
    }
    if (e.type() == EntryType.CHAR_DEVICE || e.type() == EntryType.BLOCK_DEVICE) {
      m.put("deviceMajor", Integer.toUnsignedLong(DeviceNumber.major(meta.rdev())));
      m.put("deviceMinor", Integer.toUnsignedLong(DeviceNumber.minor(meta.rdev())));
    }
    if (!meta.xattrs().isEmpty()) {
      List<Map<String, Object>> xattrs = new ArrayList<>();
      for (Meta.Xattr x : meta.xattrs()) {
        Map<String, Object> a = new LinkedHashMap<>();
        putName(a, "name", x.name());
        a.put("valueBase64", Base64.getEncoder().encodeToString(x.value()));
        xattrs.add(a);
      }
      m.put("xattrs", xattrs);
    }
    List<Integer> images = sourcesOf == null ? List.of() : imagesOf(e);
    if (images.size() == 1 && images.get(0) != 0) {
      m.put("source", location(sourcesOf, images.get(0)));
    } else if (images.size() > 1) {
      m.put("sources", images.stream().map(i -> location(sourcesOf, i)).toList());
    }
    return m;
  }

  /**
   * {@code name} as a JSON string where it is UTF-8; else as 'list' prints it (\xNN for the
   * bytes that are not) with the exact bytes in {@code <key>Base64}.
   */
  static void putName(Map<String, Object> m, String key, byte[] name) {
    try {
      m.put(key, StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(name)).toString());
    } catch (CharacterCodingException notUtf8) {
      m.put(key, Printable.bytes(name));
      m.put(key + "Base64", Base64.getEncoder().encodeToString(name));
    }
  }

  /** RFC 3339 UTC with nanoseconds, or null past the years Java's clock reaches. */
  static String isoTime(long seconds, int nanos) {
    try {
      return Instant.ofEpochSecond(seconds, nanos).toString();
    } catch (java.time.DateTimeException outOfRange) {
      return null;
    }
  }
}
