/**
 * {@code save --postgres}: a PostgreSQL cluster's data directory saved while it runs, from a
 * file-system snapshot, which PostgreSQL recovers from as from a crash.
 */
package io.beamsave.pipelines.postgres;
