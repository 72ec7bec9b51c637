package io.beamsave.pipelines.cli;

import io.beamsave.transforms.codec.Codecs;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code beamsave codecs}: the codecs and the IBM i DTACPR table. */
@Command(
    name = "codecs",
    mixinStandardHelpOptions = true,
    footer = {
      "%nExamples:",
      "  beamsave codecs"
    },
    description = "List the codecs and the IBM i SAVLIB DTACPR names mapped to them.")
final class CodecsCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    out.println("codec         levels  default  library");
    out.println("none          -       -        (blocks stored raw)");
    out.println("lz4           -       -        lz4-java, LZ4 block format");
    out.println("zlib[:N]      1-9     " + Codecs.DEFAULT_ZLIB_LEVEL + "        JDK Deflater, zlib streams");
    out.println("zstd[:N]      1-22    " + Codecs.DEFAULT_ZSTD_LEVEL + "        zstd-jni, Zstandard frames");
    out.println("xz[:N]        0-9     " + Codecs.DEFAULT_XZ_PRESET + "        tukaani xz, .xz streams");
    out.println("auto[:MBPS]   link    none     per block: raw if a trial finds it incompressible,");
    out.println("                               else lz4 or zstd:1-19, the level that keeps the");
    out.println("                               cores and a link of MBPS Mbit/s equally busy");
    out.println("                               (save --link-mbps sets MBPS; none: fastest level)");
    out.println();
    out.println("IBM i DTACPR  codec");
    for (Map.Entry<String, String> e : Codecs.dtacprAliases().entrySet()) {
      out.printf("%-12s  %s%n", e.getKey(), e.getValue());
    }
    out.println();
    out.println("Every codec stores a block raw when it would not shrink, and all-zero blocks as");
    out.println("holes; each block records the codec it used.");
    return 0;
  }
}
