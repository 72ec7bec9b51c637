/**
 * Folding an incremental chain into one full image in the store: the plan of which shards are
 * copied whole and which are rebuilt ({@link io.beamsave.transforms.consolidate.ConsolidatePlan}),
 * the transform that rebuilds them and the one that writes the new image's catalog.
 */
package io.beamsave.transforms.consolidate;
