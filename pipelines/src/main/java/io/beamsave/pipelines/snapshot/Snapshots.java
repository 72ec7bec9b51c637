package io.beamsave.pipelines.snapshot;

import io.beamsave.pipelines.runner.Interrupts;
import io.beamsave.transforms.BeamsaveException;
import io.beamsave.transforms.run.RunId;
import io.beamsave.transforms.save.SaveSpec;
import io.beamsave.transforms.select.Excludes;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The snapshots of one save: one per subvolume its libraries are on (libraries on one share
 * it, and so one instant), removed when the save ends, also when it fails or is interrupted.
 */
public final class Snapshots implements AutoCloseable {
  private final List<Snapshot> taken;
  private final Interrupts.Registration onInterrupt;
  private final Consumer<String> warning;

  private Snapshots(List<Snapshot> taken, Consumer<String> warning) {
    this.taken = taken;
    this.warning = warning;
    this.onInterrupt = Interrupts.onInterrupt("snapshots", this::removeAll);
  }

  /**
   * Takes the snapshots for {@code spec}'s libraries, named by {@code run}, and returns them,
   * with what {@code note} said of each; on failure, removes those already taken.
   */
  public static Snapshots take(Snapshot.Kind kind, SaveSpec spec, boolean oneFileSystem,
      RunId run, Consumer<String> note, Consumer<String> warning) {
    List<Snapshot> taken = new ArrayList<>();
    Snapshots all = new Snapshots(taken, warning);
    try {
      for (SaveSpec.Library lib : spec.libraries().values()) {
        Snapshot shared = holder(taken, lib);
        if (shared != null) {
          note.accept(lib.name() + ": saving from the snapshot taken for "
              + Snapshot.shown(shared.library()) + ", on the same subvolume");
          continue;
        }
        String name = taken.isEmpty() ? run.value() : run.value() + "-" + (taken.size() + 1);
        Snapshot s = Snapshot.take(kind, lib.rootPath(), oneFileSystem, name);
        synchronized (taken) {
          taken.add(s);
        }
        note.accept(lib.name() + ": saving from a " + s.kind() + " snapshot taken at "
            + s.taken() + (kind == Snapshot.Kind.AUTO ? " (auto: the library is on btrfs)" : ""));
      }
      return all;
    } catch (RuntimeException e) {
      all.close();
      throw e;
    }
  }

  /** {@code spec} with each library read from its snapshot, which its image notes. */
  public SaveSpec applyTo(SaveSpec spec) {
    SaveSpec out = spec;
    List<String> own = new ArrayList<>();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      Snapshot s = holder(taken, lib);
      java.util.Map<String, String> notes = new java.util.LinkedHashMap<>(lib.notes());
      notes.putAll(s.notes());
      out = out.withReadFrom(lib.name(), s.view(lib.rootPath()).toUri().toString(), notes);
      if (s.place().startsWith(lib.rootPath())) {
        // The snapshots' directory lies in the library (the subvolume's top): not the library's.
        own.add("/" + Excludes.quote(lib.rootPath().relativize(s.place()).toString()) + "/");
      }
    }
    return own.isEmpty() ? out : out.withExcludes(out.excludes().withOwn(own));
  }

  private static Snapshot holder(List<Snapshot> taken, SaveSpec.Library lib) {
    for (Snapshot s : taken) {
      if (s.holds(lib.rootPath())) {
        return s;
      }
    }
    return null;
  }

  /** Removes every snapshot; what cannot be removed is a warning naming it and the cure. */
  @Override
  public void close() {
    onInterrupt.close();
    removeAll();
  }

  private void removeAll() {
    List<Snapshot> now;
    synchronized (taken) {
      now = List.copyOf(taken);
    }
    for (Snapshot s : now) {
      try {
        s.close();
      } catch (BeamsaveException e) {
        warning.accept(e.getMessage() + "; remove it with: beamsave cleanup --at "
            + Snapshot.shown(s.library()) + " --yes");
      }
    }
  }
}
