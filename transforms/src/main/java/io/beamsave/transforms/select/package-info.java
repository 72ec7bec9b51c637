/**
 * Which files a save or restore takes: {@code --exclude} patterns and their glob language
 * ({@link io.beamsave.transforms.select.Glob}, {@link io.beamsave.transforms.select.Excludes})
 * and {@code --files-from} lists ({@link io.beamsave.transforms.select.FilesFrom}). Plain Java:
 * the rules are decided here once and carried into the pipelines as values.
 */
package io.beamsave.transforms.select;
