/**
 * Where images go: the one {@link io.beamsave.transforms.sink.ImageSink} contract, chosen once
 * when a save is planned, with a sink for a local (or shared) file and one for object storage.
 */
package io.beamsave.transforms.sink;
