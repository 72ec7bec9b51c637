/**
 * The save image format (docs/image-format.md): the catalog, and the writer and reader,
 * built on the blocks of {@code image.block}. Plain Java, no Beam imports, so the format can be read
 * and tested on its own.
 */
package io.beamsave.transforms.image;
