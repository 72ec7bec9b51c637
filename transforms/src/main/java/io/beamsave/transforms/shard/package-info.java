/**
 * Shard planning: how a library's files are cut into shards of about {@code --shard-size} raw
 * bytes. Plain Java and deterministic; the Beam transform that applies it is {@code save.PlanShards}.
 */
package io.beamsave.transforms.shard;
