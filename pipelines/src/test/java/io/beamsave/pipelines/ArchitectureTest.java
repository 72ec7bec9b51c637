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

  /** The core is plain Java: codecs, the format, encryption, files, selection, planning, stores. */
  @ArchTest
  static final ArchRule theCoreHoldsNoBeam =
      noClasses().that().resideInAnyPackage("io.beamsave.transforms.codec..",
              "io.beamsave.transforms.image..", "io.beamsave.transforms.crypt..",
              "io.beamsave.transforms.format..", "io.beamsave.transforms.fs..",
              "io.beamsave.transforms.select..", "io.beamsave.transforms.shard..",
              "io.beamsave.transforms.store..")
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

  /** One run, one id: minted where a run begins, never by what the run calls. */
  @ArchTest
  static final ArchRule runIdsAreMintedWhereRunsBegin =
      noClasses().that().resideOutsideOfPackages("io.beamsave.pipelines.save..",
              "io.beamsave.pipelines.consolidate..", "io.beamsave.pipelines.cli..")
          .and().doNotHaveFullyQualifiedName("io.beamsave.transforms.run.RunId")
          .should().callMethod(io.beamsave.transforms.run.RunId.class, "mint")
          .because("a run's staging, locks, lease, snapshots, hooks and job share its one id");
}
