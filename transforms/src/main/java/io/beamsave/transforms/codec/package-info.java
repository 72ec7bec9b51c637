/**
 * Block codecs: the {@link io.beamsave.transforms.codec.Codec} contract, one small class per
 * algorithm, and {@link io.beamsave.transforms.codec.Codecs}, the registry that parses codec
 * specs such as {@code zstd:3} and the IBM i DTACPR names. No Beam imports here.
 */
package io.beamsave.transforms.codec;
