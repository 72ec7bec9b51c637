/**
 * Retention: which saved images to keep ({@link io.beamsave.pipelines.retention.Retention}) and
 * the images stored under a directory or {@code s3://} prefix ({@link
 * io.beamsave.pipelines.retention.StoredImages}), for {@code beamsave prune}.
 */
package io.beamsave.pipelines.retention;
