/**
 * Reusable building blocks of beamsave with no command line: codecs, shard planning, the image
 * format, and the Beam transforms built from them.
 */
package io.beamsave.transforms;
