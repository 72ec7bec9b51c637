package io.beamsave.transforms.image;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * A second process appending to a partial image, as a TaskManager beside another does: appends
 * {@code count} shards filled with byte {@code tag} and prints "offset length" for each.
 */
public final class AppendShardsProcess {
  private AppendShardsProcess() {}

  public static void main(String[] args) throws Exception {
    Path image = Path.of(args[0]);
    byte tag = Byte.parseByte(args[1]);
    int count = Integer.parseInt(args[2]);
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < count; i++) {
      byte[] shard = new byte[ImageWriterTest.shardLength(i)];
      Arrays.fill(shard, tag);
      long offset = ImageWriter.appendShard(image, shard, shard.length);
      out.append(offset).append(' ').append(shard.length).append('\n');
    }
    System.out.print(out);
  }
}
