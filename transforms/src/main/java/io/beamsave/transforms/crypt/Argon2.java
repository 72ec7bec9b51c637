package io.beamsave.transforms.crypt;

import io.beamsave.transforms.format.ImageException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.bouncycastle.crypto.generators.Argon2BytesGenerator;
import org.bouncycastle.crypto.params.Argon2Parameters;

/**
 * Argon2id (RFC 9106) from Bouncy Castle: a password and a salt to a 256-bit key that wraps an
 * image's data key. The cost is stored with each password stanza, so it can be raised later.
 * Derived keys are remembered for the life of the process: a save of several libraries, or a
 * restore of a chain, pays for each (password, salt, cost) once.
 */
record Argon2(int memoryKiB, int iterations, int parallelism) {
  /**
   * RFC 9106's second recommended option (64 MiB, 3 passes, 4 lanes): about half a second on
   * the 2-core machine measured (a second on the first use, before the JIT has compiled it).
   */
  static final Argon2 DEFAULT = new Argon2(64 * 1024, 3, 4);

  /**
   * The most a header may ask for: a crafted image must not make a reader allocate gigabytes or
   * work for minutes. 256 MiB and 10 passes take about 8 s here.
   */
  static final int MAX_MEMORY_KIB = 256 * 1024;

  static final int MAX_ITERATIONS = 10;
  static final int MAX_PARALLELISM = 16;

  /**
   * Keys derived in this JVM, by a digest of password, salt and cost: a chain's images and a
   * run's workers open the same password's images many times, and each derivation costs tenths
   * of a second and tens of MiB. A JVM-wide cache since workers of one run deserialize their
   * own copies of the keys; bounded to the {@value #CACHED} most recently used.
   */
  private static final int CACHED = 16;

  private static final Map<String, byte[]> DERIVED =
      new LinkedHashMap<>(CACHED * 2, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
          return size() > CACHED;
        }
      };

  /** Whether a reader may run this cost: within the bounds above and Argon2's own. */
  boolean acceptable() {
    return parallelism >= 1 && parallelism <= MAX_PARALLELISM && iterations >= 1
        && iterations <= MAX_ITERATIONS && memoryKiB >= 8 * parallelism
        && memoryKiB <= MAX_MEMORY_KIB;
  }

  /**
   * The key {@code password} and {@code salt} give at this cost. One derivation runs at a time:
   * a chain's bases are opened in parallel, and several at 256 MiB each would not fit a heap a
   * derivation alone fits. Fails, rather than exhausting the heap, where the cost asks for more
   * memory than half of it.
   */
  byte[] derive(byte[] password, byte[] salt) throws ImageException {
    String memo = java.util.HexFormat.of().formatHex(
        Primitives.sha256(password, salt, Primitives.ascii(toString())));
    synchronized (DERIVED) {
      byte[] known = DERIVED.get(memo);
      return known != null ? known.clone() : deriveNow(password, salt, memo);
    }
  }

  private byte[] deriveNow(byte[] password, byte[] salt, String memo) throws ImageException {
    long need = memoryKiB * 1024L;
    if (need > Runtime.getRuntime().maxMemory() / 2) {
      throw new ImageException("a password's Argon2id cost asks for " + (need >> 20) + " MiB,"
          + " more than this Java may spare; give it more (BEAMSAVE_JAVA_OPTS=-Xmx...)");
    }
    Argon2Parameters p = new Argon2Parameters.Builder(Argon2Parameters.ARGON2_id)
        .withVersion(Argon2Parameters.ARGON2_VERSION_13)
        .withSalt(salt)
        .withMemoryAsKB(memoryKiB)
        .withIterations(iterations)
        .withParallelism(parallelism)
        .build();
    byte[] out = new byte[Primitives.KEY_SIZE];
    try {
      Argon2BytesGenerator g = new Argon2BytesGenerator();
      g.init(p);
      g.generateBytes(password, out);
    } catch (OutOfMemoryError e) {
      throw new ImageException("not enough memory for a password's Argon2id cost of "
          + (need >> 20) + " MiB; give Java more (BEAMSAVE_JAVA_OPTS=-Xmx...)");
    }
    DERIVED.put(memo, out.clone());
    return out;
  }

  @Override
  public String toString() {
    return "argon2id m=" + memoryKiB + " t=" + iterations + " p=" + parallelism;
  }
}
