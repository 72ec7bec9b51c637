package io.beamsave.pipelines;

import static io.beamsave.pipelines.ChainTrustTest.refused;
import static io.beamsave.pipelines.ConsolidateTest.args;
import static io.beamsave.pipelines.ConsolidateTest.random;
import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.testing.S3TestServer;
import io.beamsave.transforms.image.ImageReader;
import io.beamsave.transforms.image.catalog.Catalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lineage of an image is every image of its chain of bases, not only those it references
 * bytes of: the image between needs its own base all the same. No writer replaces one, however
 * it is named, and what a refusal leaves is the chain as it was.
 */
class ChainLineageTest {
  @TempDir Path dir;

  /** A root (full), a middle image on it, and a newest image on that. */
  record Chain(Path lib, Path root, Path middle, Path newest) {}

  /**
   * The newest image changes every file, so it references no byte of the middle nor of the
   * root: only the middle's catalog names the root.
   */
  Chain chain(Path at, Object... more) throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib-" + at.getFileName()));
    random(lib.resolve("a.bin"), 200_000, 1);
    random(lib.resolve("b.bin"), 200_000, 2);
    Path root = at.resolve("data-20261201T000000Z.bsave");
    Path middle = at.resolve("data-20261202T000000Z.bsave");
    Path newest = at.resolve("data-20261203T000000Z.bsave");
    Object[] quick = {"--codec", "none", "-q"};
    Cli.ok(args(args(new Object[] {"save", "--library", lib, "--image", root}, quick), more));
    random(lib.resolve("a.bin"), 200_000, 3);
    Cli.ok(args(args(new Object[] {"save", "--library", lib, "--image", middle, "--base", root},
        quick), more));
    random(lib.resolve("a.bin"), 200_000, 4);
    random(lib.resolve("b.bin"), 200_000, 5);
    Cli.ok(args(args(new Object[] {"save", "--library", lib, "--image", newest, "--base",
        middle}, quick), more));
    return new Chain(lib, root, middle, newest);
  }

  /** The ways of naming {@code image} that are not its path as the chain recorded it. */
  List<String> spellings(Path image) throws Exception {
    Path img = image.getParent();
    String name = image.getFileName().toString();
    Path linked = Files.createSymbolicLink(dir.resolve("linked-" + System.nanoTime()), img);
    Path deep = Files.createDirectories(dir.resolve("deep-" + System.nanoTime()));
    // "link/../x" is where the link's target's parent is, not where the spelling suggests.
    Path down = Files.createSymbolicLink(deep.resolve("down"),
        Files.createDirectories(img.resolve("sub")));
    return List.of(
        "./" + Path.of("").toAbsolutePath().relativize(image),
        img + "/../" + img.getFileName() + "/" + name,
        img + "/./" + name,
        linked.resolve(name).toString(),
        down + "/../" + name);
  }

  @Test
  void consolidateRefusesEveryImageOfTheLineageEvenOneTheNewestReferencesNoByteOf()
      throws Exception {
    Chain c = chain(dir.resolve("img"));
    Catalog newest = ImageReader.readCatalog(c.newest());
    assertThat(newest.bases()).as("the newest image records only the middle one").hasSize(1);
    byte[] root = Files.readAllBytes(c.root());
    byte[] middle = Files.readAllBytes(c.middle());

    for (String to : spellings(c.root())) {
      refused(Cli.run("consolidate", c.newest(), "--to", to), "refusing --to " + to,
          "the base of the base of " + c.newest(), "consolidate into a new name");
    }
    // The same file under another name, and a copy elsewhere: the same image all the same.
    Path hard = Files.createLink(Files.createDirectories(dir.resolve("hard")).resolve("x.bsave"),
        c.root());
    refused(Cli.run("consolidate", c.newest(), "--to", hard), "the base of the base of");
    Path copy = Files.copy(c.root(), dir.resolve("copy.bsave"));
    refused(Cli.run("consolidate", c.newest(), "--to", copy), "it holds image",
        "the base of the base of");
    for (String to : spellings(c.middle())) {
      refused(Cli.run("consolidate", c.newest(), "--to", to), "refusing --to " + to,
          "the base of " + c.newest());
    }

    assertThat(Files.readAllBytes(c.root())).isEqualTo(root);
    assertThat(Files.readAllBytes(c.middle())).isEqualTo(middle);
    Cli.ok("verify", c.middle(), "-q");
    Cli.ok("verify", c.newest(), "--chain", "-q");
    // A new name is taken.
    Cli.ok("consolidate", c.newest(), "--to", dir.resolve("img/full.bsave"), "-q");
    Cli.ok("verify", dir.resolve("img/full.bsave"), "-q");
  }

  @Test
  void saveRefusesAnImageNamedLikeItsBasesBase() throws Exception {
    Chain c = chain(dir.resolve("img"));
    byte[] root = Files.readAllBytes(c.root());
    for (String image : spellings(c.root())) {
      refused(Cli.run("save", "--library", c.lib(), "--image", image, "--base", c.newest()),
          "refusing --image", c.root().getFileName().toString(),
          "the base of the base of --base");
    }
    assertThat(Files.readAllBytes(c.root())).isEqualTo(root);
    Cli.ok("verify", c.middle(), "-q");
  }

  @Test
  void anEncryptedBaseNoKeyGivenOpensIsKnownByTheIdItsHeaderRecords() throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "lineage, 7\n");
    Path keyFile = Files.write(dir.resolve("key"), new byte[32]);
    Chain c = chain(dir.resolve("sealed"), "--password-file", password);
    // The middle is for another key now: the password reads its header, never its catalog,
    // so where the root is stays unknown, and only its id tells it.
    Cli.ok("rekey", c.middle(), "--password-file", password, "--add-key-file", keyFile,
        "--remove", "password");
    byte[] root = Files.readAllBytes(c.root());
    for (String to : spellings(c.root())) {
      refused(Cli.run("consolidate", c.newest(), "--to", to, "--password-file", password),
          "refusing --to " + to, "it holds image", "the base of the base of");
    }
    refused(Cli.run("save", "--library", c.lib(), "--image", c.root(), "--base", c.newest(),
        "--password-file", password), "refusing --image", "the base of the base of --base");
    assertThat(Files.readAllBytes(c.root())).isEqualTo(root);
    Cli.ok("verify", c.middle(), "--key-file", keyFile, "--password-file", password, "-q");
  }

  @Test
  void inObjectStorageKeysThatAServerWouldServeAsOneAreOneImage() throws Exception {
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")),
        "backups")) {
      Object[] s3 = {"--s3-endpoint", server.endpoint()};
      Path lib = Files.createDirectories(dir.resolve("lib-s3"));
      random(lib.resolve("a.bin"), 100_000, 1);
      random(lib.resolve("b.bin"), 100_000, 2);
      String root = "s3://backups/img/root.bsave";
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", root, "-q"}, s3));
      random(lib.resolve("a.bin"), 100_000, 3);
      String middle = "s3://backups/img/middle.bsave";
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", middle, "--base", root,
          "-q"}, s3));
      random(lib.resolve("a.bin"), 100_000, 4);
      random(lib.resolve("b.bin"), 100_000, 5);
      String newest = "s3://backups/img/newest.bsave";
      Cli.ok(args(new Object[] {"save", "--library", lib, "--image", newest, "--base", middle,
          "-q"}, s3));
      Path stored = server.file("backups", "img/root.bsave");
      byte[] before = Files.readAllBytes(stored);
      for (String to : List.of(root, "s3://backups/img/./root.bsave",
          "s3://backups/img//root.bsave", "s3://backups/x/../img/root.bsave")) {
        refused(Cli.run(args(new Object[] {"consolidate", newest, "--to", to}, s3)),
            "refusing --to " + to, "the base of the base of " + newest);
        refused(Cli.run(args(new Object[] {"save", "--library", lib, "--image", to, "--base",
            newest}, s3)), "refusing --image", "the base of the base of --base");
      }
      assertThat(Files.readAllBytes(stored)).isEqualTo(before);
      Cli.ok(args(new Object[] {"verify", middle, "-q"}, s3));
    }
  }

  @Test
  void uploadAndDownloadDoNotReplaceACopyOfAnImageTheChainNeeds() throws Exception {
    Chain c = chain(dir.resolve("img"));
    try (S3TestServer server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")),
        "backups")) {
      Object[] s3 = {"--s3-endpoint", server.endpoint()};
      for (Path p : List.of(c.root(), c.middle(), c.newest())) {
        Cli.ok(args(new Object[] {"upload", "--from", p, "--to", "s3://backups/up/"
            + p.getFileName()}, s3));
      }
      String root = "s3://backups/up/" + c.root().getFileName();
      String newest = "s3://backups/up/" + c.newest().getFileName();
      Path stored = server.file("backups", "up/" + c.root().getFileName());
      byte[] before = Files.readAllBytes(stored);
      refused(Cli.run(args(new Object[] {"upload", "--from", c.newest(), "--to", root}, s3)),
          "refusing --to " + root, "it holds image", "the base of the base of");
      assertThat(Files.readAllBytes(stored)).isEqualTo(before);
      // The same image again is no image of its own chain: it may be sent again.
      Cli.ok(args(new Object[] {"upload", "--from", c.newest(), "--to", newest}, s3));

      Path copies = Files.createDirectories(dir.resolve("copies"));
      for (Path p : List.of(c.root(), c.middle())) {
        Cli.ok(args(new Object[] {"download", "--from", "s3://backups/up/" + p.getFileName(),
            "--to", copies.resolve(p.getFileName())}, s3));
      }
      Path copy = copies.resolve(c.root().getFileName());
      byte[] copied = Files.readAllBytes(copy);
      refused(Cli.run(args(new Object[] {"download", "--from", newest, "--to", copy,
          "--overwrite"}, s3)), "refusing --to " + copy, "the base of the base of");
      assertThat(Files.readAllBytes(copy)).isEqualTo(copied);
      try (Stream<Path> left = Files.list(copies)) {
        assertThat(left.map(p -> p.getFileName().toString())).noneMatch(
            n -> n.endsWith(".incoming"));
      }
      Cli.ok("verify", copies.resolve(c.middle().getFileName()), "-q");
      Cli.ok(args(new Object[] {"download", "--from", newest, "--to",
          copies.resolve(c.newest().getFileName())}, s3));
      Cli.ok(args(new Object[] {"download", "--from", newest, "--to",
          copies.resolve(c.newest().getFileName()), "--overwrite"}, s3));
    }
  }
}
