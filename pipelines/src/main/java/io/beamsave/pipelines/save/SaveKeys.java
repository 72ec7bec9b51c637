package io.beamsave.pipelines.save;

import io.beamsave.transforms.crypt.ImageKey;
import io.beamsave.transforms.crypt.Recipient;
import io.beamsave.transforms.format.ImageId;
import io.beamsave.transforms.image.catalog.Catalog;
import io.beamsave.transforms.save.SaveSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * The key of each image an encrypted save writes: a data key of its own per image, wrapped for
 * every recipient, in a header that also records the image's id and lineage, written before
 * the first shard. Each library's sink carries its key to the workers.
 */
public final class SaveKeys {
  private SaveKeys() {}

  /**
   * {@code spec} with each library's image encrypted for {@code recipients} (as it is if there
   * are none), referencing at most its base in {@code bases} and the images that one references.
   */
  static SaveSpec apply(SaveSpec spec, List<Recipient> recipients, BasePlan bases) {
    if (recipients.isEmpty()) {
      return spec;
    }
    // When the run began, as the image's name says it ({utc}) and a plain image records it.
    long created = spec.startedMillis() > 0 ? spec.startedMillis() : System.currentTimeMillis();
    for (SaveSpec.Library lib : spec.libraries().values()) {
      Catalog base = bases.catalog(lib.name());
      // What the image may reference: its base, and the images its base references.
      List<ImageId> mayReference = new ArrayList<>();
      if (base != null) {
        mayReference.add(base.id());
        base.bases().forEach(b -> mayReference.add(b.id()));
      }
      ImageKey key = ImageKey.create(ImageId.random(), created,
          base == null ? 0 : base.depth() + 1, null, mayReference, recipients);
      spec = spec.withSink(lib.name(), lib.sink().encryptedWith(key));
    }
    return spec;
  }
}
