package io.beamsave.transforms.io;

import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.image.Entry;
import io.beamsave.transforms.image.EntryType;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Walks each library of a {@link SaveSpec} and emits its entries (files, directories, symlinks;
 * never following links) in batches keyed by library name. Every library yields at least one
 * batch, so an empty library still gets an image. Special files are skipped with a warning.
 *
 * <p>Counters: {@code filesListed}, {@code specialFilesSkipped}. Fails, naming the path, when a
 * directory cannot be listed or a file cannot be read.
 */
public final class ListLibrary extends PTransform<PBegin, PCollection<KV<String, EntryBatch>>> {
  static final int BATCH_SIZE = 4096;

  private final SaveSpec spec;

  private ListLibrary(SaveSpec spec) {
    this.spec = spec;
  }

  public static ListLibrary of(SaveSpec spec) {
    return new ListLibrary(spec);
  }

  @Override
  public PCollection<KV<String, EntryBatch>> expand(PBegin input) {
    return input
        .apply("LibraryNames", Create.of(List.copyOf(spec.libraries().keySet())))
        .apply("Walk", ParDo.of(new ListLibraryFn(spec)))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), EntryBatch.CODER));
  }

  static final class ListLibraryFn extends DoFn<String, KV<String, EntryBatch>> {
    private static final Logger LOG = LoggerFactory.getLogger(ListLibraryFn.class);
    private final SaveSpec spec;
    private final Counter filesListed = StageMetrics.counter(StageMetrics.FILES_LISTED);
    private final Counter specialSkipped =
        StageMetrics.counter(StageMetrics.SPECIAL_FILES_SKIPPED);
    private final StageMetrics stage = StageMetrics.of("list");

    ListLibraryFn(SaveSpec spec) {
      this.spec = spec;
    }

    @ProcessElement
    public void process(@Element String name, OutputReceiver<KV<String, EntryBatch>> out) {
      stage.started();
      Path root = Path.of(spec.library(name).root());
      List<Entry> batch = new ArrayList<>(BATCH_SIZE);
      try {
        Files.walkFileTree(
            root,
            new SimpleFileVisitor<>() {
              @Override
              public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                  throws IOException {
                if (!dir.equals(root)) {
                  add(dir, attrs);
                }
                return FileVisitResult.CONTINUE;
              }

              @Override
              public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                  throws IOException {
                if (attrs.isOther()) {
                  specialSkipped.inc();
                  LOG.warn("skipping special file (fifo, socket or device): {}", file);
                  return FileVisitResult.CONTINUE;
                }
                if (attrs.isRegularFile() && !Files.isReadable(file)) {
                  throw new BeamsaveException("cannot read " + file + ": permission denied");
                }
                add(file, attrs);
                return FileVisitResult.CONTINUE;
              }

              @Override
              public FileVisitResult visitFileFailed(Path file, IOException e) {
                throw BeamsaveException.io("cannot read", file, e);
              }

              @Override
              public FileVisitResult postVisitDirectory(Path dir, IOException e) {
                if (e != null) {
                  throw BeamsaveException.io("cannot list", dir, e);
                }
                return FileVisitResult.CONTINUE;
              }

              private void add(Path p, BasicFileAttributes attrs) throws IOException {
                batch.add(entry(root, p, attrs));
                if (attrs.isRegularFile()) {
                  filesListed.inc();
                }
                if (batch.size() == BATCH_SIZE) {
                  out.output(KV.of(name, new EntryBatch(List.copyOf(batch))));
                  batch.clear();
                }
              }
            });
      } catch (IOException e) {
        throw BeamsaveException.io("cannot list", root, e);
      }
      out.output(KV.of(name, new EntryBatch(List.copyOf(batch))));
      stage.finished();
    }
  }

  /** The catalog entry for {@code p}, read without following links. */
  static Entry entry(Path root, Path p, BasicFileAttributes attrs) throws IOException {
    Map<String, Object> unix =
        Files.readAttributes(p, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
    String rel = root.relativize(p).toString();
    if (p.getFileSystem().getSeparator().equals("\\")) {
      rel = rel.replace('\\', '/');
    }
    FileTime mtime = attrs.lastModifiedTime();
    Instant t = mtime.toInstant();
    EntryType type;
    String target = null;
    long size = 0;
    if (attrs.isSymbolicLink()) {
      type = EntryType.SYMLINK;
      target = Files.readSymbolicLink(p).toString();
    } else if (attrs.isDirectory()) {
      type = EntryType.DIRECTORY;
    } else {
      type = EntryType.FILE;
      size = attrs.size();
    }
    return new Entry(
        rel,
        type,
        0,
        ((Integer) unix.get("mode")) & 07777,
        (Integer) unix.get("uid"),
        (Integer) unix.get("gid"),
        t.getEpochSecond(),
        t.getNano(),
        size,
        target,
        List.of());
  }
}
