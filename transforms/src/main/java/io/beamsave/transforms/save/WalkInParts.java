package io.beamsave.transforms.save;

import io.beamsave.transforms.beam.DataCoder;
import io.beamsave.transforms.fs.Dir;
import io.beamsave.transforms.run.StageMetrics;
import io.beamsave.transforms.save.ListLibrary.Staged;
import io.beamsave.transforms.walk.LibraryWalker;
import io.beamsave.transforms.walk.Listing;
import io.beamsave.transforms.walk.Unreadable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@link ListLibrary}'s walk where the workers are not the command line's threads (Flink): each
 * library's top-level names cut into runs, the runs walked by the workers, each into a staged
 * stream of its own, and joined in order into the library's listing, so that a library of
 * millions of files is not one task's walk.
 */
final class WalkInParts {
  private WalkInParts() {}

  /** The listings of {@code spec}'s libraries, walked in parts after {@code start}. */
  static PCollection<KV<String, StagedListing>> walk(PCollection<byte[]> start, SaveSpec spec) {
    // Parts spread over the workers: a runner would otherwise walk them where they were cut.
    return start
        .apply("LibraryParts", ParDo.of(new LibraryPartsFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), Part.CODER))
        .apply("SpreadParts", Reshuffle.viaRandomKey())
        .apply("WalkPart", ParDo.of(new WalkPartFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), PartListing.CODER))
        .apply("GroupParts", GroupByKey.create())
        .apply("JoinParts", ParDo.of(new JoinPartsFn()));
  }

  /** Most parts a library is walked in: each is a task, and a staged stream of its own. */
  static final int MAX_PARTS = 16;

  /**
   * One part of a library to walk: the top-level names {@code top} covers, and where it stands
   * among the {@code of} parts.
   */
  record Part(int index, int of, LibraryWalker.TopNames top) {
    static final DataCoder<Part> CODER = new DataCoder<>() {
      @Override
      public void write(Part p, DataOutputStream out) throws IOException {
        out.writeInt(p.index);
        out.writeInt(p.of);
        DataCoder.writeOptional(out, p.top.from());
        DataCoder.writeOptional(out, p.top.to());
      }

      @Override
      public Part read(DataInputStream in) throws IOException {
        int index = in.readInt();
        int of = in.readInt();
        byte[] from = DataCoder.readOptional(in);
        byte[] to = DataCoder.readOptional(in);
        return new Part(index, of, from == null && to == null ? LibraryWalker.TopNames.ALL
            : new LibraryWalker.TopNames(from, to));
      }
    };
  }

  /** A part walked: its place among the library's parts, and its listing. */
  record PartListing(int index, int of, StagedListing listing) {
    static final DataCoder<PartListing> CODER = new DataCoder<>() {
      @Override
      public void write(PartListing p, DataOutputStream out) throws IOException {
        out.writeInt(p.index);
        out.writeInt(p.of);
        StagedListing.CODER.write(p.listing, out);
      }

      @Override
      public PartListing read(DataInputStream in) throws IOException {
        return new PartListing(in.readInt(), in.readInt(), StagedListing.CODER.read(in));
      }
    };
  }

  /**
   * Cuts each library into parts by the names at its top, as many names in each, so that the
   * workers walk a large library together: on Flink a library of millions of files is then
   * not one task's walk. The names are only listed here, not stat'ed; a library that cannot be
   * listed, holds one name, or is walked by --files-from is one part, whose walk says what it
   * meets. (Impulse and a DoFn rather than {@code Create.of}, which expands to a splittable
   * read of several steps that the DirectRunner's bookkeeping pays for.)
   */
  static final class LibraryPartsFn extends DoFn<byte[], KV<String, Part>> {
    private final SaveSpec spec;

    LibraryPartsFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(OutputReceiver<KV<String, Part>> out) {
      for (String name : spec.libraries().keySet()) {
        List<Part> parts = parts(spec, name);
        parts.forEach(p -> out.output(KV.of(name, p)));
      }
    }
  }

  /** The parts library {@code name} of {@code spec} is walked in. */
  static List<Part> parts(SaveSpec spec, String name) {
    List<Part> whole = List.of(new Part(0, 1, LibraryWalker.TopNames.ALL));
    if (spec.filesFrom(name) != null) {
      return whole;
    }
    List<byte[]> names;
    try (Dir dir = Dir.open(spec.library(name).readPath())) {
      names = new ArrayList<>(dir.list());
    } catch (IOException | RuntimeException e) {
      return whole;
    }
    names.sort(Arrays::compareUnsigned);
    int of = Math.min(names.size(), MAX_PARTS);
    if (of <= 1) {
      return whole;
    }
    List<Part> parts = new ArrayList<>(of);
    byte[] from = null;
    for (int i = 0; i < of; i++) {
      byte[] to = i + 1 < of ? names.get((int) ((long) (i + 1) * names.size() / of)) : null;
      parts.add(new Part(i, of, new LibraryWalker.TopNames(from, to)));
      from = to;
    }
    return parts;
  }

  /** Walks one part of a library and stages its entries as a stream of their own. */
  static final class WalkPartFn extends DoFn<KV<String, Part>, KV<String, PartListing>> {
    private final SaveSpec spec;
    private final Counter filesListed = StageMetrics.counter(StageMetrics.FILES_LISTED);
    private final Counter specialSkipped =
        StageMetrics.counter(StageMetrics.SPECIAL_FILES_SKIPPED);
    private final StageMetrics stage = StageMetrics.of("list");

    WalkPartFn(SaveSpec spec) {
      this.spec = spec;
    }

    private transient ForkJoinPool pool;

    @Setup
    public void setup() {
      pool = LibraryWalker.newPool();
    }

    @Teardown
    public void teardown() {
      if (pool != null) {
        pool.shutdownNow();
      }
    }

    @ProcessElement
    public void process(@Element KV<String, Part> part,
        OutputReceiver<KV<String, PartListing>> out) {
      stage.started();
      // Output and counters stay on this thread, because Beam's metrics and receivers belong
      // to it.
      String name = part.getKey();
      Part p = part.getValue();
      Staged w = ListLibrary.stage(pool, spec, name, p.top(),
          p.of() == 1 ? Staging.walkName(name) : Staging.walkName(name) + "-" + p.index());
      out.output(KV.of(name, new PartListing(p.index(), p.of(), w.listing())));
      filesListed.inc(w.listing().files());
      specialSkipped.inc(w.walked().special());
      ListLibrary.countExcluded(w.walked().excluded());
      stage.finished();
    }
  }

  /** Joins the parts of each library, in order, into its listing. */
  static final class JoinPartsFn
      extends DoFn<KV<String, Iterable<PartListing>>, KV<String, StagedListing>> {
    @ProcessElement
    public void process(@Element KV<String, Iterable<PartListing>> parts,
        OutputReceiver<KV<String, StagedListing>> out) {
      out.output(KV.of(parts.getKey(), join(parts.getKey(), parts.getValue())));
    }
  }

  /**
   * The listing of library {@code name} whose parts are {@code parts}: their entries one part
   * after another, which is path order, since each part is a run of the names at the top; the
   * root as the first part found it; what no part could read, once each.
   */
  static StagedListing join(String name, Iterable<PartListing> parts) {
    List<PartListing> sorted = new ArrayList<>();
    parts.forEach(sorted::add);
    sorted.sort(java.util.Comparator.comparingInt(PartListing::index));
    for (int i = 0; i < sorted.size(); i++) {
      if (sorted.get(i).index() != i || sorted.get(i).of() != sorted.size()) {
        throw new IllegalStateException(name + ": walked parts " + sorted.stream()
            .map(p -> p.index() + "/" + p.of()).toList() + ", not each of them once");
      }
    }
    if (sorted.size() == 1) {
      return sorted.get(0).listing();
    }
    List<StagedListing.Segment> segments = new ArrayList<>();
    Map<io.beamsave.transforms.image.catalog.PathBytes, Unreadable> unreadable =
        new java.util.TreeMap<>();
    long entries = 0;
    long files = 0;
    long raw = 0;
    for (PartListing p : sorted) {
      StagedListing l = p.listing();
      segments.addAll(l.segments());
      l.head().unreadable().forEach(u -> unreadable.putIfAbsent(u.path(), u));
      entries += l.entries();
      files += l.files();
      raw += l.rawBytes();
    }
    Listing first = sorted.get(0).listing().head();
    Listing head = new Listing(first.root(), List.copyOf(unreadable.values()), List.of());
    return new StagedListing(head, segments, entries, files, raw, 0);
  }
}
