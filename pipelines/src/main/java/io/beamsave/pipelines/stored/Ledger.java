package io.beamsave.pipelines.stored;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.store.Location;
import io.beamsave.transforms.store.S3Settings;
import io.beamsave.transforms.store.Store;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The run ledger, like IBM i's SAVE_TYPES table: one JSON record per save or upload, kept
 * beside the images in {@code beamsave-ledger/} (a directory, or a key prefix in a bucket).
 * One object per record, never an appended file, because object storage cannot append and
 * concurrent runs must not lose each other's records.
 */
public final class Ledger {
  public static final String DIRECTORY = "beamsave-ledger";
  /** What a record of an encrypted image says of what the image hides. */
  static final String ENCRYPTED = "(encrypted)";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One run of one image. */
  public record Record(
      String kind,
      String library,
      String codec,
      String transferCodec,
      String strategy,
      Instant start,
      Instant end,
      double seconds,
      long rawBytes,
      long storedBytes,
      String where,
      String base,
      long referencedBytes,
      boolean isEncrypted) {

    public Record(String kind, String library, String codec, String transferCodec,
        String strategy, Instant start, Instant end, double seconds, long rawBytes,
        long storedBytes, String where, String base, long referencedBytes) {
      this(kind, library, codec, transferCodec, strategy, start, end, seconds, rawBytes,
          storedBytes, where, base, referencedBytes, false);
    }

    /**
     * This record of an encrypted image: without what the image hides (its library's name, its
     * codec, its raw size), since the ledger lies in the clear beside it.
     */
    public Record encrypted() {
      return new Record(kind, ENCRYPTED, ENCRYPTED, transferCodec, ENCRYPTED, start, end, seconds,
          0, storedBytes, where, base, 0, true);
    }

    /** A record of a run that made a self-contained image (or moved one). */
    public Record(String kind, String library, String codec, String transferCodec,
        String strategy, Instant start, Instant end, double seconds, long rawBytes,
        long storedBytes, String where) {
      this(kind, library, codec, transferCodec, strategy, start, end, seconds, rawBytes,
          storedBytes, where, null, 0);
    }

    static Record ofJson(java.util.Map<?, ?> m) {
      boolean encrypted = Boolean.TRUE.equals(m.get("encrypted"));
      String hidden = encrypted ? ENCRYPTED : null;
      return new Record(
          str(m.get("kind")), or(str(m.get("library")), hidden), or(str(m.get("codec")), hidden),
          str(m.get("transferCodec")), or(str(m.get("strategy")), hidden),
          Instant.parse(str(m.get("start"))),
          Instant.parse(str(m.get("end"))), ((Number) m.get("seconds")).doubleValue(),
          m.get("rawBytes") instanceof Number raw ? raw.longValue() : 0,
          ((Number) m.get("storedBytes")).longValue(),
          str(m.get("where")), m.get("base") == null ? null : str(m.get("base")),
          m.get("referencedBytes") instanceof Number n ? n.longValue() : 0, encrypted);
    }

    public java.util.Map<String, Object> toJson() {
      java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
      m.put("kind", kind);
      if (isEncrypted) {
        m.put("encrypted", true);
      }
      m.put("library", library);
      m.put("codec", codec);
      m.put("transferCodec", transferCodec);
      m.put("strategy", strategy);
      m.put("start", start.toString());
      m.put("end", end.toString());
      m.put("seconds", seconds);
      m.put("rawBytes", rawBytes);
      m.put("storedBytes", storedBytes);
      m.put("where", where);
      if (base != null) {
        // An incremental save: the image it references, and the bytes left there.
        m.put("base", base);
        m.put("referencedBytes", referencedBytes);
      }
      if (isEncrypted) {
        // What the image hides stays out of the record beside it.
        m.keySet().removeAll(List.of("library", "codec", "strategy", "rawBytes",
            "referencedBytes"));
      }
      return m;
    }
  }

  private Ledger() {}

