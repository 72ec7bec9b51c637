/** The save pipeline: libraries to save images, with the report of what it did. */
package io.beamsave.pipelines.save;
