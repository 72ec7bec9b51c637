/**
 * {@code save --snapshot}: a read-only file-system snapshot of each library, taken before the
 * save reads it and removed after, so that every file is saved as it was at one instant; and
 * what finds the snapshots of saves that were killed.
 */
package io.beamsave.pipelines.snapshot;
