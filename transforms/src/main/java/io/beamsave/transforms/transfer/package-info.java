/**
 * Moving whole images between a file and a store: multipart, parallel and resumable uploads
 * ({@link io.beamsave.transforms.transfer.ImageUpload}), downloads, and compression in
 * transfer ({@link io.beamsave.transforms.transfer.TransferCodec}). Built on the {@code store}
 * contract, which knows nothing of it.
 */
package io.beamsave.transforms.transfer;
