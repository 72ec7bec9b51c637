package io.beamsave.pipelines.compare;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What this JVM has used so far: CPU seconds of all its threads, and the read and write calls
 * and the storage bytes the kernel counted for it ({@code /proc/self/io}; -1 where there is
 * none). bench and compare run their pipelines in-process, so the difference across one run is
 * that run's cost, the runner's worker threads included.
 *
 * <p>CPU is measured because elapsed time hides it: z/VM DDR's LZCOMPACT cut restore CPU by 81 %
 * while elapsed time barely moved. Calls are counted because their number, not only the bytes,
 * sets elapsed time: 512-byte blocks took 453,000 I/Os on z/OS against 16,774 for half-track.
 */
public record ProcessUsage(
    double cpuSeconds, long readCalls, long writeCalls, long readBytes, long writeBytes) {
  private static final Path IO = Path.of("/proc/self/io");

  /** The usage up to now. */
  public static ProcessUsage now() {
    long[] io = io();
    return new ProcessUsage(cpuNanos() / 1e9, io[0], io[1], io[2], io[3]);
  }

  /** What was used since {@code before}; a figure unknown in either stays -1. */
  public ProcessUsage since(ProcessUsage before) {
    return new ProcessUsage(
        cpuSeconds < 0 || before.cpuSeconds < 0 ? -1 : cpuSeconds - before.cpuSeconds,
        delta(readCalls, before.readCalls),
        delta(writeCalls, before.writeCalls),
        delta(readBytes, before.readBytes),
        delta(writeBytes, before.writeBytes));
  }

  /** The mean of each figure over {@code all}, or null when there are none. */
  static ProcessUsage average(List<ProcessUsage> all) {
    List<ProcessUsage> known = all.stream().filter(u -> u != null).toList();
    if (known.isEmpty()) {
      return null;
    }
    return new ProcessUsage(
        known.stream().mapToDouble(ProcessUsage::cpuSeconds).average().orElse(-1),
        Math.round(known.stream().mapToLong(ProcessUsage::readCalls).average().orElse(-1)),
        Math.round(known.stream().mapToLong(ProcessUsage::writeCalls).average().orElse(-1)),
        Math.round(known.stream().mapToLong(ProcessUsage::readBytes).average().orElse(-1)),
        Math.round(known.stream().mapToLong(ProcessUsage::writeBytes).average().orElse(-1)));
  }

  private static long delta(long now, long before) {
    return now < 0 || before < 0 ? -1 : now - before;
  }

  private static long cpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  /** syscr, syscw, read_bytes, write_bytes; -1 for each the kernel does not give. */
  private static long[] io() {
    long[] v = {-1, -1, -1, -1};
    List<String> lines;
    try {
      lines = Files.readAllLines(IO);
    } catch (IOException | SecurityException e) {
      // Not Linux, or a kernel without task I/O accounting: the counts are unknown, not zero.
      return v;
    }
    for (String line : lines) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        continue;
      }
      int at = List.of("syscr", "syscw", "read_bytes", "write_bytes")
          .indexOf(line.substring(0, colon));
      if (at >= 0) {
        v[at] = Long.parseLong(line.substring(colon + 1).trim());
      }
    }
    return v;
  }
}
