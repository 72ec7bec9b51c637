package io.beamsave.transforms.consolidate;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.ShardReader;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.Extent;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadTask;
import io.beamsave.transforms.shard.ShardPlanner;
import io.beamsave.transforms.sink.ImageSink;
import io.beamsave.transforms.sink.StoreImageSink;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a chain becomes one self-contained image (plain Java, deterministic): which shards of the
 * chain's images are taken whole and which pieces are rewritten, and the newest image's catalog
 * with every extent renumbered into the new image's shards. Digests stay as they are: every
 * extent keeps its bytes, only where they lie changes.
 *
 * <p>A source shard is taken whole when the newest catalog's extents in it cover at least {@code
 * minLive} of its raw bytes and its image has the output's block size (block {@code k} must hold
 * raw bytes {@code [k*B, (k+1)*B)}): its blocks, whatever codec each records, are copied as they
 * are, with the bytes of files changed or deleted since (dead bytes no extent names, which no
 * reader visits). A chain whose files changed here and there leaves some dead bytes in nearly
 * every shard: copying only fully live shards would read and recompress almost everything. Any
 * other
 * shard holding a referenced byte has only those pieces read and compressed again, packed in
 * chain order into new shards of at most the shard size. The rewritten shards come first: in
 * object storage they go, with the header, into the upload's first part, and each whole shard
 * of 5 MiB or more of the same bucket into a part of its own, copied by the store ({@link
 * StoreImageSink#canCopy}).
 *
 * <p>{@code tasks} are empty in the copy the assembling step carries.
 */
public record ConsolidatePlan(
    List<ConsolidateTask> tasks,
    String library,
    String codecSpec,
    long createdMillis,
    int blockSize,
    long shardSize,
    Entry root,
    List<Entry> entries,
    ImageId id,
    ImageId origin,
    java.util.Map<String, String> notes,
    int shardCount,
    long deadBytes)
    implements Serializable {

  /** The share of a shard still referenced at which it is copied whole by default. */
  public static final double DEFAULT_MIN_LIVE = 0.5;

  /**
   * Plans the image of {@code newest} (the chain's member 0) whose extents {@code chain} has
   * opened the images of, written to {@code sink}, its new shards compressed with {@code
   * codecSpec}.
   */
  public static ConsolidatePlan of(
      ImageChain chain, Catalog newest, String codecSpec, ImageSink sink, double minLive) {
    return of(chain, newest, codecSpec, sink, minLive, ShardPlanner.MAX_PIECE_BYTES);
  }

  /** Like the above, a rewritten shard's pieces taking at most {@code maxDescribed} bytes. */
  static ConsolidatePlan of(ImageChain chain, Catalog newest, String codecSpec, ImageSink sink,
      double minLive, long maxDescribed) {
    if (!(minLive > 0 && minLive <= 1)) {
      throw new IllegalArgumentException("the live share of a copied shard is in (0, 1]");
    }
    int blockSize = newest.blockSize();
    // The largest shard of any image of the chain: a small incremental's shards are sized to
    // share its few new bytes among the workers, not to bound what consolidation repacks.
    long shardSize = newest.shardSize();
    for (ImageChain.Member m : chain.opened()) {
      shardSize = Math.max(shardSize, m.catalog().shardSize());
    }
    List<Entry> entries = newest.entries();
    // Every referenced piece, by (image, shard), as (entry, extent) indices.
    Map<Long, List<int[]>> byShard = new TreeMap<>();
    for (int i = 0; i < entries.size(); i++) {
      List<Extent> xs = entries.get(i).extents();
      for (int j = 0; j < xs.size(); j++) {
        Extent x = xs.get(j);
        byShard.computeIfAbsent(((long) x.image() << 32) | x.shard(), k -> new ArrayList<>())
            .add(new int[] {i, j});
      }
    }
    record Source(ImageChain.Member member, int shard, List<int[]> refs, long referenced) {}
    List<Source> whole = new ArrayList<>();
    List<Source> partial = new ArrayList<>();
    for (Map.Entry<Long, List<int[]>> e : byShard.entrySet()) {
      int image = (int) (e.getKey() >>> 32);
      int shard = (int) (long) e.getKey();
      ImageChain.Member m = chain.member(image);
      if (m == null) {
        throw new IllegalStateException("image " + image + " of the chain was not opened");
      }
      List<int[]> refs = e.getValue();
      refs.sort(Comparator.comparingLong(r -> extent(entries, r).offset()));
      long end = 0;
      long sum = 0;
      for (int[] r : refs) {
        Extent x = extent(entries, r);
        if (x.offset() < end) {
          throw new BeamsaveException(newest.library() + ": catalog: file "
              + entries.get(r[0]).path() + " shares bytes of shard " + shard + " of "
              + m.location() + " with another file");
        }
        end = x.offset() + x.length();
        sum += x.length();
      }
      ShardInfo info = m.catalog().shards().get(shard);
      // Frames are copied as they are only into an image sealed as they are (or plain as they
      // are); anything else is rewritten.
      boolean all = sum >= Math.ceil(minLive * info.rawLength())
          && m.catalog().blockSize() == blockSize
          && m.catalog().encrypted() == (sink.key() != null);
      (all ? whole : partial).add(new Source(m, shard, refs, sum));
    }

    Extent[][] renumbered = new Extent[entries.size()][];
    for (int i = 0; i < entries.size(); i++) {
      renumbered[i] = new Extent[entries.get(i).extents().size()];
    }
    long dead = 0;
    for (Source w : whole) {
      dead += w.member().catalog().shards().get(w.shard()).rawLength() - w.referenced();
    }
    List<ConsolidateTask> tasks = new ArrayList<>();
    // Rewritten pieces, packed into shards of at most shardSize raw bytes whose pieces take at
    // most what a save's shard may take to describe (ShardPlanner): a worker holds them. A
    // source shard's pieces stay together, so one larger makes one shard of its own.
    List<ReadTask> group = new ArrayList<>();
    long groupRaw = 0;
    long groupDescribed = 0;
    for (Source s : partial) {
      long described = 0;
      for (int[] r : s.refs()) {
        described += ShardPlanner.pieceBytes(entries.get(r[0]).path().length());
      }
      if (!group.isEmpty() && (groupRaw + s.referenced() > shardSize
          || groupDescribed + described > maxDescribed)) {
        tasks.add(new ConsolidateTask(ConsolidateTask.Kind.REWRITE, tasks.size(), group));
        group = new ArrayList<>();
        groupRaw = 0;
        groupDescribed = 0;
      }
      groupDescribed += described;
      List<ShardReader.FileExtent> pieces = new ArrayList<>(s.refs().size());
      long at = groupRaw;
      for (int[] r : s.refs()) {
        Extent x = extent(entries, r);
        pieces.add(new ShardReader.FileExtent(entries.get(r[0]).path(), fileOffset(entries, r), x, 0));
        renumbered[r[0]][r[1]] = new Extent(0, tasks.size(), at, x.length(), x.digest());
        at += x.length();
      }
      group.add(readTask(s.member(), s.shard(), pieces));
      groupRaw += s.referenced();
    }
    if (!group.isEmpty()) {
      tasks.add(new ConsolidateTask(ConsolidateTask.Kind.REWRITE, tasks.size(), group));
    }
    for (Source s : whole) {
      int shard = tasks.size();
      ShardInfo info = s.member().catalog().shards().get(s.shard());
      boolean inStore = sink instanceof StoreImageSink store
          && store.canCopy(shard, s.member().location(), info.storedLength());
      // The pieces go with the copy so that its worker checks their digests before the bytes
      // become the new image's: a base damaged at rest must fail here, not in the image made.
      List<ShardReader.FileExtent> pieces = new ArrayList<>(s.refs().size());
      for (int[] r : s.refs()) {
        Extent x = extent(entries, r);
        pieces.add(new ShardReader.FileExtent(entries.get(r[0]).path(), fileOffset(entries, r), x, 0));
        renumbered[r[0]][r[1]] = new Extent(0, shard, x.offset(), x.length(), x.digest());
      }
      tasks.add(new ConsolidateTask(
          inStore ? ConsolidateTask.Kind.COPY_IN_STORE : ConsolidateTask.Kind.COPY, shard,
          List.of(readTask(s.member(), s.shard(), pieces)),
          rewrapped(s.member(), s.shard(), info, sink.key())));
    }
    if (tasks.size() > sink.maxShards()) {
      throw new BeamsaveException(sink.location() + ": " + tasks.size() + " shards are more than"
          + " the " + sink.maxShards() + " this image can hold");
    }
    List<Entry> out = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      out.add(e.extents().isEmpty() ? e : e.withExtents(List.of(renumbered[i])));
    }
    return new ConsolidatePlan(tasks, newest.library(), codecSpec, newest.createdMillis(),
        blockSize, shardSize, newest.root(), out,
        sink.key() != null ? sink.key().id() : ImageId.random(), newest.id(), newest.notes(),
        tasks.size(), dead);
  }

  /**
   * The key of a copied shard of an encrypted image, unwrapped with its image's key and wrapped
   * with the new image's; null for a plain one.
   */
  private static byte[] rewrapped(ImageChain.Member m, int shard, ShardInfo info,
      ImageKey into) {
    if (info.sealedKey() == null) {
      return null;
    }
    byte[] key = m.catalog().key().unwrap(info.sealedKey(), ImageKey.SHARD);
    if (key == null) {
      throw new BeamsaveException(m.location() + ": shard " + shard + ": its key does not"
          + " authenticate (the shard table was changed: tampered)");
    }
    return into.wrap(key, ImageKey.SHARD);
  }

  private static Extent extent(List<Entry> entries, int[] ref) {
    return entries.get(ref[0]).extents().get(ref[1]);
  }

  private static long fileOffset(List<Entry> entries, int[] ref) {
    long off = 0;
    List<Extent> xs = entries.get(ref[0]).extents();
    for (int j = 0; j < ref[1]; j++) {
      off += xs.get(j).length();
    }
    return off;
  }

  private static ReadTask readTask(
      ImageChain.Member m, int shard, List<ShardReader.FileExtent> pieces) {
    return new ReadTask(m.location(), m.catalog().blockSize(), shard,
        m.catalog().shards().get(shard), pieces);
  }

  /** This plan without its tasks: what assembling the image needs. */
  public ConsolidatePlan withoutTasks() {
    return new ConsolidatePlan(List.of(), library, codecSpec, createdMillis, blockSize, shardSize,
        root, entries, id, origin, notes, shardCount, deadBytes);
  }

  /**
   * The consolidated image's catalog, its shards where the sink put them: a full image (depth
   * 0, no bases) that stands for the same point in time as the newest image it was folded from.
   */
  public Catalog catalog(List<ShardInfo> shards) {
    return new Catalog(library, codecSpec, createdMillis, blockSize, shardSize, root, entries,
        shards).withIdentity(id, origin, 0, List.of()).withNotes(notes);
  }

  /** Stored bytes, and shards, the plan takes of each kind. */
  public long storedBytes(ConsolidateTask.Kind kind) {
    long n = 0;
    for (ConsolidateTask t : tasks) {
      if (t.kind() == kind) {
        n += kind == ConsolidateTask.Kind.REWRITE ? 0 : t.source().info().storedLength();
      }
    }
    return n;
  }

  public int shards(ConsolidateTask.Kind kind) {
    return (int) tasks.stream().filter(t -> t.kind() == kind).count();
  }

  public long rawBytes() {
    return tasks.stream().mapToLong(ConsolidateTask::rawBytes).sum();
  }

  /** Raw bytes the plan puts into shards of {@code kind}. */
  public long rawBytes(ConsolidateTask.Kind kind) {
    return tasks.stream().filter(t -> t.kind() == kind).mapToLong(ConsolidateTask::rawBytes)
        .sum();
  }
}
