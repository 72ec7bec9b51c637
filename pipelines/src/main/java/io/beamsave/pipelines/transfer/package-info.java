/**
 * Moving whole images as the commands do it: uploads and downloads with progress ({@link
 * io.beamsave.pipelines.transfer.TransferProgress}) and the demo's S3 server.
 */
package io.beamsave.pipelines.transfer;
