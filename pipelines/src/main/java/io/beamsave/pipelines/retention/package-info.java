/**
 * Retention: which saved images to keep ({@link io.beamsave.pipelines.retention.Retention}'s
 * rules per series, and {@link io.beamsave.pipelines.retention.PrunePlan}, which adds the bases
 * kept images need and lets a consolidated image stand for its chain), for {@code beamsave
 * prune}.
 */
package io.beamsave.pipelines.retention;
