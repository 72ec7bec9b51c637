package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.runner.Sizes;
import io.beamsave.pipelines.stored.ImageRef;
import io.beamsave.pipelines.verify.VerifyPipeline;
import io.beamsave.transforms.image.ImageEnds;
import io.beamsave.transforms.image.StructureCheck;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import io.beamsave.transforms.read.ImageChain;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code beamsave verify}: check a whole image, writing nothing. */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave verify /backup/data.bsave",
      "  beamsave verify s3://backups/nightly/data/latest --json",
      "%n" + PipelineArgs.BEAM_OPTIONS_HELP
    },
    description = {
      "Check an image: header, trailer and catalog, every block checksum and every file"
          + " digest. Writes nothing; exits non-zero naming the damaged shard, block or file.",
      "An encrypted image is checked with a key (--identity, --key-file, --password-file),"
          + " which also checks every authentication tag. Without any key, only its structure"
          + " and checksums are checked, which finds damage but not a deliberate change, and"
          + " the output says so."
    })
final class VerifyCommand implements Callable<Integer> {
  @Mixin ImageArgs image;

  @Option(
      names = "--chain",
      description =
          "Also check every image the image depends on (its bases, their bases, and so on),"
              + " each whole: everything its own shards hold, not only what this image"
              + " references. Without it, an incremental image's files are checked wherever"
              + " their bytes are.")
  boolean chain;

  @Option(
      names = "--read-data-subset",
      paramLabel = "n/t|x%|SIZE",
      description = "Read only some shards' data, as a check to run after every save: n/t the"
          + " n-th slice of t (t runs, n = 1..t, read every shard once, as restic's option of"
          + " the name does), x%% that share of the shards at random, SIZE shards at random"
          + " until their stored bytes reach it (500MiB). The catalog and the structure are"
          + " checked whole; the output says which slice, share or size, and how many of how"
          + " many shards were read.")
  String readDataSubset;

  @Mixin PipelineArgs pipeline;

  @Mixin ReadArgs read;

