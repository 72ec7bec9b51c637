/** The restore pipeline: an image, or the files matching some globs, back into a directory. */
package io.beamsave.pipelines.restore;
