package io.beamsave.transforms.walk;

import io.beamsave.transforms.image.catalog.Entry;
import io.beamsave.transforms.image.catalog.PathBytes;

/**
 * A directory listed: its children in order, and the handle they are opened from; the walk
 * hands them on from {@link #next}, and lists those coming next ahead from {@link #nextAhead}.
 */
final class Listed {
  /**
   * A child of a listed directory: its name, its entry, whether all of it is saved, and for a
   * regular file the device and link count that say whether other names of it may come.
   */
  record Child(byte[] name, Entry entry, boolean selected, long device, int links) {}

  final PathBytes rel;
  final int depth;
  /** Null when the directory could not be opened. */
  final SharedDir self;
  final Child[] children;
  /** Whether the directory could not be wholly listed. */
  final boolean flagged;
  /** The next child to hand on, and the next whose listing may begin ahead. */
  int next;
  int nextAhead;

  Listed(PathBytes rel, int depth, SharedDir self, Child[] children, boolean flagged) {
    this.rel = rel;
    this.depth = depth;
    this.self = self;
    this.children = children;
    this.flagged = flagged;
  }
}
