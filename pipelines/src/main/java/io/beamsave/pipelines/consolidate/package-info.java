/**
 * The consolidate pipeline: folds an incremental image and the images it references into one
 * self-contained image, without reading the library.
 */
package io.beamsave.pipelines.consolidate;
