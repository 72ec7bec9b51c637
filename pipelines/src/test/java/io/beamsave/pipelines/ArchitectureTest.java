package io.beamsave.pipelines;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchRule;
import io.beamsave.pipelines.cli.BeamsaveCommand;
import io.beamsave.transforms.BeamsaveException;
import java.io.File;
import java.nio.file.Files;
import java.util.Set;

/**
 * The house rules that can be code, over the main classes of both modules. Each rule says what
 * it keeps, and why, in the message a failure prints.
 */
@AnalyzeClasses(locations = ArchitectureTest.MainClasses.class)
class ArchitectureTest {
  /**
   * Where the two modules' main classes are (a directory, or a jar): looked for only there,
   * since scanning the whole class path for a package reads every jar of Beam and Flink.
   */
  static final class MainClasses implements LocationProvider {
    @Override
    public Set<Location> get(Class<?> testClass) {
      return Set.of(where(BeamsaveCommand.class), where(BeamsaveException.class));
    }

    private static Location where(Class<?> c) {
      try {
        return Location.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
      } catch (java.net.URISyntaxException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static final String FILE_SYSTEM_LAYER = "io.beamsave.transforms.fs..";

  /**
   * Removing or moving by path re-resolves every component at the moment of the call: whoever
   * may rename or swap a directory on the way (a user who owns a directory on the path, a writer
   * beside the images) points a root's removal anywhere. The file-system layer removes and
   * renames beneath directory handles it holds ({@code fs.Removal}, {@code fs.Rename}, {@code
   * fs.Walk}); nothing else may.
   */
  @ArchTest
  static final ArchRule onlyTheFileSystemLayerRemovesRenamesOrWalksByPath =
      noClasses()
          .that().resideOutsideOfPackage(FILE_SYSTEM_LAYER)
          .should().callMethodWhere(target(owner(JavaClass.Predicates.equivalentTo(Files.class)))
              .and(target(nameMatching("delete|deleteIfExists|move|walkFileTree"))))
          .orShould().callMethodWhere(target(owner(JavaClass.Predicates.equivalentTo(File.class)))
              .and(target(nameMatching("delete|renameTo"))))
          .because("files are removed and moved through directory handles, in the file-system"
              + " layer (fs.Removal, fs.Rename, fs.Walk), never by a path resolved again");

  /**
   * Packages import one another one way: a cycle means two concerns that cannot be read, tested
   * or changed apart (jdeps over the jar says the same).
   */
  @ArchTest
  static final ArchRule noPackageCycles =
      slices().matching("io.beamsave.(**)").should().beFreeOfCycles();

  /** The building blocks never reach up into the pipelines and the command line built on them. */
  @ArchTest
  static final ArchRule transformsStandBelowPipelines =
      noClasses().that().resideInAPackage("io.beamsave.transforms..")
          .should().dependOnClassesThat().resideInAPackage("io.beamsave.pipelines..")
          .because("the transforms module is what the pipelines are made of");

  /**
   * Object storage's SDK is one backend's business: the rest of the code knows a store by its
   * contract, so that another backend is one package more, not changes everywhere.
   */
  @ArchTest
  static final ArchRule onlyTheStoreKnowsTheSdk =
      noClasses().that().resideOutsideOfPackage("io.beamsave.transforms.store..")
          .should().dependOnClassesThat().resideInAPackage("software.amazon.awssdk..")
          .because("only the store packages know S3's SDK");

  /**
   * The core is plain Java: codecs, the format, encryption, files, selection, planning, stores,
   * the walk.
   */
  @ArchTest
  static final ArchRule theCoreHoldsNoBeam =
      noClasses().that().resideInAnyPackage("io.beamsave.transforms.codec..",
              "io.beamsave.transforms.image..", "io.beamsave.transforms.crypt..",
              "io.beamsave.transforms.format..", "io.beamsave.transforms.fs..",
              "io.beamsave.transforms.select..", "io.beamsave.transforms.shard..",
              "io.beamsave.transforms.store..", "io.beamsave.transforms.walk..")
          .should().dependOnClassesThat().resideInAPackage("org.apache.beam..")
          .because("the core is tested and used without a pipeline");

  /**
   * A command maps its options to a request and prints what the run returns: the save and the
   * restore are each entered by one run ({@code Save.run}, {@code Restore.run}), never by their
   * pipelines from the command line.
   */
  @ArchTest
  static final ArchRule commandsEnterSaveAndRestoreByTheirRuns =
      noClasses().that().resideInAPackage("io.beamsave.pipelines.cli..")
          .should().dependOnClassesThat(JavaClass.Predicates.simpleNameEndingWith("Pipeline")
              .and(JavaClass.Predicates.resideInAnyPackage("io.beamsave.pipelines.save..",
                  "io.beamsave.pipelines.restore..")))
          .orShould().callMethod(io.beamsave.pipelines.save.SaveSpecs.class, "of",
              java.util.List.class, String.class, String.class,
              io.beamsave.transforms.store.S3Settings.class,
              io.beamsave.pipelines.runner.Workers.class,
              io.beamsave.transforms.transfer.ImageUpload.Options.class,
              io.beamsave.transforms.run.RunId.class)
          .because("commands build requests and call one run");

  /**
   * A location is told apart once, where an operator's text becomes a {@code store.Location}:
   * beyond the store packages, only the factories of what writes and reads images ({@code
   * sink}, {@code transfer}, {@code read.ImageSources}) parse object names or open a bucket;
   * everything else asks the location (its parent, its store, whether it is there).
   */
  @ArchTest
  static final ArchRule locationsAreToldApartOnce =
      noClasses().that().resideOutsideOfPackages("io.beamsave.transforms.store..",
              "io.beamsave.transforms.sink..", "io.beamsave.transforms.transfer..")
          .and().doNotHaveFullyQualifiedName("io.beamsave.transforms.read.ImageSources")
          .should().callMethod(io.beamsave.transforms.store.Location.class, "inStore",
              String.class)
          .orShould().callMethodWhere(target(owner(JavaClass.Predicates.equivalentTo(
                  io.beamsave.transforms.store.ObjectUri.class)))
              .and(target(nameMatching("parse"))))
          .orShould().callMethodWhere(target(owner(JavaClass.Predicates.equivalentTo(
                  io.beamsave.transforms.store.Stores.class)))
              .and(target(nameMatching("open|bucketOf"))))
          .orShould().callConstructorWhere(target(owner(JavaClass.Predicates.equivalentTo(
                  io.beamsave.transforms.store.ObjectUri.class))))
          .because("Location.of tells a path from an object once; callers ask the location");

  /**
   * Beyond the store packages, nothing asks which kind a location is: it asks what it needs (its
   * store, a path on this host where there is one, whether the store copies within itself, its
   * smallest part, a lease). Where images are written and read ({@code sink}, {@code transfer},
   * {@code read.ImageSources}) a backend is chosen; and what a directory and a bucket hold
   * besides images differs in kind ({@code locks.Leftovers}: partial files, locks, staging and
   * snapshots, or uploads and their claims; {@code stored.StoredImages}: an image being written
   * is told by its partial file, or by its upload's state).
   */
  @ArchTest
  static final ArchRule nothingElseBranchesOnTheKindOfLocation =
      noClasses().that().resideOutsideOfPackages("io.beamsave.transforms.store..",
              "io.beamsave.transforms.sink..", "io.beamsave.transforms.transfer..")
          .and().doNotHaveFullyQualifiedName("io.beamsave.transforms.read.ImageSources")
          .and().doNotHaveFullyQualifiedName("io.beamsave.pipelines.locks.Leftovers")
          .and().doNotHaveFullyQualifiedName("io.beamsave.pipelines.stored.StoredImages")
          .should().callMethod(io.beamsave.transforms.store.Location.class, "isInStore")
          .orShould().callMethod(io.beamsave.transforms.store.Location.class, "match",
              java.util.function.Function.class, java.util.function.Function.class)
          .orShould().dependOnClassesThat().belongToAnyOf(
              io.beamsave.transforms.store.Location.Local.class,
              io.beamsave.transforms.store.Location.InStore.class,
              io.beamsave.transforms.store.ObjectUri.class)
          .because("what differs between a directory and a bucket is answered by the location"
              + " and its store");

  /** One run, one id: minted where a run begins, never by what the run calls. */
  @ArchTest
  static final ArchRule runIdsAreMintedWhereRunsBegin =
      noClasses().that().resideOutsideOfPackages("io.beamsave.pipelines.save..",
              "io.beamsave.pipelines.consolidate..", "io.beamsave.pipelines.cli..")
          .and().doNotHaveFullyQualifiedName("io.beamsave.transforms.run.RunId")
          .should().callMethod(io.beamsave.transforms.run.RunId.class, "mint")
          .because("a run's staging, locks, lease, snapshots, hooks and job share its one id");

  /**
   * Process-wide state that may change, each with its reason to be process-wide. A run's state
   * is the run's ({@code run.RunState}); data reaches the workers through the pipeline. A new
   * mutable static must be argued for here, and in docs/architecture.md ("Process-wide state").
   */
  static final java.util.Map<String, String> MUTABLE_STATICS = java.util.Map.ofEntries(
      java.util.Map.entry("io.beamsave.transforms.run.RunState.RUNS",
          "each run's state in this JVM, by its id: stop flags, writers' monitors, live progress"),
      java.util.Map.entry("io.beamsave.transforms.run.RunState.LAST_SWEEP",
          "when the runs a TaskManager never heard end were last swept"),
      java.util.Map.entry("io.beamsave.transforms.run.RunState.CLEANUP_SEQUENCE",
          "the order of the runs' cleanups at an interrupt"),
      java.util.Map.entry("io.beamsave.transforms.store.S3Endpoint.ENDPOINTS",
          "one SDK client and connection pool per endpoint, for the JVM's life"),
      java.util.Map.entry("io.beamsave.transforms.crypt.Argon2.DERIVED",
          "the last keys derived from passwords: Argon2id costs a second each"),
      java.util.Map.entry("io.beamsave.transforms.fs.Accounts.USERS",
          "names of users as the C library gave them"),
      java.util.Map.entry("io.beamsave.transforms.fs.Accounts.GROUPS",
          "names of groups as the C library gave them"),
      java.util.Map.entry("io.beamsave.transforms.fs.Accounts.UIDS",
          "users of names as the C library gave them"),
      java.util.Map.entry("io.beamsave.transforms.fs.Accounts.GIDS",
          "groups of names as the C library gave them"),
      java.util.Map.entry("io.beamsave.transforms.image.CatalogWalk.READER",
          "the daemon threads that read catalog pages ahead"),
      java.util.Map.entry("io.beamsave.transforms.image.ImageWriter.FLUSHER",
          "the daemon thread that flushes partial images"),
      java.util.Map.entry("io.beamsave.transforms.consolidate.ConsolidateShards$Counted.READ",
          "the bytes a worker thread read, across its tasks"),
      java.util.Map.entry("io.beamsave.pipelines.runner.Interrupts.signal",
          "the signal the process received"),
      java.util.Map.entry("io.beamsave.pipelines.runner.ProgressOutput.drawing",
          "the progress bar on the terminal, which is the process's"),
      java.util.Map.entry("io.beamsave.transforms.fs.Xattrs.listAt",
          "whether the kernel has listxattrat, found once"),
      java.util.Map.entry("io.beamsave.pipelines.locks.Leases.hostId",
          "this host's boot id, read once"),
      java.util.Map.entry("io.beamsave.pipelines.cli.BeamsaveCommand.SUBCOMMANDS",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.postgres.PostgresBackup.LATE_READ",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.postgres.PostgresBackup.LEFT_OUT",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.postgres.PostgresSave.LEFT_OUT",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.postgres.PostgresSave.NEEDED",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.runner.BeamOptions.FLINK_OPTIONS",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.runner.Warmup.PIPELINE_COMMANDS",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.transforms.codec.Codecs.DTACPR",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.transforms.store.S3Failure.RETRYABLE_CODES",
          "immutable (List.of, Set.of, Map.of), built once"),
      java.util.Map.entry("io.beamsave.pipelines.save.SaveReport.STAGES",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.codec.AutoCodec.ZSTD_LADDER",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.crypt.ImageKey.SHARD",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.format.ImageFormat.CATALOG_MAGIC",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.format.ImageFormat.MAGIC",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.format.ImageFormat.TRAILER_MAGIC",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.fs.Handle.EMPTY",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.read.RestoreTarget.ACL_ACCESS",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.read.RestoreTarget.ACL_DEFAULT",
          "a constant array its package reads and never writes"),
      java.util.Map.entry("io.beamsave.transforms.walk.CacheDirTag.NAME",
          "a constant array its package reads and never writes"));

  @ArchTest
  static final ArchRule mutableStaticsAreOnTheList =
      com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields()
          .that().areStatic()
          .should(new com.tngtech.archunit.lang.ArchCondition<com.tngtech.archunit.core.domain
              .JavaField>("be final and immutable, or on the list of process-wide state") {
            @Override
            public void check(com.tngtech.archunit.core.domain.JavaField f,
                com.tngtech.archunit.lang.ConditionEvents events) {
              String name = f.getOwner().getName() + "." + f.getName();
              if (mayChange(f) && !MUTABLE_STATICS.containsKey(name)
                  && !f.getName().startsWith("$")) {
                events.add(com.tngtech.archunit.lang.SimpleConditionEvent.violated(f,
                    name + " is process-wide state that may change (" + f.getRawType().getName()
                        + "), not on the list"));
              }
            }
          });

  /**
   * Whether a static field's value may change: not final, or of a type whose contents may (by
   * name: the JDK's classes are not imported, so their hierarchy is not known). A private array
   * is a constant its class keeps to itself; one it shares could be written by anyone.
   */
  static boolean mayChange(com.tngtech.archunit.core.domain.JavaField f) {
    java.util.Set<com.tngtech.archunit.core.domain.JavaModifier> m = f.getModifiers();
    if (!m.contains(com.tngtech.archunit.core.domain.JavaModifier.FINAL)) {
      return true;
    }
    com.tngtech.archunit.core.domain.JavaClass t = f.getRawType();
    if (t.isArray()) {
      return !m.contains(com.tngtech.archunit.core.domain.JavaModifier.PRIVATE);
    }
    String n = t.getName();
    return n.matches("java\\.util\\.(\\w*(Map|Set|List|Queue|Deque)|Collection)")
        || n.startsWith("java.util.concurrent.") || n.equals("java.lang.ThreadLocal");
  }
}
