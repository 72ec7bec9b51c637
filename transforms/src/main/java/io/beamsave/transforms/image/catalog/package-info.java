/**
 * An image's catalog and what it holds (docs/image-format.md, "Catalog" to "Notes"): the
 * catalog ({@link io.beamsave.transforms.image.catalog.Catalog}), its entries, their extents and
 * metadata, the shards it describes ({@link io.beamsave.transforms.image.catalog.ShardInfo}),
 * paths as bytes in their order ({@link io.beamsave.transforms.image.catalog.PathOrder}), and
 * the catalog as raw bytes: cut into pages ({@link
 * io.beamsave.transforms.image.catalog.CatalogPager}) indexed by a head ({@link
 * io.beamsave.transforms.image.catalog.CatalogHead}), or one piece in older images, each decoded
 * and checked so that a crafted catalog is refused in one line. Knows nothing of blocks or of
 * where the bytes lie; {@code image} stores them as blocks and reads them back. Plain Java, no
 * Beam imports.
 */
package io.beamsave.transforms.image.catalog;
