/**
 * Images where they are kept, as the commands find them: the images under a directory or
 * {@code s3://} prefix ({@link io.beamsave.pipelines.stored.StoredImages}) and where each stands
 * in its chain ({@link io.beamsave.pipelines.stored.Lineage}), one image opened wherever it is,
 * downloaded first when stored with a transfer codec ({@link
 * io.beamsave.pipelines.stored.ImageRef}), and the run ledger kept beside them ({@link
 * io.beamsave.pipelines.stored.Ledger}).
 */
package io.beamsave.pipelines.stored;