  /** The strategy a record stands for, in the words of IBM's comparison. */
  public static String strategy(String kind, String codec, String transferCodec) {
    if (kind.equals("upload")) {
      return "none".equals(transferCodec) ? "raw transfer" : "compress in transfer";
    }
    if (kind.equals("save-upload")) {
      return "none".equals(codec) ? "raw save while transferring" : "compress while transferring";
    }
    return "none".equals(codec) ? "raw save" : "compress at save";
  }

  /** The ledger beside {@code image} (a path or {@code s3://} URI): its parent's ledger. */
  public static String besideImage(String image) {
    return Location.of(image).parent().toString();
  }

  /** Adds {@code r} to the ledger at {@code at} (a directory or {@code s3://} prefix). */
  public static void append(String at, S3Settings s3, Record r) {
    String name =
        r.start().toString().replace(':', '-') + "-" + r.kind() + "-"
            + r.library().replaceAll("[^A-Za-z0-9._-]", "_") + "-"
            + UUID.randomUUID().toString().substring(0, 8) + ".json";
    byte[] json;
    try {
      json = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(r.toJson());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    store(at, s3).put(name, json, json.length, "application/json");
  }

  /** The ledger's store: the {@value #DIRECTORY} directory (or prefix) at {@code at}. */
  private static Store store(String at, S3Settings s3) {
    return Location.of(at).child(DIRECTORY).directory(s3);
  }

  /** Every record at {@code at}, oldest first. */
  public static List<Record> read(String at, S3Settings s3) {
    List<Record> out = new ArrayList<>(stored(at, s3).keySet());
    out.sort(Comparator.comparing(Record::start));
    return out;
  }

  /**
   * Every record of every ledger at or beneath {@code at}, at any depth (a ledger lies beside
   * the images it records, as in {@code {library}/{library}-{utc}.bsave}), oldest first.
   */
  public static List<Record> readBeneath(String at, S3Settings s3) {
    List<Record> out = new ArrayList<>();
    // Through the store rooted at it: a directory is walked through handles, a prefix listed.
    Store store = Location.of(at).directory(s3);
    for (Store.Item item : store.list("")) {
      String k = item.key();
      int dir = k.lastIndexOf(DIRECTORY + "/");
      boolean inLedger = dir >= 0 && (dir == 0 || k.charAt(dir - 1) == '/')
          && k.indexOf('/', dir + DIRECTORY.length() + 1) < 0;
      if (inLedger && k.endsWith(".json")) {
        out.add(parse(store.get(k), store.where(k)));
      }
    }
    out.sort(Comparator.comparing(Record::start));
    return out;
  }

  /**
   * Removes the records at {@code at} of the image {@code where} (after the image itself was
   * deleted); returns how many.
   */
  public static int forget(String at, S3Settings s3, String where) {
    int n = 0;
    for (Map.Entry<Record, Runnable> e : stored(at, s3).entrySet()) {
      if (where.equals(e.getKey().where())) {
        e.getValue().run();
        n++;
      }
    }
    return n;
  }

  /** The records at {@code at}, each with what deletes it. */
  private static Map<Record, Runnable> stored(String at, S3Settings s3) {
    Map<Record, Runnable> out = new java.util.IdentityHashMap<>();
    Store store = store(at, s3);
    for (Store.Item item : store.list("")) {
      // Only records at the top: anything nested is not the ledger's.
      if (item.key().endsWith(".json") && !item.key().contains("/")) {
        out.put(parse(store.get(item.key()), store.where(item.key())),
            () -> store.delete(item.key()));
      }
    }
    return out;
  }

  private static Record parse(byte[] json, String where) {
    try {
      return Record.ofJson(JSON.readValue(json, java.util.Map.class));
    } catch (IOException | RuntimeException e) {
      throw new BeamsaveException(where + ": not a ledger record (" + e.getMessage() + ")");
    }
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }

  private static String or(String s, String otherwise) {
    return s != null ? s : otherwise;
  }
}