  @Mixin JsonOutput json;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter progress = pipeline.progress(spec.commandLine().getErr(), json);
    io.beamsave.pipelines.verify.ShardSubset subset = null;
    if (readDataSubset != null) {
      try {
        subset = io.beamsave.pipelines.verify.ShardSubset.parse(readDataSubset);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
    }
    VerifyPipeline.Outcome o;
    try (ImageRef ref = image.open(progress)) {
      ImageEnds.Trailer ends = ref.ends();
      if (ends.encrypted() && ref.keys().isEmpty()) {
        return withoutKey(ref, ends, progress);
      }
      o = VerifyPipeline.run(chain ? ref.readCatalogAhead() : ref, chain, subset,
          read.use(pipeline), pipeline::options, progress);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json.on()) {
      java.util.Map<String, Object> m = JsonOutput.object("summary");
      m.put("ok", true);
      m.put("image", image.image());
      m.put("files", o.files());
      m.put("bytesChecked", o.bytesChecked());
      m.put("shards", o.catalog().shards().size());
      m.put("unreadableEntries", o.unreadable());
      m.put("changedFiles", o.changedFiles());
      m.put("images", o.images().stream().map(i -> i.location()).toList());
      m.put("seconds", o.seconds());
      if (o.subset() != null) {
        m.put("subset", o.subset().toString());
        m.put("shardsRead", o.subset().chosenCount());
        m.put("shardsInAll", o.subset().universe());
      }
      json.emit(m);
      return 0;
    }
    if (o.subset() != null) {
      out.println(String.format(Locale.ROOT,
          "OK %s: a subset, %s: %s of file data, every block and digest checked in %.2fs;"
              + " the catalog (%s) checked whole",
          io.beamsave.transforms.Printable.text(image.image()), o.subset().describe(),
          Sizes.human(o.bytesChecked()), o.seconds(), Sizes.count(o.files(), "file", "files")));
    } else if (o.images().size() > 1) {
      int shards = o.images().stream().mapToInt(i -> i.catalog().shards().size()).sum();
      out.println(String.format(Locale.ROOT,
          "OK %s: %s, a tree of %s; %s checked in %s of %d images, every block and digest,"
              + " in %.2fs",
          io.beamsave.transforms.Printable.text(image.image()),
          Sizes.count(o.files(), "file", "files"), Sizes.human(o.catalog().rawBytes()),
          Sizes.human(o.bytesChecked()), Sizes.count(shards, "shard", "shards"),
          o.images().size(), o.seconds()));
    } else {
      out.println(String.format(Locale.ROOT,
          "OK %s: %s, %s in %s; every block and digest checked in %.2fs",
          io.beamsave.transforms.Printable.text(image.image()),
          Sizes.count(o.files(), "file", "files"),
          Sizes.human(o.bytesChecked()),
          Sizes.count(o.catalog().shards().size(), "shard", "shards"),
          o.seconds()));
    }
    if (o.images().size() > 1) {
      List<ImageChain.Member> bases = o.images().subList(1, o.images().size());
      out.println("chain: " + Sizes.count(bases.size(), "base image", "base images")
          + " checked whole too (each its own shards):");
      int shown = bases.size() <= 10 ? bases.size() : 3;
      for (ImageChain.Member b : bases.subList(0, shown)) {
        out.println("  " + io.beamsave.transforms.Printable.text(b.location()));
      }
      if (shown < bases.size()) {
        out.println("  ... and " + (bases.size() - shown) + " more, to "
            + io.beamsave.transforms.Printable.text(bases.get(bases.size() - 1).location()));
      }
    } else if (o.catalog().incremental()) {
      out.println("note: incremental image; its unchanged files were checked in "
          + o.catalog().bases().size() + " base image" + (o.catalog().bases().size() == 1 ? ""
              : "s") + " (--chain checks those images whole)");
    }
    if (o.changedFiles() > 0) {
      out.println("note: " + o.changedFiles() + " file(s) changed while they were being saved");
    }
    long unreadable = o.unreadable();
    if (unreadable > 0) {
      out.println("note: " + unreadable + " entr" + (unreadable == 1 ? "y" : "ies") + " could not"
          + " be read when saved and " + (unreadable == 1 ? "is" : "are") + " not wholly in the"
          + " image (marked ? in 'beamsave list')");
    }
    return 0;
  }

  /** An encrypted image and no key: what can be checked without one, said to be only that. */
  private int withoutKey(ImageRef ref, ImageEnds.Trailer ends, PrintWriter progress) {
    long start = System.nanoTime();
    StructureCheck.Result r = VerifyPipeline.checkStructure(ref, progress);
    double seconds = (System.nanoTime() - start) / 1e9;
    String recipients = ends.envelope().recipients();
    if (json.on()) {
      java.util.Map<String, Object> m = JsonOutput.object("summary");
      m.put("ok", true);
      m.put("image", image.image());
      m.put("encrypted", true);
      m.put("checked", "structure");
      m.put("recipients", recipients);
      m.put("frames", r.frames());
      m.put("bytesChecked", r.frameBytes());
      m.put("seconds", seconds);
      json.emit(m);
    } else {
      PrintWriter out = spec.commandLine().getOut();
      out.println(String.format(Locale.ROOT,
          "OK %s: structure and checksums of %d frames (%s) checked in %.2fs",
          io.beamsave.transforms.Printable.text(image.image()), r.frames(),
          Sizes.human(r.frameBytes()), seconds));
      out.println("note: encrypted (for " + recipients + ") and no key given: damage would have"
          + " been found, a deliberate change would not; the authentication tags and file"
          + " digests need a key (--identity, --key-file or --password-file)");
    }
    if (chain) {
      json.note("--chain: the images an encrypted image depends on are known by id only"
          + " without its key; none was checked");
    }
    return 0;
  }
}
