/**
 * Images in object storage as the commands see them: resolving an {@code --image} that may be
 * an {@code s3://} object, uploads and downloads with progress, and the run ledger.
 */
package io.beamsave.pipelines.transfer;
