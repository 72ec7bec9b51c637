package io.beamsave.pipelines.verify;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.transforms.image.catalog.ShardInfo;
import io.beamsave.transforms.read.ImageChain;
import io.beamsave.transforms.read.ReadTask;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which shards a sampled verify ({@code --read-data-subset}) reads: {@code n/t}, slice n of t
 * (shard i of the chain's j-th image is in slice {@code (i + j) mod t + 1}, so t runs, one per
 * slice, read every shard once); {@code x%}, that share of the shards chosen at random; {@code
 * SIZE}, shards chosen at random until their stored bytes reach SIZE. Only the pieces of files
 * in the chosen shards are checked; the catalog and every image's structure are checked whole.
 */
public final class ShardSubset {
  private static final Pattern SLICE = Pattern.compile("(\\d+)/(\\d+)");
  private static final Pattern SHARE = Pattern.compile("(\\d+(?:\\.\\d+)?)%");

  private final String spec;
  private final int n;
  private final int t;
  private final double percent;
  private final long bytes;
  private final long seed = new SecureRandom().nextLong();
  private Set<Key> chosen;
  private int universe;

  private record Key(String image, int shard) {}

  private ShardSubset(String spec, int n, int t, double percent, long bytes) {
    this.spec = spec;
    this.n = n;
    this.t = t;
    this.percent = percent;
    this.bytes = bytes;
  }

  /** Parses {@code n/t}, {@code x%} or a size; throws with what is wrong. */
  public static ShardSubset parse(String spec) {
    Matcher slice = SLICE.matcher(spec);
    if (slice.matches()) {
      int n = Integer.parseInt(slice.group(1));
      int t = Integer.parseInt(slice.group(2));
      if (t < 1 || n < 1 || n > t) {
        throw new IllegalArgumentException("--read-data-subset " + spec + ": n/t needs"
            + " 1 <= n <= t");
      }
      return new ShardSubset(spec, n, t, 0, 0);
    }
    Matcher share = SHARE.matcher(spec);
    if (share.matches()) {
      double p = Double.parseDouble(share.group(1));
      if (p <= 0 || p > 100) {
        throw new IllegalArgumentException("--read-data-subset " + spec + ": a share needs"
            + " more than 0% and at most 100%");
      }
      return new ShardSubset(spec, 0, 0, p, 0);
    }
    long size;
    try {
      size = Sizes.parse(spec);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--read-data-subset " + spec + ": give n/t (2/5),"
          + " a share (10%) or a size (50GiB)");
    }
    if (size <= 0) {
      throw new IllegalArgumentException("--read-data-subset " + spec + ": a size above 0");
    }
    return new ShardSubset(spec, 0, 0, 0, size);
  }

  /** Chooses among every shard of {@code members} (the chain's images, the image first). */
  void choose(List<ImageChain.Member> members) {
    List<Key> all = new ArrayList<>();
    List<Long> stored = new ArrayList<>();
    chosen = new HashSet<>();
    for (int j = 0; j < members.size(); j++) {
      List<ShardInfo> shards = members.get(j).catalog().shards();
      for (int i = 0; i < shards.size(); i++) {
        Key k = new Key(members.get(j).location(), i);
        all.add(k);
        stored.add(shards.get(i).storedLength());
        if (t > 0 && (i + j) % t == n - 1) {
          chosen.add(k);
        }
      }
    }
    universe = all.size();
    if (t > 0) {
      return;
    }
    // A random order of the shards, then a prefix of it.
    SplittableRandom random = new SplittableRandom(seed);
    List<Integer> order = new ArrayList<>();
    List<Long> rank = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      order.add(i);
      rank.add(random.nextLong());
    }
    order.sort(Comparator.comparing(rank::get));
    long want = percent > 0 ? (long) Math.ceil(all.size() * percent / 100) : Long.MAX_VALUE;
    long got = 0;
    for (int i : order) {
      if (chosen.size() >= want || (bytes > 0 && got >= bytes)) {
        break;
      }
      chosen.add(all.get(i));
      got += stored.get(i);
    }
  }

  /** The tasks that read chosen shards. */
  List<ReadTask> keep(List<ReadTask> tasks) {
    return tasks.stream().filter(x -> chosen.contains(new Key(x.image(), x.shard()))).toList();
  }

  /** Raw bytes of the pieces {@code tasks} read. */
  static long pieceBytes(List<ReadTask> tasks) {
    long sum = 0;
    for (ReadTask x : tasks) {
      for (var p : x.pieces()) {
        sum += p.extent().length();
      }
    }
    return sum;
  }

  /** What was chosen, in words: "slice 2 of 5: 3 of 14 shards". */
  public String describe() {
    String how = t > 0 ? "slice " + n + " of " + t
        : percent > 0 ? String.format(Locale.ROOT, "%s of the shards at random", spec)
        : "shards at random up to " + spec;
    return how + ": " + chosen.size() + " of " + Sizes.count(universe, "shard", "shards");
  }

  public int chosenCount() {
    return chosen.size();
  }

  public int universe() {
    return universe;
  }

  @Override
  public String toString() {
    return spec;
  }
}
