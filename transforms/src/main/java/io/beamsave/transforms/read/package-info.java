/**
 * Reading saved images: resolving an incremental chain to the images that hold each file
 * ({@link io.beamsave.transforms.read.ImageChain}), opening images wherever they are stored
 * ({@link io.beamsave.transforms.read.ImageSources}), and the Beam transform that reads
 * shards in parallel for restore and verify ({@link io.beamsave.transforms.read.ReadShards}).
 */
package io.beamsave.transforms.read;
