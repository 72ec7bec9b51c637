package io.beamsave.pipelines.cli;

import io.beamsave.pipelines.save.SaveRequest;
import io.beamsave.transforms.select.ExcludeFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The options of {@code save} that choose which files of the libraries are saved. */
final class SelectArgs {
  @Option(
      names = "--exclude",
      paramLabel = "GLOB",
      description =
          "Leave out entries whose path in the library matches GLOB, and everything under a"
              + " directory that does; repeat for several. As in .gitignore, a GLOB without a '/'"
              + " matches at any depth ('*.tmp', 'node_modules'), one with a '/' from the"
              + " library's top ('/build', 'var/log/*.gz'), and a trailing '/' directories only"
              + " ('cache/'); * stays within a name, ** crosses directories, and a byte of a name"
              + " that is not UTF-8 is written \\xNN. beamsave's own files (images, partial"
              + " images, locks, the ledger, staging) are always left out when they lie inside"
              + " the library.")
  List<String> excludes = new ArrayList<>();

  @Option(
      names = "--exclude-file",
      paramLabel = "FILE",
      description =
          "Read --exclude patterns from FILE, one per line; blank lines and lines starting with"
              + " '#' are skipped. Repeat for several files.")
  List<Path> excludeFiles = new ArrayList<>();

  @Option(
      names = "--exclude-caches",
      description =
          "Leave out the contents of directories holding a CACHEDIR.TAG file (the Cache"
              + " Directory Tagging convention; the tag file itself is kept), as tar and restic"
              + " do.")
  boolean excludeCaches;

  @Option(
      names = {"-x", "--one-file-system"},
      description =
          "Stay on the filesystem of each library's root: a directory where another is mounted"
              + " is saved empty (its mount point), as tar and restic do, with a warning naming"
              + " it; nothing beneath it is read.")
  boolean oneFileSystem;

  @Option(
      names = "--files-from",
      paramLabel = "FILE",
      description =
          "Save only the paths FILE lists ('-' reads the list from standard input), one per"
              + " line, relative to the library (to each, with several) or absolute beneath it;"
              + " blank lines and lines starting with '#' are skipped (list such a name as"
              + " './#name'), a '..' component is refused. A listed"
              + " directory brings everything under it, the directories on the way are saved as"
              + " directories, and --exclude still applies. A listed path the library lacks is"
              + " a warning naming the line, and the exit code is 3.")
  String filesFrom;

  @Option(
      names = "--from0",
      description =
          "The --files-from list is separated by NUL bytes, not lines (as 'find -print0'"
              + " writes it, and rsync's --from0 reads it), so it may name any file; no comments.")
  boolean from0;

  /** The selection, with each --exclude-file's patterns read and checked. */
  SaveRequest.Selection selection() {
    List<String> all = new ArrayList<>(excludes);
    for (Path f : excludeFiles) {
      all.addAll(ExcludeFile.read(f));
    }
    return new SaveRequest.Selection(all, excludeCaches, filesFrom, from0, oneFileSystem);
  }
}
