package io.beamsave.transforms.sink;

import io.beamsave.transforms.store.Store;
import io.beamsave.transforms.store.StoreException;
import io.beamsave.transforms.store.UploadClaim;
import java.util.ArrayList;
import java.util.List;

/**
 * What a {@link StoreImageSink}'s run leaves in the store beside its image, and its removal once
 * the image is complete or the run is given up: the multipart upload, aborted where it was not
 * completed; the upload's {@link UploadClaim}; the small shards staged under the run's prefix.
 * Each is removed once, and what cannot be is said: {@code cleanup} removes it later.
 */
final class UploadCleanup {
  private final StoreImageSink sink;
  private final Store store;
  private final String key;

  /** The cleanup of {@code sink}'s run, through {@code store}. */
  UploadCleanup(StoreImageSink sink, Store store) {
    this.sink = sink;
    this.store = store;
    this.key = sink.uri().key();
  }

  /** Once the upload is completed: its claim and the staged shards go. */
  void afterCompleted() {
    dropClaim();
    warnUnremoved();
  }

  /**
   * Once the run is given up: the upload aborted, then its claim and the staged shards removed;
   * returns what is left, one line each.
   */
  List<String> discard() {
    List<String> left = new ArrayList<>();
    if (!abortUpload()) {
      // Its claim stays: what lets cleanup abort it.
      left.add("the multipart upload of " + sink.location());
    } else if (sink.uploadId() != null) {
      dropClaim();
    }
    if (!removeStaged()) {
      left.add("any staged shards under " + store.where(sink.stagingPrefix()));
    }
    return left;
  }

  /**
   * Removes the upload's claim, once the upload is completed or aborted. One left behind names
   * an upload that is no more: {@code cleanup} removes it, and it ties nothing to beamsave.
   */
  private void dropClaim() {
    try {
      store.delete(UploadClaim.nameFor(key, sink.uploadId()));
    } catch (RuntimeException e) {
      // As above.
    }
  }

  /** Removes the run's staged shards; returns whether it could. */
  private boolean removeStaged() {
    try {
      for (Store.Item staged : store.list(sink.stagingPrefix())) {
        store.delete(staged.key());
      }
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void warnUnremoved() {
    if (!removeStaged()) {
      System.err.println("beamsave: warning: cannot remove the staged shards under "
          + store.where(sink.stagingPrefix()) + "; 'beamsave cleanup' removes them");
    }
  }

  /**
   * Aborts the run's upload; one already completed (an image made whole) is not affected.
   * Returns whether no upload is left.
   */
  private boolean abortUpload() {
    if (sink.uploadId() == null) {
      return true;
    }
    try {
      store.abort(key, sink.uploadId());
      return true;
    } catch (StoreException e) {
      return e.kind() == StoreException.Kind.NOT_FOUND;
    }
  }
}
