package io.beamsave.pipelines.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * What the build wrote into build.properties: beamsave's version (the release tarball's and the
 * container image's too) and the Beam and Flink it was built with.
 */
public final class BuildInfo implements IVersionProvider {
  private static final Properties BUILD = load();

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream("/io/beamsave/pipelines/build.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }

  /** beamsave's version, such as 0.2.0 (a snapshot build's ends in -SNAPSHOT). */
  public static String version() {
    return BUILD.getProperty("version", "unknown");
  }

  /** The Flink version beamsave's runner is built for, such as 1.20.5. */
  public static String flinkVersion() {
    return BUILD.getProperty("flink.version", "unknown");
  }

  @Override
  public String[] getVersion() {
    return new String[] {
      "beamsave " + version(),
      "Apache Beam " + BUILD.getProperty("beam.version", "?") + ", runs on Flink "
          + flinkVersion() + " clusters",
      "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")"
    };
  }
}
