/**
 * The Beam transforms of the save path, in the order they run: {@link
 * io.beamsave.transforms.save.ListLibrary} lists a library, {@link
 * io.beamsave.transforms.save.PlanShards} cuts the listing into shards, {@link
 * io.beamsave.transforms.save.CompressShards} compresses them into the partial image and {@link
 * io.beamsave.transforms.save.AssembleImage} writes the catalog and trailer; with the small
 * elements that flow between them and their coders. File bytes never enter a PCollection:
 * workers append compressed shards to the partial image themselves.
 */
package io.beamsave.transforms.save;
