/**
 * The store contract ({@link io.beamsave.transforms.store.Store}: put, get by range, list,
 * delete, multipart and conditional completion) and its backends, a directory and
 * S3-compatible object storage, with the wrappers that every backend can wear: retries and a
 * link throttle. Like restic's backends, a store knows keys and bytes, not images.
 */
package io.beamsave.transforms.store;
