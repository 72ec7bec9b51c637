/**
 * The Beam transforms of the save path ({@link io.beamsave.transforms.io.ListLibrary}, {@link
 * io.beamsave.transforms.io.PlanShards}, {@link io.beamsave.transforms.io.CompressShards},
 * {@link io.beamsave.transforms.io.AssembleImage}) and of the read path ({@link
 * io.beamsave.transforms.io.ReadShards}), the small metadata elements that flow between them,
 * and their coders. File bytes never enter a PCollection: workers append compressed shards
 * to the partial image themselves.
 */
package io.beamsave.transforms.io;
