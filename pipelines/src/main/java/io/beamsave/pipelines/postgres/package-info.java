/**
 * {@code save --postgres}: a PostgreSQL cluster's data directory saved while it runs, from a
 * file-system snapshot, which PostgreSQL recovers from as from a crash, or in its backup mode,
 * with the backup_label and the WAL it recovers from in the image.
 */
package io.beamsave.pipelines.postgres;
