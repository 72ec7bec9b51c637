package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.S3TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No secret ever leaves the process: every command that takes a key runs as its own process,
 * with a recognizable password in the environment and in a file, a recognizable key file and an
 * identity, verbosely and as JSON, on the DirectRunner and on Flink; nothing it prints, no
 * report, metrics file or ledger record, and no object it stores, holds any of them.
 */
class SecretsIT {
  @TempDir Path dir;

  static final String PASSWORD = "Pa55-recognizable-Env-Zebra";
  static final String NEW_PASSWORD = "Pa55-recognizable-File-Quokka";
  static final String KEY_HEX = "5ec2e75ec2e75ec2e75ec2e75ec2e75e" + "c2e75ec2e75ec2e75ec2e75ec2e75ec2";

  @Test
  void noCommandPrintsLogsOrStoresAPasswordOrKey() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Trees.mixedData(lib, 6L << 20);
    Path keyFile = Files.writeString(dir.resolve("key"), KEY_HEX + "\n");
    Path newPassword = Files.writeString(dir.resolve("new-password"), NEW_PASSWORD + "\n");
    Path images = Files.createDirectories(dir.resolve("images"));
    Path identity = dir.resolve("me.id");
    List<String> printed = new ArrayList<>();
    Map<String, String> env = Map.of("BEAMSAVE_PASSWORD", PASSWORD);
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")),
        "backups")) {
      Map<String, String> all = new java.util.HashMap<>(env);
      all.put("AWS_ACCESS_KEY_ID", S3TestServer.ACCESS_KEY);
      all.put("AWS_SECRET_ACCESS_KEY", S3TestServer.SECRET_KEY);
      String s3 = "http://127.0.0.1:" + server.port();
      String pub = run(printed, all, 0, "keygen", "--identity", identity).out().strip();
      Path image = images.resolve("lib.bsave");
      run(printed, all, 0, "save", "--library", lib, "--image", image, "--key-file", keyFile,
          "--recipient", pub, "--verbose", "--report-json", dir.resolve("report.json"),
          "--metrics-file", dir.resolve("save.prom"));
      run(printed, all, 0, "save", "--library", lib, "--image",
          "s3://backups/n/{library}-{utc}.bsave", "--key-file", keyFile, "--json",
          "--s3-endpoint", s3, "--verbose");
      run(printed, all, 0, "save", "--library", lib, "--image", images.resolve("flink.bsave"),
          "--identity", identity, "--verbose", "--", "--runner=FlinkRunner",
          "--flinkMaster=[local]", "--parallelism=2");
      run(printed, all, 0, "list", image, "--verbose", "--json");
      run(printed, all, 0, "verify", image, "--verbose", "--json");
      run(printed, all, 0, "verify", image, "--key-file", keyFile, "--verbose");
      run(printed, all, 0, "images", "--at", images, "--verbose", "--json");
      run(printed, all, 0, "history", "--at", images, "--verbose", "--json");
      run(printed, all, 0, "list", "s3://backups/n/latest", "--s3-endpoint", s3, "--verbose");
      run(printed, all, 0, "restore", image, "--target", dir.resolve("r"), "--identity",
          identity, "--verbose");
      run(printed, all, 0, "consolidate", image, "--to", images.resolve("full.bsave"),
          "--drop-recipients", "--verbose");
      run(printed, all, 0, "rekey", images.resolve("full.bsave"), "--add-password-file",
          newPassword, "--verbose");
      run(printed, Map.of(), 0, "list", images.resolve("full.bsave"), "--password-file",
          newPassword);
      run(printed, all, 0, "upload", "--from", image, "--to", "s3://backups/up/lib.bsave",
          "--s3-endpoint", s3, "--verbose");
      run(printed, all, 0, "download", "--from", "s3://backups/up/lib.bsave", "--to",
          dir.resolve("down.bsave"), "--s3-endpoint", s3, "--verbose");
      run(printed, all, 0, "prune", "--at", images, "--keep-last", "1", "--verbose");
      // Failures say what is wrong without repeating what was given.
      run(printed, Map.of("BEAMSAVE_PASSWORD", PASSWORD + "-wrong"), 1, "list", image,
          "--verbose");
      run(printed, Map.of(), 1, "restore", image, "--target", dir.resolve("r2"), "--key-file",
          newPassword, "--verbose");
      run(printed, Map.of(), 1, "list", image, "--identity", keyFile, "--verbose");
      // A password is never an argument, where the process list would show it.
      run(printed, Map.of(), 2, "save", "--library", lib, "--image", images.resolve("x.bsave"),
          "--password", PASSWORD);
      run(printed, Map.of(), 2, "list", image, "--password", PASSWORD);
    }
    List<Path> files = new ArrayList<>(List.of(dir.resolve("report.json"),
        dir.resolve("save.prom")));
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.filter(Files::isRegularFile)
          .filter(p -> p.toString().contains("beamsave-ledger") || p.toString().endsWith(".bsave")
              || p.startsWith(dir.resolve("s3")))
          .forEach(files::add);
    }
    assertThat(files).anyMatch(p -> p.toString().contains("beamsave-ledger"));
    List<String> secrets = secrets(identity);
    for (String text : printed) {
      for (String secret : secrets) {
        assertThat(text).doesNotContain(secret);
      }
    }
    for (Path f : files) {
      String content = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
      for (String secret : secrets) {
        assertThat(content).as(f.toString()).doesNotContain(secret);
      }
      assertThat(content).as(f.toString())
          .doesNotContain(new String(HexFormat.of().parseHex(KEY_HEX),
              StandardCharsets.ISO_8859_1));
    }
  }

  /** Every form a secret of this test could take in text. */
  private List<String> secrets(Path identity) throws Exception {
    String id = Files.readAllLines(identity).stream().filter(l -> l.startsWith("BEAMSAVE-"))
        .findFirst().orElseThrow();
    byte[] key = HexFormat.of().parseHex(KEY_HEX);
    return List.of(PASSWORD, NEW_PASSWORD, KEY_HEX, KEY_HEX.toUpperCase(),
        Base64.getEncoder().encodeToString(key), Base64.getUrlEncoder().encodeToString(key),
        id, id.substring("BEAMSAVE-IDENTITY-".length(), id.length() - 8));
  }

  private static LauncherIT.Run run(List<String> printed, Map<String, String> env, int exit,
      Object... args) throws Exception {
    LauncherIT.Run r = LauncherIT.beamsave(env, List.of(), args);
    printed.add(r.out());
    printed.add(r.err());
    assertThat(r.exit()).as(List.of(args) + "\n" + r.err() + r.out()).isEqualTo(exit);
    return r;
  }
}
