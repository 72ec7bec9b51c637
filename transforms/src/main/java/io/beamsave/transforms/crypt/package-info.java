/**
 * Encryption of images (docs/security.md, docs/image-format.md "Encrypted images"): the
 * envelope in an encrypted image's header (a random data key per image, wrapped for each
 * recipient: a password through Argon2id, a raw key file, or an X25519 public key), the keys
 * derived from the data key, and the AES-256-GCM sealing of blocks. Plain Java, no Beam imports.
 * Nothing here prints, logs or puts a secret into a message or a {@code toString}.
 */
package io.beamsave.transforms.crypt;
