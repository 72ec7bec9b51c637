/**
 * What every layer of the image format agrees on and nothing else: the magic numbers, versions
 * and sizes ({@link io.beamsave.transforms.format.ImageFormat}), an image's identity ({@link
 * io.beamsave.transforms.format.ImageId}) and the error a damaged image raises ({@link
 * io.beamsave.transforms.format.ImageException}). It sits below both {@code image} and {@code
 * crypt}, which build on it and not on each other's internals: sealing blocks needs the id,
 * not the catalog.
 */
package io.beamsave.transforms.format;
