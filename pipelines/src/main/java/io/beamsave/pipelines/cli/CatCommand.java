package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.fs.Removal;
import io.beamsave.transforms.image.catalog.CatalogHead;
import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.EntryType;
import io.beamsave.transforms.image.catalog.PathBytes;
import io.beamsave.transforms.read.FileReads;
import io.beamsave.transforms.read.ImageChain;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** {@code beamsave cat}: one file's bytes, to stdout. */
@Command(
    name = "cat",
    mixinStandardHelpOptions = true,
    description =
        "Write the bytes of the file at PATH in the image to stdout (or --output), reading the"
            + " catalog page that holds it and the blocks that hold its bytes, in the image or"
            + " its bases; every block and extent is checked as it is read. A damaged block"
            + " ends the output with an error.",
    footer = {
      "%nExamples:",
      "  beamsave cat /backup/data/latest etc/fstab",
      "  beamsave cat s3://backups/nightly/data/latest home/alice/notes.txt | less",
      "  beamsave cat /backup/data.bsave db/dump.sql.zst --output /tmp/dump.sql.zst"
    })
final class CatCommand implements Callable<Integer> {
  @Mixin ImageArgs image;

  @Parameters(index = "1", arity = "0..1", paramLabel = "PATH",
      description = "The file, as 'list' prints its path (a byte that is not UTF-8 as \\xNN).")
  String path;

  @Option(names = {"-o", "--output"}, paramLabel = "FILE",
      description = "Write to FILE (which must not exist) instead of stdout.")
  Path output;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    String shifted = image.shiftedPositional();
    if (shifted != null && path == null) {
      path = shifted;
    }
    if (path == null) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "Missing required parameter: 'PATH'");
    }
    PathBytes wanted = ListCommand.parsePath(path);
    try (ImageRef ref = image.open(spec.commandLine().getErr())) {
      CatalogHead head = ref.head();
      Entry e = one(ref, head, wanted);
      if (e.isHardLink()) {
        Entry first = e.linkTarget() == null ? null : one(ref, head, e.linkTarget());
        if (first == null || !first.isFile()) {
          throw new BeamsaveException(ref.display() + ": " + wanted + " is a later name of "
              + e.linkTarget() + ", which is no file of the image");
        }
        e = first;
      }
      if (path.endsWith("/") && e.type() != EntryType.DIRECTORY) {
        throw new BeamsaveException(wanted + " is not a directory");
      }
      switch (e.type()) {
        case FILE -> { }
        case DIRECTORY -> throw new BeamsaveException(wanted + " is a directory");
        case SYMLINK -> throw new BeamsaveException(wanted + " is a symbolic link to "
            + e.linkTarget() + "; cat the path it names");
        default -> throw new BeamsaveException(wanted + " is a " + ListCommand.kind(e)
            + ": it holds no bytes");
      }
      if (e.unreadable()) {
        throw new BeamsaveException(wanted + " could not be read when it was saved: the image"
            + " holds none of its bytes");
      }
      ImageChain chain = ImageChain.resolve(ref.member(head.catalog()), List.of(e), ref.s3(),
          ref.keys(), ref.baseLocations());
      OutputStream out = new BufferedOutputStream(new Written(open(), output != null), 1 << 16);
      try (out; FileReads reads = new FileReads(chain, ref.s3(), 0)) {
        reads.copy(e, out);
      } catch (IOException | RuntimeException failed) {
        if (output != null) {
          // No partial file where a whole one is expected.
          Removal.file(output);
        }
        if (failed instanceof WriteFailed w) {
          if (output == null && "Broken pipe".equals(w.getCause().getMessage())) {
            // The reader had enough (cat ... | head): an end, not an error.
            return SIGPIPE_EXIT;
          }
          throw new BeamsaveException("cannot write " + (output == null ? "to stdout"
              : output.toString()) + ": " + w.getCause().getMessage());
        }
        throw failed;
      }
    }
    return 0;
  }

  /** What a process killed by SIGPIPE exits with, as a shell reports it. */
  static final int SIGPIPE_EXIT = 141;

  /** A failure to write the output, told from a failure to read the image. */
  private static final class WriteFailed extends RuntimeException {
    WriteFailed(IOException cause) {
      super(cause);
    }
  }

  /** The output, its write failures marked as such; stdout is flushed, not closed. */
  private static final class Written extends OutputStream {
    private final OutputStream to;
    private final boolean closes;

    Written(OutputStream to, boolean closes) {
      this.to = to;
      this.closes = closes;
    }

    @Override
    public void close() {
      try {
        if (closes) {
          to.close();
        } else {
          to.flush();
        }
      } catch (IOException e) {
        throw new WriteFailed(e);
      }
    }

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      try {
        to.write(b, off, len);
      } catch (IOException e) {
        throw new WriteFailed(e);
      }
    }
  }

  private Entry one(ImageRef ref, CatalogHead head, PathBytes p) {
    List<Entry> found = ref.find(List.of(p), head);
    if (found.isEmpty()) {
      throw new BeamsaveException(image.image() + " holds no entry '" + p + "'");
    }
    return found.get(0);
  }

  private OutputStream open() throws IOException {
    if (output == null) {
      // Bytes, not characters: stdout itself, not the command's writer.
      return new FileOutputStream(FileDescriptor.out);
    }
    try {
      return Files.newOutputStream(output, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE);
    } catch (java.nio.file.FileAlreadyExistsException e) {
      throw new BeamsaveException(output + " exists; name another file");
    } catch (java.nio.file.NoSuchFileException e) {
      throw new BeamsaveException("cannot create " + output + ": its directory does not exist");
    } catch (IOException e) {
      throw BeamsaveException.io("cannot create", output, e);
    }
  }
}
