/**
 * Beam plumbing every pipeline shares: an impulse of elements known when the pipeline is built
 * ({@link io.beamsave.transforms.beam.Elements}) and the base of the element coders.
 */
package io.beamsave.transforms.beam;
