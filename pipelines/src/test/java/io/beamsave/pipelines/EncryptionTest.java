package io.beamsave.pipelines;

import static org.assertj.core.api.Assertions.assertThat;

import io.beamsave.pipelines.restore.TreeSnapshot;
import io.beamsave.testing.S3MockServer;
import io.beamsave.testing.S3TestServer;
import io.beamsave.testing.TestS3;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Encrypted images through the command line, as an operator uses them: each kind of key and
 * several at once, an image saved for a public key that nothing but its identity reads, every
 * flipped byte found by verify with the key and without it, rekey locally and in object
 * storage, and an encrypted chain restored and consolidated.
 */
class EncryptionTest {
  @TempDir static Path dir;
  /** S3Proxy; S3Mock while a test runs against it ({@link #onS3Mock}). */
  static TestS3 server;
  static Path lib;
  static Path password;
  static Path keyFile;
  static Path alice;
  static Path alicePub;
  static Path bob;
  static Path bobPub;

  /** Names and words of the library that no encrypted image, and no refusal, may show. */
  static final List<String> SECRETS = List.of("salaries-2026", "quarterly.csv", "confidential");

  @BeforeAll
  static void start() throws Exception {
    server = S3TestServer.start(Files.createDirectories(dir.resolve("s3")), "backups");
    lib = Files.createDirectories(dir.resolve("lib"));
    Path hidden = Files.createDirectories(lib.resolve("salaries-2026"));
    Files.writeString(hidden.resolve("quarterly.csv"), "confidential,1234\n".repeat(20_000));
    byte[] random = new byte[3 << 20];
    new Random(11).nextBytes(random);
    Files.write(lib.resolve("random.bin"), random);
    Files.createFile(lib.resolve("empty"));
    Files.createSymbolicLink(lib.resolve("link"), Path.of("salaries-2026/quarterly.csv"));
    password = Files.writeString(dir.resolve("password"), "open sesame, 42\n");
    byte[] key = new byte[32];
    new Random(3).nextBytes(key);
    keyFile = Files.write(dir.resolve("key"), key);
    alice = dir.resolve("alice.id");
    alicePub = Files.writeString(dir.resolve("alice.pub"), keygen(alice));
    bob = dir.resolve("bob.id");
    bobPub = Files.writeString(dir.resolve("bob.pub"), keygen(bob));
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static String keygen(Path identity) {
    Cli k = Cli.ok("keygen", "--identity", identity);
    assertThat(k.out()).startsWith("beamsave-pub-").hasLineCount(1);
    return k.out();
  }

  static Object[] s3(Object... args) {
    Object[] all = java.util.Arrays.copyOf(args, args.length + 2);
    all[args.length] = "--s3-endpoint";
    all[args.length + 1] = "http://127.0.0.1:" + server.port();
    return all;
  }

  static Object[] with(Object[] args, Object... more) {
    List<Object> all = new ArrayList<>(List.of(args));
    all.addAll(List.of(more));
    return all.toArray();
  }

  static void restoresTheLibrary(Object image, Object... key) throws IOException {
    Path target = dir.resolve("restored-" + System.nanoTime());
    Cli.ok(with(new Object[] {"restore", image, "--target", target, "--quiet"}, key));
    assertThat(TreeSnapshot.of(target).diff(TreeSnapshot.of(lib))).as("restore of " + image)
        .isNull();
  }

  static void hidesTheLibrary(Path image) throws IOException {
    String bytes = new String(Files.readAllBytes(image), StandardCharsets.ISO_8859_1);
    for (String s : SECRETS) {
      assertThat(bytes).as("image " + image).doesNotContain(s);
    }
  }

  static void tellsNothing(Cli c) {
    for (String s : SECRETS) {
      assertThat(c.out() + c.err()).doesNotContain(s);
    }
  }

  @Test
  void eachKindOfKeyAndSeveralAtOnceOpenWhatTheySaved() throws Exception {
    Path byPassword = dir.resolve("password.bsave");
    Path byKey = dir.resolve("key.bsave");
    Path byPublicKey = dir.resolve("public.bsave");
    Path forAll = dir.resolve("all.bsave");
    Cli.ok("save", "--library", lib, "--image", byPassword, "--password-file", password, "-q");
    Cli.ok("save", "--library", lib, "--image", byKey, "--key-file", keyFile, "-q");
    Cli.ok("save", "--library", lib, "--image", byPublicKey, "--recipient",
        Files.readString(alicePub).strip(), "-q");
    Cli.ok("save", "--library", lib, "--image", forAll, "--password-file", password,
        "--key-file", keyFile, "--recipient", alicePub, "--recipient", bobPub, "-q");
    for (Path image : List.of(byPassword, byKey, byPublicKey, forAll)) {
      hidesTheLibrary(image);
    }
    restoresTheLibrary(byPassword, "--password-file", password);
    restoresTheLibrary(byKey, "--key-file", keyFile);
    restoresTheLibrary(byPublicKey, "--identity", alice);
    for (Object[] key : List.of(new Object[] {"--password-file", password},
        new Object[] {"--key-file", keyFile}, new Object[] {"--identity", alice},
        new Object[] {"--identity", bob})) {
      restoresTheLibrary(forAll, key);
    }
    Cli verify = Cli.run("verify", forAll);
    assertThat(verify.exit()).isZero();
    assertThat(verify.out()).contains("structure and checksums")
        .contains("for password, key file ").contains("recipient ").contains("no key given");
    assertThat(Cli.ok("verify", forAll, "--identity", bob).out())
        .contains("every block and digest checked");
    assertThat(Cli.ok("list", forAll, "--key-file", keyFile).out()).contains("quarterly.csv");
  }

  @Test
  void anImageSavedForAPublicKeyIsReadByItsIdentityAloneWhateverTheCommand() throws Exception {
    Path images = Files.createDirectories(dir.resolve("write-only"));
    Path image = images.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--recipient", alicePub, "-q");
    Cli.ok(s3("save", "--library", lib, "--image", "s3://backups/write-only/lib.bsave",
        "--recipient", alicePub, "-q"));
    hidesTheLibrary(image);
    hidesTheLibrary(server.file("backups", "write-only/lib.bsave"));
    Path pw = Files.writeString(dir.resolve("wrong-password"), "not it");
    List<Object[]> wrongKeys = List.of(new Object[0], new Object[] {"--identity", alicePub},
        new Object[] {"--identity", bob}, new Object[] {"--password-file", pw},
        new Object[] {"--key-file", keyFile});
    for (Object where : List.of(image, "s3://backups/write-only/lib.bsave")) {
      for (Object[] key : wrongKeys) {
        String as = where + " with " + List.of(key);
        Path target = dir.resolve("must-not-exist");
        for (Object[] command : List.of(
            new Object[] {"list", where},
            new Object[] {"list", where, "--sources"},
            new Object[] {"restore", where, "--target", target},
            new Object[] {"consolidate", where, "--to", dir.resolve("consolidated.bsave")})) {
          Cli c = Cli.run(s3(with(command, key)));
          assertThat(c.exit()).as(as + ": " + command[0] + "\n" + c.err()).isEqualTo(1);
          assertThat(c.err().lines().count()).as(as + ": " + command[0]).isEqualTo(1);
          assertThat(c.err()).as(as).containsAnyOf("is encrypted (for recipient ",
              "wrong identity", "wrong password", "wrong key", "holds a public key");
          assertThat(c.out()).as(as).isEmpty();
          tellsNothing(c);
        }
        assertThat(target).doesNotExist();
        assertThat(dir.resolve("consolidated.bsave")).doesNotExist();
        Cli verify = Cli.run(s3(with(new Object[] {"verify", where}, key)));
        tellsNothing(verify);
        if (key.length == 0) {
          assertThat(verify.exit()).isZero();
          assertThat(verify.out()).contains("structure and checksums").contains("no key given");
        } else {
          assertThat(verify.exit()).as(as + ": verify\n" + verify.err()).isEqualTo(1);
        }
      }
      restoresTheLibrary(where, "--identity", alice, "--s3-endpoint",
          "http://127.0.0.1:" + server.port());
    }
    Cli listed = Cli.ok("images", "--at", images);
    assertThat(listed.out()).contains("encrypted").contains("lib.bsave");
    tellsNothing(listed);
    Cli upload = Cli.run(s3("upload", "--from", image, "--to", "s3://backups/up/lib.bsave",
        "--transfer-codec", "zstd:3"));
    assertThat(upload.exit()).isEqualTo(1);
    assertThat(upload.err()).contains("is encrypted, and encrypted bytes do not shrink");
    assertThat(server.file("backups", "up/lib.bsave")).doesNotExist();
    // An incremental save must read its base: a host with the public key alone cannot.
    Cli incremental = Cli.run("save", "--library", lib, "--image",
        images.resolve("next.bsave"), "--recipient", alicePub, "--base", image);
    assertThat(incremental.exit()).isEqualTo(1);
    assertThat(incremental.err()).contains("is encrypted (for recipient ").contains("--identity");
    assertThat(images.resolve("next.bsave")).doesNotExist();
  }

  @Test
  void everyFlippedByteOfASmallImageIsFoundByVerifyWithItsKeyAndWithout() throws Exception {
    Path small = Files.createDirectories(dir.resolve("small"));
    Files.writeString(small.resolve("note.txt"), "a small secret\n".repeat(40));
    Files.writeString(small.resolve("other.txt"), "another one");
    Path image = dir.resolve("small.bsave");
    Cli.ok("save", "--library", small, "--image", image, "--key-file", keyFile, "-q");
    byte[] good = Files.readAllBytes(image);
    Path bad = dir.resolve("flipped.bsave");
    for (int i = 0; i < good.length; i++) {
      byte[] b = good.clone();
      b[i] ^= 0x04;
      Files.write(bad, b);
      Cli without = Cli.run("verify", bad, "-q");
      assertThat(without.exit()).as("byte %d of %d, no key", i, good.length).isEqualTo(1);
      assertThat(without.err().lines().count()).isEqualTo(1);
      Cli with = Cli.run("verify", bad, "--key-file", keyFile, "-q");
      assertThat(with.exit()).as("byte %d of %d, with the key", i, good.length).isEqualTo(1);
    }
    assertThat(Cli.run("verify", image, "--key-file", keyFile, "-q").exit()).isZero();
  }

  @Test
  void rekeyAddsAndRemovesRecipientsAndTheRemovedKeyNoLongerOpensTheImage() throws Exception {
    Path image = dir.resolve("rekeyed.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--recipient", alicePub, "-q");
    Cli.ok(s3("save", "--library", lib, "--image", "s3://backups/rekey/lib.bsave",
        "--recipient", alicePub, "--shard-size", "1MiB", "-q"));
    rekeys(image, "s3://backups/rekey/lib.bsave");
    Cli plain = Cli.run("rekey", dir.resolve("plain.bsave"), "--remove", "password");
    assertThat(plain.exit()).isEqualTo(1);
  }

  /** As S3Proxy does, S3Mock takes a rekey, which rewrites the object with part copies. */
  @Test
  void rekeyInAStricterStoreToo() throws Exception {
    onS3Mock("rekey-s3mock", () -> {
      Cli.ok(s3("save", "--library", lib, "--image", "s3://backups/rekey/lib.bsave",
          "--recipient", alicePub, "--shard-size", "1MiB", "-q"));
      rekeys("s3://backups/rekey/lib.bsave");
    });
  }

  interface Body {
    void run() throws Exception;
  }

  /** Runs {@code body} with {@link #server} an S3Mock of its own, storing under {@code name}. */
  static void onS3Mock(String name, Body body) throws Exception {
    TestS3 proxy = server;
    try (S3MockServer strict = S3MockServer.start(dir.resolve(name), "backups")) {
      server = strict;
      body.run();
    } finally {
      server = proxy;
    }
  }

  /** Adds and removes recipients of each of {@code images}, saved for Alice alone. */
  static void rekeys(Object... images) throws Exception {
    String aliceId = Cli.ok(s3("verify", images[0])).out()
        .replaceAll("(?s).*recipient ([0-9a-f]{16}).*", "$1");
    for (Object where : images) {
      long size = sizeOf(where);
      Cli added = Cli.ok(s3("rekey", where, "--identity", alice, "--add-recipient", bobPub,
          "--add-key-file", keyFile));
      assertThat(added.out()).contains("rekeyed").contains("was for recipient " + aliceId);
      assertThat(sizeOf(where)).as("only the header changed").isEqualTo(size);
      restoresTheLibrary(where, "--identity", bob, "--s3-endpoint", server.endpoint());
      restoresTheLibrary(where, "--key-file", keyFile, "--s3-endpoint", server.endpoint());
      restoresTheLibrary(where, "--identity", alice, "--s3-endpoint", server.endpoint());

      Cli removed = Cli.ok(s3("rekey", where, "--key-file", keyFile, "--remove", aliceId,
          "--remove", Files.readString(bobPub).strip()));
      assertThat(removed.out()).contains("for key file ");
      Cli old = Cli.run(s3("list", where, "--identity", alice));
      assertThat(old.exit()).isEqualTo(1);
      assertThat(old.err()).contains("wrong identity");
      assertThat(Cli.run(s3("list", where, "--identity", bob)).exit()).isEqualTo(1);
      restoresTheLibrary(where, "--key-file", keyFile, "--s3-endpoint", server.endpoint());
      assertThat(Cli.ok(s3("verify", where, "--key-file", keyFile)).out()).startsWith("OK ");

      Cli last = Cli.run(s3("rekey", where, "--key-file", keyFile, "--remove", "key file "
          + Cli.ok(s3("verify", where)).out().replaceAll("(?s).*key file ([0-9a-f]{16}).*",
              "$1")));
      assertThat(last.exit()).isEqualTo(1);
      assertThat(last.err()).contains("at least one recipient");
      Cli unknown = Cli.run(s3("rekey", where, "--key-file", keyFile, "--remove", "password"));
      assertThat(unknown.exit()).isEqualTo(1);
      assertThat(unknown.err()).contains("has no such recipient");
      if (where.toString().startsWith("s3://")) {
        // The save's upload and the rekeys' are complete, and no claim of theirs is left.
        String at = where.toString().substring(0, where.toString().lastIndexOf('/'));
        assertThat(Cli.ok(s3("cleanup", "--at", at)).out())
            .contains("nothing left by failed or killed runs");
      }
    }
  }

  static long sizeOf(Object where) throws IOException {
    String w = where.toString();
    return w.startsWith("s3://") ? Files.size(server.file("backups", w.substring(13)))
        : Files.size(Path.of(w));
  }

  @Test
  void anEncryptedChainRestoresAtEachPointAndConsolidatesInTheStore() throws Exception {
    Path chained = Files.createDirectories(dir.resolve("chained"));
    Random r = new Random(5);
    for (int i = 0; i < 4; i++) {
      byte[] b = new byte[6 << 20];
      r.nextBytes(b);
      Files.write(chained.resolve("part" + i + ".bin"), b);
    }
    Files.writeString(chained.resolve("notes.txt"), "first version\n");
    String template = "s3://backups/chain/{library}/{library}-{utc}.bsave";
    List<TreeSnapshot> then = new ArrayList<>();
    for (int step = 0; step < 3; step++) {
      if (step > 0) {
        Files.writeString(chained.resolve("notes.txt"), "version " + step + "\n");
        Files.writeString(chained.resolve("new-" + step + ".txt"), "added at " + step);
        Thread.sleep(1100);
      }
      then.add(TreeSnapshot.of(chained));
      Cli save = Cli.ok(s3("save", "--library", chained, "--image", template, "--shard-size",
          "6MiB", "--password-file", password, "--base", "latest", "--base-optional", "-q"));
      if (step > 0) {
        assertThat(save.out()).contains("incremental: ");
      }
    }
    List<String> images = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir.resolve("s3/backups/chain/chained"))) {
      s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".bsave")).sorted()
          .forEach(n -> images.add("s3://backups/chain/chained/" + n));
    }
    assertThat(images).hasSize(3);
    for (int step = 0; step < 3; step++) {
      Path target = dir.resolve("chain-restored-" + step);
      Cli.ok(s3("restore", images.get(step), "--target", target, "--password-file", password,
          "-q"));
      assertThat(TreeSnapshot.of(target).diff(then.get(step))).as("image " + step).isNull();
      hidesTheLibrary(server.file("backups", images.get(step).substring(13)));
    }
    assertThat(Cli.ok(s3("verify", images.get(2), "--chain", "--password-file", password))
        .out()).contains("chain: 2 base images checked whole");
    Cli images2 = Cli.ok(s3("images", "--at", "s3://backups/chain"));
    assertThat(images2.out()).contains("incremental 2 on ").contains("encrypted");

    // Consolidated for a public key: its shards are copied by the store, their keys rewrapped.
    Cli folded = Cli.ok(s3("consolidate", images.get(2), "--to",
        "s3://backups/chain/full.bsave", "--password-file", password, "--recipient", bobPub,
        "--json"));
    assertThat(folded.out()).containsPattern("\"shardsCopiedInStore\":[1-9]")
        .contains("\"shardsRewritten\":0");
    Cli.ok(s3("restore", "s3://backups/chain/full.bsave", "--target",
        dir.resolve("chain-full-bob"), "--identity", bob, "-q"));
    assertThat(TreeSnapshot.of(dir.resolve("chain-full-bob")).diff(then.get(2))).isNull();
    Cli.ok(s3("restore", "s3://backups/chain/full.bsave", "--target",
        dir.resolve("chain-full-pw"), "--password-file", password, "-q"));
    assertThat(Cli.ok(s3("verify", "s3://backups/chain/full.bsave", "--identity", bob)).out())
        .startsWith("OK ");
    // Consolidated with no recipient named: for the keys that opened the chain.
    Path local = dir.resolve("chain-full.bsave");
    Cli.ok(s3("consolidate", images.get(2), "--to", local, "--password-file", password, "-q"));
    assertThat(Cli.ok("verify", local).out()).contains("for password)");
    restoresChain(local, then.get(2));
  }

  static void restoresChain(Path image, TreeSnapshot expected) throws IOException {
    Path target = dir.resolve("restored-" + System.nanoTime());
    Cli.ok("restore", image, "--target", target, "--password-file", password, "-q");
    assertThat(TreeSnapshot.of(target).diff(expected)).isNull();
  }

  @Test
  void anIncrementalImageIsEncryptedExactlyWhenItsBaseIs() throws Exception {
    Path images = Files.createDirectories(dir.resolve("mixed"));
    Path plain = images.resolve("plain.bsave");
    Path sealed = images.resolve("sealed.bsave");
    Cli.ok("save", "--library", lib, "--image", plain, "-q");
    Cli.ok("save", "--library", lib, "--image", sealed, "--key-file", keyFile, "-q");
    Cli onPlain = Cli.run("save", "--library", lib, "--image", images.resolve("a.bsave"),
        "--key-file", keyFile, "--base", plain);
    assertThat(onPlain.exit()).isEqualTo(1);
    assertThat(onPlain.err()).contains("is not encrypted: an encrypted image saved against it");
    Cli onSealed = Cli.run("save", "--library", lib, "--image", images.resolve("b.bsave"),
        "--base", sealed, "--key-file", keyFile.resolveSibling("nothing"));
    assertThat(onSealed.exit()).isEqualTo(1);
    Cli plainOnSealed = Cli.run("save", "--library", lib, "--image", images.resolve("c.bsave"),
        "--base", sealed);
    assertThat(plainOnSealed.exit()).isEqualTo(1);
    assertThat(plainOnSealed.err()).contains("is encrypted: an image saved against it without");
    Cli optional = Cli.ok("save", "--library", lib, "--image", images.resolve("d.bsave"),
        "--key-file", keyFile, "--base", plain, "--base-optional", "-q");
    assertThat(optional.err()).contains("saved whole");
    assertThat(images.resolve("a.bsave")).doesNotExist();
    assertThat(images.resolve("b.bsave")).doesNotExist();
    assertThat(images.resolve("c.bsave")).doesNotExist();
  }

  @Test
  void givenAKeyAReaderRefusesAPlainImagePutInPlaceOfAnEncryptedOne() throws Exception {
    Path images = Files.createDirectories(dir.resolve("swapped"));
    Path image = images.resolve("lib.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--key-file", keyFile, "-q");
    Files.delete(image);
    Cli.ok("save", "--library", lib, "--image", image, "-q");
    for (Object[] command : List.of(
        new Object[] {"list", image, "--key-file", keyFile},
        new Object[] {"verify", image, "--identity", alice},
        new Object[] {"restore", image, "--target", images.resolve("r"), "--key-file", keyFile},
        new Object[] {"consolidate", image, "--to", images.resolve("c.bsave"), "--key-file",
            keyFile})) {
      Cli c = Cli.run(command);
      assertThat(c.exit()).as(command[0] + "\n" + c.err()).isEqualTo(1);
      assertThat(c.err()).contains("is not encrypted, yet keys were given");
    }
    assertThat(images.resolve("r")).doesNotExist();
    assertThat(Cli.ok("list", image).out()).contains("quarterly.csv");
  }

  @Test
  void consolidateRefusesToLeaveOutARecipientUnlessTold() throws Exception {
    Path image = dir.resolve("for-two.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--key-file", keyFile, "--recipient",
        alicePub, "-q");
    Path fewer = dir.resolve("for-one.bsave");
    Cli refused = Cli.run("consolidate", image, "--to", fewer, "--key-file", keyFile);
    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.err()).contains("is also for recipient ").contains("--drop-recipients");
    assertThat(fewer).doesNotExist();
    Cli.ok("consolidate", image, "--to", fewer, "--key-file", keyFile, "--recipient", alicePub,
        "-q");
    restoresTheLibrary(fewer, "--identity", alice);
    Files.delete(fewer);
    Cli.ok("consolidate", image, "--to", fewer, "--key-file", keyFile, "--drop-recipients", "-q");
    assertThat(Cli.run("list", fewer, "--identity", alice).err()).contains("wrong identity");
    restoresTheLibrary(fewer, "--key-file", keyFile);
  }

  @Test
  void aSecretGivenInTheWrongPlaceIsNotRepeated() throws Exception {
    String identity = Files.readAllLines(alice).stream()
        .filter(l -> l.startsWith("BEAMSAVE-IDENTITY-")).findFirst().orElseThrow();
    Cli save = Cli.run("save", "--library", lib, "--image", dir.resolve("never.bsave"),
        "--recipient", identity);
    assertThat(save.exit()).isEqualTo(1);
    assertThat(save.err()).contains("that is an identity").doesNotContain(identity);
    Cli rekey = Cli.run("rekey", dir.resolve("for-nobody.bsave"), "--remove", identity);
    assertThat(rekey.err()).doesNotContain(identity);
    Cli password = Cli.run("list", dir.resolve("x.bsave"), "--password", "hunter2");
    assertThat(password.exit()).isEqualTo(2);
    assertThat(password.out() + password.err()).doesNotContain("hunter2");

    // Each secret as its text ("$(cat FILE)"), given to each option that takes a file or key.
    String identityText = Files.readString(alice);
    String keyHex = java.util.HexFormat.of().formatHex(Files.readAllBytes(keyFile));
    String keyBase64 = java.util.Base64.getEncoder().encodeToString(Files.readAllBytes(keyFile));
    Path image = dir.resolve("never.bsave");
    Path some = dir.resolve("secrets/one.bsave");
    Cli.ok("save", "--library", lib, "--image", some, "-q");
    for (String secret : List.of(identityText, identity, keyHex, keyBase64)) {
      for (Object[] a : List.of(
          new Object[] {"save", "--library", lib, "--image", image, "--recipient", secret},
          new Object[] {"save", "--library", lib, "--image", image, "--identity", secret},
          new Object[] {"save", "--library", lib, "--image", image, "--key-file", secret},
          new Object[] {"save", "--library", lib, "--image", image, "--password-file", secret},
          new Object[] {"list", image, "--identity", secret},
          new Object[] {"verify", image, "--key-file", secret},
          new Object[] {"restore", image, "--target", dir.resolve("t"), "--password-file",
              secret},
          new Object[] {"prune", "--at", some.getParent(), "--keep-last", "1", "--key-file",
              secret},
          new Object[] {"rekey", image, "--add-key-file", secret},
          new Object[] {"rekey", image, "--add-recipient", secret},
          new Object[] {"list", secret},
          new Object[] {"restore", secret, "--target", dir.resolve("t")},
          new Object[] {"prune", "--at", secret, "--keep-last", "1"},
          new Object[] {"keygen", "--identity", secret},
          new Object[] {"save", "--library", lib, "--image", image, secret})) {
        Cli c = Cli.run(a);
        assertThat(c.exit()).as(String.join(" ", java.util.Arrays.stream(a)
            .map(String::valueOf).toList())).isNotZero();
        String said = c.out() + c.err();
        for (String part : secret.lines().map(String::strip).filter(l -> l.length() > 8)
            .toList()) {
          assertThat(said).as(a[0] + " " + a[a.length - 2]).doesNotContain(part)
              .doesNotContain(part.substring(part.length() / 2));
        }
      }
    }
    assertThat(image).doesNotExist();
  }

  @Test
  void givenAKeyPruneCountsNoObjectItCannotOpenNotEvenOneStoredTransferCompressed()
      throws Exception {
    String at = "s3://backups/enc-prune/";
    Cli.ok(s3("save", "--library", lib, "--image", at + "lib-20261201T000000Z.bsave",
        "--key-file", keyFile, "-q"));
    Cli.ok(s3("save", "--library", lib, "--image", at + "lib-20261202T000000Z.bsave",
        "--key-file", keyFile, "-q"));
    // A plain image uploaded compressed, named as the newest of the series.
    Path plain = dir.resolve("plain-for-prune.bsave");
    Cli.ok("save", "--library", lib, "--image", plain, "-q");
    Cli.ok(s3("upload", "--from", plain, "--to", at + "lib-20990101T000000Z.bsave",
        "--transfer-codec", "zstd:3"));
    Cli pruned = Cli.ok(s3("prune", "--at", at, "--keep-last", "1", "--key-file", keyFile,
        "--yes"));
    assertThat(pruned.out()).contains("not counted: stored with transfer compression")
        .containsPattern("keep .*lib-20261202T000000Z.bsave  \\(last 1\\)")
        .containsPattern("deleted .*lib-20261201T000000Z.bsave");
  }

  @Test
  void anIdentityOthersMayReadIsUsedWithAWarning() throws Exception {
    Path image = dir.resolve("for-alice.bsave");
    Cli.ok("save", "--library", lib, "--image", image, "--recipient", alicePub, "-q");
    Path readable = dir.resolve("readable.id");
    Files.copy(alice, readable);
    Files.setPosixFilePermissions(readable,
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    Cli c = Cli.ok("list", image, "--identity", readable);
    assertThat(c.err()).contains("beamsave: warning: identity " + readable
        + " may be read by other users (rw-r--r--)").contains("chmod 600");
    assertThat(Cli.ok("list", image, "--identity", alice).err()).doesNotContain("warning");
  }

  @Test
  void pruneBelievesAConsolidationOnlyWhenAKeyOpensTheConsolidatedImage() throws Exception {
    Path images = Files.createDirectories(dir.resolve("pruned"));
    Path first = images.resolve("lib-20261201T000000Z.bsave");
    Path second = images.resolve("lib-20261202T000000Z.bsave");
    Cli.ok("save", "--library", lib, "--image", first, "--key-file", keyFile, "-q");
    Cli.ok("save", "--library", lib, "--image", second, "--key-file", keyFile, "-q");
    // An image that claims, in its header, to be the first one consolidated, named as if older:
    // believed, it would have the first deleted in its favour.
    Path claim = images.resolve("lib-20261130T000000Z.bsave");
    Cli.ok("consolidate", first, "--to", claim, "--key-file", keyFile, "--recipient", bobPub,
        "--drop-recipients", "-q");
    Cli.ok("rekey", claim, "--identity", bob, "--remove", "key file " + keyIdOf(claim));
    Cli keyless = Cli.ok("prune", "--at", images, "--keep-last", "2");
    assertThat(keyless.out()).contains("keep     ").containsPattern("delete .*" + claim)
        .doesNotContainPattern("delete .*" + first);
    // Given only bob's identity, the images it does not open are not counted: nothing goes.
    Cli bobOnly = Cli.ok("prune", "--at", images, "--keep-last", "2", "--identity", bob);
    assertThat(bobOnly.out()).doesNotContainPattern("(?m)^delete ")
        .contains("not counted: no key given opens it");
    Cli opened = Cli.ok("prune", "--at", images, "--keep-last", "2", "--identity", bob,
        "--key-file", keyFile);
    assertThat(opened.out()).containsPattern("delete .*" + first + ".*consolidated into");
  }

  static String keyIdOf(Path image) {
    return Cli.ok("verify", image).out().replaceAll("(?s).*key file ([0-9a-f]{16}).*", "$1");
  }
}
