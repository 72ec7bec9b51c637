/**
 * S3-compatible object storage: the client settings and retry policy, image upload and
 * download (multipart, parallel, resumable, optionally compressed in transfer) and ranged
 * reads of stored images.
 */
package io.beamsave.transforms.store;
