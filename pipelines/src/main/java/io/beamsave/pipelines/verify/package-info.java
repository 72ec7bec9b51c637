/** The verify pipeline: reads a whole image and checks every block and digest, writing nothing. */
package io.beamsave.pipelines.verify;
