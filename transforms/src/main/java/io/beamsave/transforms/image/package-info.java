/**
 * The save image as a whole (docs/image-format.md): the header and the trailer, the catalog's
 * bytes stored as blocks after the shards, and the writer and readers that put the two together
 * ({@link io.beamsave.transforms.image.ImageWriter}, {@link
 * io.beamsave.transforms.image.ImageReader}, {@link io.beamsave.transforms.image.ShardReader}),
 * built on the blocks of {@code image.block} and the catalog of {@code image.catalog}. Plain
 * Java, no Beam imports, so the format can be read and tested on its own.
 */
package io.beamsave.transforms.image;
