package io.beamsave.pipelines.restore;

import java.nio.file.Path;
import java.util.List;

/**
 * What a restore is asked to do, as the operator said it; {@link RestorePipeline#run} does it.
 *
 * @param target the directory to restore into, as given (links in it are followed, once)
 * @param includes the globs selecting what to restore; empty: everything
 * @param overwrite restore into a target that holds something, replacing what is in the way
 * @param delete afterwards remove from the target what the image does not hold
 * @param noPreserveRoot let {@code delete} work in {@code /} or a mount root reached by a link
 * @param policy what the image is granted
 * @param skipDamaged restore every file whose blocks check, and report the others
 * @param use where the reads run
 */
public record RestoreRequest(
    Path target,
    List<String> includes,
    boolean overwrite,
    boolean delete,
    boolean noPreserveRoot,
    RestorePolicy policy,
    boolean skipDamaged,
    ReadRun.PipelineUse use) {

  public RestoreRequest {
    includes = includes == null ? List.of() : List.copyOf(includes);
    policy = policy == null ? RestorePolicy.SAFE : policy;
    use = use == null ? ReadRun.PipelineUse.AUTO : use;
    if (delete && !includes.isEmpty()) {
      throw new IllegalArgumentException("--delete makes the target the whole image's tree,"
          + " which --include does not restore; drop one of them");
    }
  }

  /** Everything into {@code target}, which must be empty; nothing granted. */
  public static RestoreRequest of(Path target) {
    return new RestoreRequest(target, List.of(), false, false, false, RestorePolicy.SAFE, false,
        ReadRun.PipelineUse.AUTO);
  }

  public RestoreRequest withIncludes(List<String> globs) {
    return new RestoreRequest(target, globs, overwrite, delete, noPreserveRoot, policy,
        skipDamaged, use);
  }

  public RestoreRequest withOverwrite(boolean on) {
    return new RestoreRequest(target, includes, on, delete, noPreserveRoot, policy, skipDamaged,
        use);
  }

  public RestoreRequest withDelete(boolean on, boolean evenAtRoot) {
    return new RestoreRequest(target, includes, overwrite, on, evenAtRoot, policy, skipDamaged,
        use);
  }

  public RestoreRequest withPolicy(RestorePolicy p) {
    return new RestoreRequest(target, includes, overwrite, delete, noPreserveRoot, p,
        skipDamaged, use);
  }

  public RestoreRequest withSkipDamaged(boolean on) {
    return new RestoreRequest(target, includes, overwrite, delete, noPreserveRoot, policy, on,
        use);
  }

  public RestoreRequest withUse(ReadRun.PipelineUse u) {
    return new RestoreRequest(target, includes, overwrite, delete, noPreserveRoot, policy,
        skipDamaged, u);
  }

  /** Whether everything is restored (no {@code --include}). */
  public boolean whole() {
    return includes.isEmpty();
  }
}
