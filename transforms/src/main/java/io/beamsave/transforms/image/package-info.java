/**
 * The save image format (docs/image-format.md): its constants, the block encoding, the
 * catalog, and the writer and reader. Plain Java, no Beam imports, so the format can be read
 * and tested on its own.
 */
package io.beamsave.transforms.image;
