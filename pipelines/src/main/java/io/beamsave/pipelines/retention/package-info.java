/**
 * Retention: which saved images to keep ({@link io.beamsave.pipelines.retention.Retention}'s
 * rules per series, and {@link io.beamsave.pipelines.retention.PrunePlan}, which adds the bases
 * kept images need and lets a consolidated image stand for its chain), the images stored under a
 * directory or {@code s3://} prefix ({@link io.beamsave.pipelines.retention.StoredImages}) and
 * where each stands in its chain ({@link io.beamsave.pipelines.retention.Lineage}), for {@code
 * beamsave prune} and {@code beamsave images}.
 */
package io.beamsave.pipelines.retention;
