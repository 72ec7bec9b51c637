/**
 * The blocks every part of an image is stored as (docs/image-format.md, "Blocks"): a header
 * with codec, lengths and CRC32C, then the payload, sealed into a frame in an encrypted image.
 * {@link io.beamsave.transforms.image.block.BlockEncoder} writes them, into a {@link
 * io.beamsave.transforms.image.block.BlockBuffer} when a run of them is handed on whole, and
 * {@link io.beamsave.transforms.image.block.BlockDecoder} checks and decodes them; data that
 * does not read back as saved is a {@link
 * io.beamsave.transforms.image.block.DamagedDataException}. Knows nothing of shards or the
 * catalog. Plain Java, no Beam imports.
 */
package io.beamsave.transforms.image.block;
