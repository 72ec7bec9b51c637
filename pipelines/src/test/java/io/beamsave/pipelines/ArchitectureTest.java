package io.beamsave.pipelines;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

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
}
